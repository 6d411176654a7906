package plangraph_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/vmcp-dev/vmcp/plangraph"
)

// BenchmarkSVG draws the CMDB sync (8 steps, loops nested two deep) and a
// random 100-step DAG (the step limit), from layout to bytes.
func BenchmarkSVG(b *testing.B) {
	toRoot(b)
	cmdb := compileFile(b, "examples/cmdb/cmdb_sync.yaml")[0]
	dir := b.TempDir()
	path := filepath.Join(dir, "dag100.yaml")
	if err := os.WriteFile(path, []byte(bigWorkflows()["dag100"]), 0o644); err != nil {
		b.Fatal(err)
	}
	dag := compileFile(b, path)[0]
	b.Run("cmdb_sync", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := plangraph.SVG(io.Discard, cmdb, plangraph.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dag100", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := plangraph.SVG(io.Discard, dag, plangraph.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package authoring

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkCheck is one vmcp_workflow_check of a small draft: parse,
// check against the catalog, plan.
func BenchmarkCheck(b *testing.B) {
	c := &Compiler{Catalog: testCatalog(), Allowed: []string{"a"}}
	src := draft("w", "a.echo")
	b.ReportAllocs()
	for b.Loop() {
		if ch := c.Check("", src, nil); !ch.OK() {
			b.Fatal(codes(ch))
		}
	}
}

// BenchmarkSave is one vmcp_workflow_save with replace into the memory
// store, serving included (a fake engine and server), with 20 other
// authored workflows served.
func BenchmarkSave(b *testing.B) {
	ctx := context.Background()
	svc := newTestService(NewMemoryStore(), &fakeServing{})
	for i := range 20 {
		if _, _, err := svc.Save(ctx, draft("other"+string(rune('a'+i)), "a.echo"), false); err != nil {
			b.Fatal(err)
		}
	}
	src := draft("w", "a.echo")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := svc.Save(ctx, src, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckHugeDraft is one vmcp_workflow_check of a draft with far
// more steps than a workflow may have (one line each). A draft past the
// parser's node limit is refused before go-yaml parses it, so the cost
// does not grow with the draft.
func BenchmarkCheckHugeDraft(b *testing.B) {
	c := &Compiler{Catalog: testCatalog(), Allowed: []string{"a"}}
	for _, n := range []int{100, 10_000, 100_000} {
		src := manySteps(n, "a.echo")
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ch := c.Check("", src, nil); n > 100 && ch.OK() {
					b.Fatal("a draft of", n, "steps checked clean")
				}
			}
		})
	}
}

// BenchmarkFileStoreSave is one save (replace) of a 20 KB source into a
// FileStore that holds n versions of the name already. A save reads the
// directory, not the older versions, so its cost does not grow with n.
func BenchmarkFileStoreSave(b *testing.B) {
	src := strings.Repeat("# a comment line of a 20 KB workflow source\n", 20<<10/44)
	for _, n := range []int{10, 1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ctx := context.Background()
			s, err := NewFileStore(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			for range n {
				if _, err := s.Save(ctx, "w", src, true); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Save(ctx, "w", src, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

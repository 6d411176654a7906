package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/tokens.golden (then paste it into "+tablePage+")")

// tablePage is the documentation page that shows the table.
const tablePage = "docs/performance.md"

// TestMain lets the test binary act as the recording proxy, as the
// program does: vmcp starts it with RecordEnv set.
func TestMain(m *testing.M) {
	if os.Getenv(RecordEnv) != "" {
		os.Exit(runProxy(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// The table docs/performance.md shows is the one the measurement prints
// today: run against the real example servers through a real vmcp,
// compared with testdata/tokens.golden, which the page must hold verbatim.
func TestTokenTable(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	results, err := MeasureAll(context.Background(), t.TempDir(), self)
	if err != nil {
		t.Fatal(err)
	}
	// What the paper claims, as behaviour: per run, one composite call
	// costs less than the agent doing the calls, and the CMDB sync makes
	// over a thousand backend calls that the agent would each write and read.
	for _, r := range results {
		c := r.Counts
		if c.Composite() >= c.Loop() {
			t.Errorf("%s: one composite call is %d bytes, the agent in the loop %d; want the call to be smaller", r.Scenario.Label, c.Composite(), c.Loop())
		}
		if c.Requests == 0 || c.Results == 0 || c.ToolList == 0 || c.Definition == 0 || c.CallResult == 0 {
			t.Errorf("%s: a part of the count is zero: %+v", r.Scenario.Label, c)
		}
	}
	if got := results[0].Counts.Calls; got != 5 {
		t.Errorf("the incident workflow made %d backend calls; want its 5 steps", got)
	}
	if got := results[1].Counts.Calls; got < 1000 {
		t.Errorf("the CMDB sync made %d backend calls; want over 1000 (38 namespaces x the kinds)", got)
	}

	var out bytes.Buffer
	WriteTables(&out, results)
	golden := filepath.Join("testdata", "tokens.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./bench/tokens -update)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("the measured table differs from %s (run go test ./bench/tokens -update, then update %s):\n got:\n%s\nwant:\n%s", golden, tablePage, out.Bytes(), want)
	}
	page, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), filepath.FromSlash(tablePage)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), string(want)) {
		t.Errorf("%s does not hold %s verbatim; paste it under \"Tokens: the paper's claim, measured\"", tablePage, golden)
	}
}

func TestNum(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4200: "-4,200"} {
		if got := num(n); got != want {
			t.Errorf("num(%d) = %q; want %q", n, got, want)
		}
	}
	if Tokens(0) != 0 || Tokens(1) != 1 || Tokens(4) != 1 || Tokens(5) != 2 {
		t.Error("Tokens does not round bytes/4 up")
	}
}

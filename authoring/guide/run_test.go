package guide

// The guide's runnable examples. A ```yaml example followed by a
// ```json run block is compiled against the test catalog and run by the
// real engine: the run block gives each backend tool's answer
// ("tools": {"backend.tool": structuredContent}; a tool not listed
// answers with its arguments), the caller's "arguments", and the run's
// "result", which must be what the run returns. "serverMaxParallel"
// runs it under that server.maxParallel (the engine's call limit) and
// checks that no more backend calls were ever in flight at once.
//
// The JMESPath function table (header "| function | example | result |")
// must list exactly the functions the engine registers
// (runtime.QueryFunctions), and each row's example is evaluated by a
// query step over the ```json query-input block, giving the row's
// result.

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/runtime"
)

// runBlock is a ```json run block and the YAML example before it.
type runBlock struct {
	line    int // of the JSON, in the guide
	example block
	spec    struct {
		Tools             map[string]any `json:"tools"`
		Arguments         map[string]any `json:"arguments"`
		Result            any            `json:"result"`
		ServerMaxParallel int            `json:"serverMaxParallel"`
	}
}

// fencedBlocks returns the guide's fenced blocks whose info string is
// info, with the guide line where each body starts.
func fencedBlocks(md, info string) (bodies []string, lines []int) {
	all := strings.Split(md, "\n")
	for i := 0; i < len(all); i++ {
		if strings.TrimSpace(all[i]) != "```"+info {
			continue
		}
		start := i + 2
		var body []string
		for i++; i < len(all) && strings.TrimSpace(all[i]) != "```"; i++ {
			body = append(body, all[i])
		}
		bodies, lines = append(bodies, strings.Join(body, "\n")), append(lines, start)
	}
	return bodies, lines
}

// runBlocks pairs each run block with the nearest YAML example above it.
func runBlocks(t *testing.T, md string) []runBlock {
	t.Helper()
	examples := yamlBlocks(t, md)
	bodies, lines := fencedBlocks(md, "json run")
	var out []runBlock
	for i, body := range bodies {
		rb := runBlock{line: lines[i]}
		if err := json.Unmarshal([]byte(body), &rb.spec); err != nil {
			t.Fatalf("guide.md:%d: the run block is not JSON: %v", rb.line, err)
		}
		found := false
		for _, ex := range examples {
			if ex.line < rb.line {
				rb.example, found = ex, true
			}
		}
		if !found || rb.example.mistake != "" {
			t.Fatalf("guide.md:%d: a run block must follow a working YAML example", rb.line)
		}
		out = append(out, rb)
	}
	return out
}

// guideBackend answers from a run block's tools and counts the calls in
// flight.
type guideBackend struct {
	tools               map[string]any
	inFlight, maxFlight atomic.Int64
	slow                bool // each call takes a few milliseconds
}

func (b *guideBackend) CallTool(ctx context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	n := b.inFlight.Add(1)
	defer b.inFlight.Add(-1)
	for m := b.maxFlight.Load(); n > m && !b.maxFlight.CompareAndSwap(m, n); m = b.maxFlight.Load() {
	}
	if b.slow {
		// Calls that last let a missing cap show: without one, the
		// loop's iterations would overlap.
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	out, ok := b.tools[call.Backend+"."+call.Tool]
	if !ok {
		out = call.Arguments
	}
	m, _ := jsonRound(out).(map[string]any)
	return &runtime.ToolResult{Structured: m}, nil
}

// jsonRound returns v as encoding/json decodes it (float64 numbers), so
// that results compare whatever Go types the engine used.
func jsonRound(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unencodable %T", v)
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// runExample compiles and runs one workflow source; it returns the
// run's output.
func runExample(t *testing.T, src string, opts compiler.Options, be *guideBackend, limit int, args map[string]any) (any, error) {
	t.Helper()
	p, diags := compiler.Compile([]compiler.Source{{Name: "guide.yaml", Src: []byte(src)}}, opts)
	if p == nil || len(diags) > 0 {
		return nil, fmt.Errorf("does not compile cleanly:%s", describe(diags))
	}
	var backend runtime.Backend = be
	if limit > 0 {
		backend = runtime.LimitCalls(be, runtime.CallLimits{Total: limit})
	}
	ropts := runtime.Options{Backend: backend}
	if opts.Tools != nil {
		ropts.Schemas = opts.Tools
	}
	e, err := runtime.New(p, ropts)
	if err != nil {
		return nil, err
	}
	name := p.Workflows[len(p.Workflows)-1].Name
	run, err := e.Run(context.Background(), name, args, runtime.RunOptions{})
	if err != nil {
		return nil, err
	}
	if run.Status != runtime.RunCompleted {
		return nil, fmt.Errorf("run %s: %v", run.Status, run.Error)
	}
	return run.Output, nil
}

// Every run block's example runs and returns the block's result.
func TestGuideExamplesRun(t *testing.T) {
	cat := guideCatalog(t)
	blocks := runBlocks(t, Markdown())
	if len(blocks) < 4 {
		t.Errorf("guide has %d run blocks; want the query recipes run (at least 4)", len(blocks))
	}
	for _, rb := range blocks {
		be := &guideBackend{tools: rb.spec.Tools, slow: rb.spec.ServerMaxParallel > 0}
		got, err := runExample(t, rb.example.src, compiler.Options{Tools: cat}, be, rb.spec.ServerMaxParallel, rb.spec.Arguments)
		if err != nil {
			t.Errorf("guide.md:%d: the example of the run block at line %d: %v", rb.example.line, rb.line, err)
			continue
		}
		if diff := cmp.Diff(jsonRound(rb.spec.Result), jsonRound(got)); diff != "" {
			t.Errorf("guide.md:%d: the run returns another result (-guide +run):\n%s", rb.line, diff)
		}
		if lim := int64(rb.spec.ServerMaxParallel); lim > 0 && be.maxFlight.Load() > lim {
			t.Errorf("guide.md:%d: %d backend calls were in flight at once; server.maxParallel %d allows %d", rb.line, be.maxFlight.Load(), lim, lim)
		}
	}
}

// queryRow is one row of a table of queries: the function it shows
// ("" in the table of traps), the expression and its result.
type queryRow struct {
	line             int
	name, expr, want string
}

var codeCellRE = regexp.MustCompile("^`+ ?(.*?) ?`+$")

// queryRows returns the rows of the tables whose header is header
// ("function | example | result", or "expression | result").
func queryRows(md string, header ...string) []queryRow {
	var rows []queryRow
	in := false
	for i, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			in = false
			continue
		}
		// A \| in a cell is a | of the expression.
		cells := strings.Split(strings.ReplaceAll(strings.Trim(line, "|"), `\|`, "\x00"), "|")
		for j := range cells {
			cells[j] = unquoteCell(strings.ReplaceAll(strings.TrimSpace(cells[j]), "\x00", "|"))
		}
		switch {
		case slices.Equal(cells, header):
			in = true
		case in && len(cells) == len(header) && !strings.HasPrefix(cells[0], "---"):
			r := queryRow{line: i + 1, expr: cells[len(cells)-2], want: cells[len(cells)-1]}
			if len(cells) == 3 {
				r.name = cells[0]
			}
			rows = append(rows, r)
		}
	}
	return rows
}

func unquoteCell(s string) string {
	if m := codeCellRE.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return s
}

// queryStep is a workflow that evaluates one query over the guide's
// query input.
func queryStep(expr string) string {
	return `name: one_query
description: evaluates one query of the guide
steps:
  - id: data
    tool: guide.input
  - id: q
    tool: guide.echo
    dependsOn: [data]
    arguments:
      v: |-
        {{query ` + strconv.Quote(expr) + ` .steps.data.output}}
`
}

// The function table lists every function query has, and each example
// of it and of the table of traps gives its result when the engine runs
// it.
func TestGuideListsEveryQueryFunction(t *testing.T) {
	md := Markdown()
	inputs, lines := fencedBlocks(md, "json query-input")
	if len(inputs) != 1 {
		t.Fatalf("guide has %d query-input blocks; want 1", len(inputs))
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(inputs[0]), &input); err != nil {
		t.Fatalf("guide.md:%d: the query input is not a JSON object: %v", lines[0], err)
	}
	functions := queryRows(md, "function", "example", "result")
	traps := queryRows(md, "expression", "result")
	if len(traps) < 5 {
		t.Errorf("guide has %d rows of traps; want at least 5", len(traps))
	}
	var listed []string
	for _, r := range append(functions, traps...) {
		if r.name != "" {
			listed = append(listed, r.name)
			if !strings.Contains(r.expr, r.name+"(") {
				t.Errorf("guide.md:%d: the example of %s does not call it: %s", r.line, r.name, r.expr)
			}
		}
		var want any
		if err := json.Unmarshal([]byte(r.want), &want); err != nil {
			t.Errorf("guide.md:%d: the result of %s is not JSON: %v", r.line, r.expr, err)
			continue
		}
		be := &guideBackend{tools: map[string]any{"guide.input": input}}
		got, err := runExample(t, queryStep(r.expr), compiler.Options{}, be, 0, nil)
		if err != nil {
			t.Errorf("guide.md:%d: %s: %v", r.line, r.expr, err)
			continue
		}
		if diff := cmp.Diff(jsonRound(want), jsonRound(got.(map[string]any)["v"])); diff != "" {
			t.Errorf("guide.md:%d: %s gives another result (-guide +run):\n%s", r.line, r.expr, diff)
		}
	}
	if diff := cmp.Diff(runtime.QueryFunctions(), listed); diff != "" {
		t.Errorf("the guide's function table is not the engine's functions, in order (-engine +guide):\n%s", diff)
	}
}

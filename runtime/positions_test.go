package runtime_test

// Runtime error markers: the YAML files in testdata/errors are compiled by
// the real compiler, their plans go through ir.Encode and ir.Decode (so the
// segment tables survive a plan file), and every workflow is run. Each
// workflow must fail, and its error's file:line:col must match a marker
// written on that line:
//
//	v: total {{.steps.a.output.nope}} # RUNTIME-ERROR @col=22 "has no field"
//
// The quoted text is a regular expression the error message must match. A
// marker may name another line with @line=+N or @line=-N, for lines where
// a comment would be part of the value (inside block and quoted scalars).
// The harness reports markers no run hit and errors at unmarked lines.

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// echoBackend answers every call with {present: "yes"}.
type echoBackend struct{}

func (echoBackend) CallTool(context.Context, runtime.ToolCall) (*runtime.ToolResult, error) {
	return &runtime.ToolResult{Structured: map[string]any{"present": "yes"}}, nil
}

type runtimeMarker struct {
	line, col int
	re        *regexp.Regexp
	text      string
	hit       bool
}

var markerRE = regexp.MustCompile(`# RUNTIME-ERROR((?: @\w+=[+-]?\d+)*) "((?:[^"\\]|\\.)*)"`)
var markerArgRE = regexp.MustCompile(`@(\w+)=([+-]?\d+)`)

// readMarkers returns the markers of src keyed by the line they expect.
func readMarkers(t *testing.T, name string, src []byte) map[int]*runtimeMarker {
	t.Helper()
	markers := map[int]*runtimeMarker{}
	for i, line := range strings.Split(string(src), "\n") {
		m := markerRE.FindStringSubmatch(line)
		if m == nil {
			if strings.Contains(line, "RUNTIME-ERROR") {
				t.Fatalf("%s:%d: malformed marker", name, i+1)
			}
			continue
		}
		mk := &runtimeMarker{line: i + 1, text: m[0]}
		for _, a := range markerArgRE.FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(a[2])
			switch a[1] {
			case "line":
				mk.line += n
			case "col":
				mk.col = n
			default:
				t.Fatalf("%s:%d: unknown marker argument @%s", name, i+1, a[1])
			}
		}
		pattern, err := strconv.Unquote(`"` + m[2] + `"`)
		if err != nil {
			t.Fatalf("%s:%d: marker text: %v", name, i+1, err)
		}
		if mk.re, err = regexp.Compile(pattern); err != nil {
			t.Fatalf("%s:%d: marker pattern: %v", name, i+1, err)
		}
		if mk.col == 0 {
			t.Fatalf("%s:%d: marker has no @col", name, i+1)
		}
		markers[mk.line] = mk
	}
	return markers
}

func TestRuntimeErrorMarkers(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "errors", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no marker files in testdata/errors (%v)", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.ToSlash(file)
			markers := readMarkers(t, name, src)
			plan, diags := compiler.Compile([]compiler.Source{{Name: name, Src: src}}, compiler.Options{})
			if plan == nil {
				t.Fatalf("%s does not compile:\n%v", name, diags)
			}
			data, err := ir.Encode(plan)
			if err != nil {
				t.Fatal(err)
			}
			if plan, err = ir.Decode(data); err != nil {
				t.Fatalf("Decode(Encode(plan)): %v", err)
			}
			e, err := runtime.New(plan, runtime.Options{Backend: echoBackend{}})
			if err != nil {
				t.Fatal(err)
			}
			for _, wf := range plan.Workflows {
				run, err := e.Run(context.Background(), wf.Name, nil, runtime.RunOptions{})
				if err != nil {
					t.Errorf("workflow %s did not start: %v", wf.Name, err)
					continue
				}
				if run.Status != runtime.RunFailed || run.Error == nil {
					t.Errorf("workflow %s ended %s; want failed at its marker", wf.Name, run.Status)
					continue
				}
				pos := run.Error.Pos
				mk := markers[pos.Line]
				switch {
				case pos.File != name:
					t.Errorf("workflow %s failed at %s; want a position in %s (error: %v)", wf.Name, pos, name, run.Error)
				case mk == nil:
					t.Errorf("%s: workflow %s failed here, where no marker expects it: %v", pos, wf.Name, run.Error)
				case mk.col != pos.Col:
					t.Errorf("%s: workflow %s failed at column %d; the marker %s expects column %d (error: %v)", pos, wf.Name, pos.Col, mk.text, mk.col, run.Error)
					mk.hit = true
				case !mk.re.MatchString(run.Error.Msg):
					t.Errorf("%s: workflow %s error %q does not match the marker %s", pos, wf.Name, run.Error.Msg, mk.text)
					mk.hit = true
				default:
					mk.hit = true
				}
			}
			var lines []int
			for line, mk := range markers {
				if !mk.hit {
					lines = append(lines, line)
				}
			}
			sort.Ints(lines)
			for _, line := range lines {
				t.Errorf("%s:%d: no run failed here, as the marker %s expects", name, line, markers[line].text)
			}
		})
	}
}

package checker

// The error harness. Each testdata/errors/*.yaml file carries its expected
// diagnostics as comments on the line they belong to:
//
//	dependsOn: [nope]   # ERROR "unknown_step"
//	timeout: 45m        # WARNING "timeout_exceeds_workflow"
//	a: "x {{.p"         # ERROR@col=17 "unclosed action"
//	c: |                # ERROR@+2:col=23 "missing value for if"
//
// The quoted text is a regular expression matched against "code: message".
// @+N / @-N moves the expectation N lines down or up (for block scalars,
// whose lines cannot carry comments); col=N also pins the column. Several
// expectations may share a line. The test fails on every expected
// diagnostic that is missing and on every diagnostic nobody expected.
// Files named catalog*.yaml are checked with testdata/tools.json.

import (
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/parser"
)

type expectation struct {
	severity diag.Severity
	line     int
	col      int // 0: any column
	re       *regexp.Regexp
	srcLine  int // where the comment is written
}

var (
	commentRE = regexp.MustCompile(`(?:^|\s)#\s*(?:ERROR|WARNING)\b`)
	markerRE  = regexp.MustCompile(`(ERROR|WARNING)(?:@([+-]\d+))?(?:[:@]?col=(\d+))?\s+"((?:[^"\\]|\\.)*)"`)
)

// parseExpectations reads the ERROR/WARNING comments of a source file.
func parseExpectations(t *testing.T, name string, src []byte) []expectation {
	t.Helper()
	var out []expectation
	for i, line := range strings.Split(string(src), "\n") {
		loc := commentRE.FindStringIndex(line)
		if loc == nil {
			continue
		}
		for _, m := range markerRE.FindAllStringSubmatch(line[loc[0]:], -1) {
			e := expectation{severity: diag.Error, line: i + 1, srcLine: i + 1}
			if m[1] == "WARNING" {
				e.severity = diag.Warning
			}
			if m[2] != "" {
				d, _ := strconv.Atoi(m[2])
				e.line += d
			}
			if m[3] != "" {
				e.col, _ = strconv.Atoi(m[3])
			}
			pattern := strings.ReplaceAll(m[4], `\"`, `"`)
			re, err := regexp.Compile(pattern)
			if err != nil {
				t.Fatalf("%s:%d: bad expectation regexp %q: %v", name, i+1, pattern, err)
			}
			e.re = re
			out = append(out, e)
		}
	}
	return out
}

func (e expectation) matches(d diag.Diagnostic) bool {
	return d.Severity == e.severity && d.Pos.Line == e.line &&
		(e.col == 0 || d.Pos.Col == e.col) && e.re.MatchString(d.Code+": "+d.Message)
}

func loadTestCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	data, err := os.ReadFile("testdata/tools.json")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Read(data)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// checkFile parses and checks one file the way the compiler does.
func checkFile(t *testing.T, path string, opts Options) (*parser.File, diag.List) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, pd := parser.Parse(filepath.Base(path), src)
	_, cd := Check([]*parser.File{f}, opts)
	return f, append(pd, cd...)
}

func TestErrors(t *testing.T) {
	files, err := filepath.Glob("testdata/errors/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	cat := loadTestCatalog(t)
	total, codes := 0, map[string]bool{}
	for _, path := range files {
		name := filepath.Base(path)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := parseExpectations(t, name, src)
		total += len(want)
		opts := Options{}
		if strings.HasPrefix(name, "catalog") {
			opts.Tools = cat
		}
		_, got := checkFile(t, path, opts)
		for _, d := range got {
			codes[d.Code] = true
		}
		t.Run(name, func(t *testing.T) {
			used := make([]bool, len(got))
			for _, e := range want {
				found := false
				for i, d := range got {
					if !used[i] && e.matches(d) {
						used[i], found = true, true
						break
					}
				}
				if !found {
					at := strconv.Itoa(e.line)
					if e.col > 0 {
						at += ":" + strconv.Itoa(e.col)
					}
					t.Errorf("%s:%s: missing %s matching %q (comment on line %d)%s", name, at, e.severity, e.re, e.srcLine, nearby(got, e.line))
				}
			}
			for i, d := range got {
				if !used[i] {
					t.Errorf("%s: unexpected %s: %s: %s", d.Pos, d.Severity, d.Code, d.Message)
				}
			}
		})
	}
	var names []string
	for c := range codes {
		names = append(names, c)
	}
	sort.Strings(names)
	t.Logf("%d expected diagnostics in %d files; codes seen: %s", total, len(files), strings.Join(names, " "))
	if total < 70 {
		t.Errorf("only %d expected diagnostics; the harness should cover at least 70", total)
	}
	// Every code declared in errors.go must be exercised by the harness,
	// except the few that need generated input (checker_test.go).
	elsewhere := map[string]bool{CodeSchemaTooLarge: true}
	for _, c := range declaredCodes(t) {
		if !codes[c] && !elsewhere[c] {
			t.Errorf("no testdata/errors file produces code %s", c)
		}
	}
}

// declaredCodes reads the Code* constants from errors.go.
func declaredCodes(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := goparser.ParseFile(fset, "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if strings.HasPrefix(name.Name, "Code") && i < len(vs.Values) {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
						v, _ := strconv.Unquote(lit.Value)
						out = append(out, v)
					}
				}
			}
		}
	}
	if len(out) < 40 {
		t.Fatalf("found only %d Code constants in errors.go", len(out))
	}
	return out
}

// nearby lists what was reported on the line, to make a failure readable.
func nearby(got diag.List, line int) string {
	var b strings.Builder
	for _, d := range got {
		if d.Pos.Line == line {
			fmt.Fprintf(&b, "\n\tgot %s %s: %s: %s", d.Pos, d.Severity, d.Code, d.Message)
		}
	}
	return b.String()
}

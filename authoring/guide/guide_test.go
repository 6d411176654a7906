package guide

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/parser"
)

// block is one fenced YAML block of the guide.
type block struct {
	line int    // 1-based line of the guide where the YAML starts
	src  string // the YAML
	// mistake is the code named by the block's "# mistake: CODE" comment,
	// and mistakeLine its line within src; "" for a working example.
	mistake     string
	mistakeLine int
}

var mistakeRE = regexp.MustCompile(`#\s*mistake:\s*([a-z_]+)\s*$`)

// yamlBlocks returns the guide's ```yaml blocks.
func yamlBlocks(t *testing.T, md string) []block {
	t.Helper()
	var out []block
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```yaml" {
			continue
		}
		b := block{line: i + 2}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
			if m := mistakeRE.FindStringSubmatch(lines[i]); m != nil {
				if b.mistake != "" {
					t.Fatalf("guide.md:%d: a mistake block marks one mistake; this one marks two", i+1)
				}
				b.mistake, b.mistakeLine = m[1], len(body)
			}
		}
		b.src = strings.Join(body, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

// fieldTables returns, per object, the fields listed in the guide's
// tables whose first header cell is "OBJECT field" (or "A, B field" for
// objects sharing a table), with the guide line of each row.
func fieldTables(md string) map[string]map[string]int {
	out := map[string]map[string]int{}
	var objects []string
	for i, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			objects = nil
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		first := strings.TrimSpace(cells[0])
		switch {
		case strings.HasSuffix(first, " field"):
			objects = strings.Split(strings.TrimSuffix(first, " field"), ", ")
			for _, o := range objects {
				if out[o] == nil {
					out[o] = map[string]int{}
				}
			}
		case strings.HasPrefix(first, "`") && objects != nil:
			name := strings.Trim(first, "`")
			for _, o := range objects {
				out[o][name] = i + 1
			}
		}
	}
	return out
}

// Every field the parser accepts is in the guide's table for its object,
// and every row there is a field the parser accepts.
func TestGuideListsEveryField(t *testing.T) {
	tables := fieldTables(Markdown())
	for _, ft := range parser.FieldTables() {
		rows, ok := tables[ft.Object]
		if !ok {
			t.Errorf("guide has no field table for %s (a table whose first header is %q)", ft.Object, ft.Object+" field")
			continue
		}
		for _, f := range ft.Fields {
			if _, ok := rows[f]; !ok {
				t.Errorf("guide's %s table lacks field %q", ft.Object, f)
			}
		}
		for syn, canon := range ft.Synonyms {
			if !strings.Contains(Markdown(), "`"+syn+"`") {
				t.Errorf("guide does not mention %q, the synonym of %s.%s", syn, ft.Object, canon)
			}
		}
		for name, line := range rows {
			if _, ok := ft.Spellings[name]; !ok {
				t.Errorf("guide.md:%d: the %s table lists %q, which the parser does not accept", line, ft.Object, name)
			}
		}
		delete(tables, ft.Object)
	}
	for obj := range tables {
		t.Errorf("guide has a field table for %q, which is not an object of the parser", obj)
	}
}

func guideCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	data, err := os.ReadFile("testdata/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Read(data)
	if err != nil {
		t.Fatalf("testdata/catalog.json: %v", err)
	}
	return cat
}

func compileBlock(cat *catalog.Catalog, b block) diag.List {
	_, diags := compiler.Compile([]compiler.Source{{Name: "guide.yaml", Src: []byte(b.src)}}, compiler.Options{Tools: cat})
	return diags
}

func describe(diags diag.List) string {
	var b strings.Builder
	for _, d := range diags {
		fmt.Fprintf(&b, "\n  %d:%d: %s %s: %s", d.Pos.Line, d.Pos.Col, d.Severity, d.Code, d.Message)
	}
	return b.String()
}

// Every working example compiles against the catalog with no diagnostic
// at all, not even a warning.
func TestGuideExamplesCompile(t *testing.T) {
	cat := guideCatalog(t)
	examples := 0
	for _, b := range yamlBlocks(t, Markdown()) {
		if b.mistake != "" {
			continue
		}
		examples++
		if diags := compileBlock(cat, b); len(diags) > 0 {
			t.Errorf("guide.md:%d: the example does not compile cleanly:%s\n%s", b.line, describe(diags), b.src)
		}
	}
	if examples < 9 {
		t.Errorf("guide has %d working examples; want one per construct (at least 9)", examples)
	}
}

// Every mistake example yields exactly one diagnostic: the code the guide
// names, on the line it marks; and that diagnostic carries a YAML path
// and a fix (a message or detail that says what to write).
func TestGuideMistakesYieldTheirCode(t *testing.T) {
	cat := guideCatalog(t)
	var codes []string
	for _, b := range yamlBlocks(t, Markdown()) {
		if b.mistake == "" {
			continue
		}
		codes = append(codes, b.mistake)
		diags := compileBlock(cat, b)
		if len(diags) != 1 || diags[0].Code != b.mistake || diags[0].Pos.Line != b.mistakeLine {
			t.Errorf("guide.md:%d: the mistake example yields%s\nwant exactly one %s on line %d", b.line, describe(diags), b.mistake, b.mistakeLine)
			continue
		}
		if !strings.Contains(Markdown(), "`"+b.mistake+"`") {
			t.Errorf("guide.md:%d: the text does not name the code %s", b.line, b.mistake)
		}
	}
	sort.Strings(codes)
	for i := 1; i < len(codes); i++ {
		if codes[i] == codes[i-1] {
			t.Errorf("two mistake examples show %s; show each mistake once", codes[i])
		}
	}
	// The mistakes an agent makes most (issue 12) must be there.
	for _, want := range []string{"missing_dependency", "unknown_argument", "missing_argument", "argument_type", "unknown_tool", "unknown_field"} {
		if i := sort.SearchStrings(codes, want); i == len(codes) || codes[i] != want {
			t.Errorf("guide has no mistake example for %s", want)
		}
	}
}

// The working examples are valid under the schema the agent also reads.
func TestGuideExamplesMatchSchema(t *testing.T) {
	sch := compileSchema(t, Schema())
	for _, b := range yamlBlocks(t, Markdown()) {
		if b.mistake != "" {
			continue
		}
		for i, doc := range documents(t, "guide.md", []byte(b.src)) {
			if err := sch.Validate(doc); err != nil {
				t.Errorf("guide.md:%d: the schema rejects document %d of the example:\n%v", b.line, i, err)
			}
		}
	}
}

package checker

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/parser"
)

// FuzzCheck feeds arbitrary sources through parse and check: Check must
// never panic, and every diagnostic must carry a code and a message.
func FuzzCheck(f *testing.F) {
	for _, dir := range []string{"testdata/errors", "testdata/valid"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, p := range files {
			if strings.HasSuffix(p, ".ir.json") || strings.Contains(p, "limits") {
				continue
			}
			if src, err := os.ReadFile(p); err == nil {
				f.Add(src)
			}
		}
	}
	cat := loadCatalogForFuzz(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		pf, _ := parser.Parse("fuzz.yaml", src)
		if pf == nil {
			return
		}
		_, diags := Check([]*parser.File{pf}, Options{Tools: cat})
		for _, d := range diags {
			if d.Code == "" || d.Message == "" {
				t.Errorf("diagnostic without code or message: %+v", d)
			}
		}
	})
}

func loadCatalogForFuzz(f *testing.F) *catalog.Catalog {
	data, err := os.ReadFile("testdata/tools.json")
	if err != nil {
		f.Fatal(err)
	}
	cat, err := catalog.Read(data)
	if err != nil {
		f.Fatal(err)
	}
	return cat
}

// FuzzQueryExpr: a literal query expression never panics the checker,
// and a problem's offset stays inside the expression.
func FuzzQueryExpr(f *testing.F) {
	for _, s := range []string{"items[?size > `1`].name", "let $x = a in $x.b", "a.\"b c\"", "`{bad`", "foo.]", "lenght(@)", "a || ", "@.a.'b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		p, bad := checkQueryExpr(expr)
		if bad && (p.off < 0 || p.off > len(expr)) {
			t.Errorf("checkQueryExpr(%q) offset %d is outside the expression", expr, p.off)
		}
		quoted := strconv.Quote(expr)
		if off := queryLiteralOffset(quoted, p.off); off < 1 || off > len(quoted) {
			t.Errorf("queryLiteralOffset(%s, %d) = %d; want within the literal", quoted, p.off, off)
		}
	})
}

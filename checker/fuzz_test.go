package checker

import (
	"os"
	"strconv"
	"testing"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/internal/fuzzkit"
	"github.com/vmcp-dev/vmcp/parser"
)

// FuzzCheck feeds arbitrary sources through parse and check: Check must
// never panic, and every diagnostic must carry a code and a message. The
// seeds are the test files' workflows one at a time (see fuzzkit).
//
//	go test -run '^$' -fuzz '^FuzzCheck$' -fuzztime 30s -fuzzminimizetime 500x ./checker
func FuzzCheck(f *testing.F) {
	for _, seed := range fuzzkit.Files(f, []string{"testdata/errors/*.yaml", "testdata/valid/*.yaml"}, "limits") {
		f.Add(seed)
	}
	cat := loadCatalogForFuzz(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > fuzzkit.MaxInput {
			return
		}
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
		_, p, bad := checkQueryExpr(expr)
		if bad && (p.off < 0 || p.off > len(expr)) {
			t.Errorf("checkQueryExpr(%q) offset %d is outside the expression", expr, p.off)
		}
		quoted := strconv.Quote(expr)
		if off := queryLiteralOffset(quoted, p.off); off < 1 || off > len(quoted) {
			t.Errorf("queryLiteralOffset(%s, %d) = %d; want within the literal", quoted, p.off, off)
		}
	})
}

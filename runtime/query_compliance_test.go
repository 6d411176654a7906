package runtime

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/internal/jmes"
)

// complianceSuite is one test suite of a JMESPath compliance file.
type complianceSuite struct {
	Given any `json:"given"`
	Cases []struct {
		Expression string `json:"expression"`
		Result     any    `json:"result"`
		Error      string `json:"error"`
	} `json:"cases"`
}

// Every function case of the JMESPath compliance suite (testdata/jmespath)
// goes through query: a result case gives the suite's result, and an
// error case fails with an error in vmcp's words, never Go's runtime
// error text or the library's token names. No case differs.
func TestQueryCompliance(t *testing.T) {
	files, err := filepath.Glob("testdata/jmespath/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no compliance files: %v", err)
	}
	q := newQueryCache()
	for _, file := range files {
		var suites []complianceSuite
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &suites); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, s := range suites {
			for _, c := range s.Cases {
				checkScopes(t, file, c.Expression, c.Error)
				got, err := q.query(c.Expression, s.Given)
				switch {
				case c.Error != "" && err == nil:
					t.Errorf("%s: query(%q) = %v; want a %s error", file, c.Expression, got, c.Error)
				case c.Error != "":
					for _, bad := range []string{"runtime error", "interface {}", "TOK", "panic"} {
						if strings.Contains(err.Error(), bad) {
							t.Errorf("%s: query(%q) error %q shows %q", file, c.Expression, err, bad)
						}
					}
				case err != nil:
					t.Errorf("%s: query(%q) failed: %v", file, c.Expression, err)
				default:
					if diff := cmp.Diff(c.Result, got); diff != "" {
						t.Errorf("%s: query(%q) mismatch (-want +got):\n%s", file, c.Expression, diff)
					}
				}
			}
		}
	}
}

// checkScopes: the compile-time scope check (jmes.Undefined) finds an
// undefined variable exactly in the cases where evaluation fails on one.
func checkScopes(t *testing.T, file, expr, wantErr string) {
	ast, err := jmes.Parse(expr)
	if err != nil {
		return
	}
	undefined := jmes.Undefined(expr, ast, nil)
	if (len(undefined) > 0) != (wantErr == "undefined-variable") {
		t.Errorf("%s: jmes.Undefined(%q) = %v; the suite's error is %q", file, expr, undefined, wantErr)
	}
}

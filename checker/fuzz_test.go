package checker

import (
	"os"
	"path/filepath"
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

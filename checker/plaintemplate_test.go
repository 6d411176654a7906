package checker

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPlainTemplateIsTheParsedOne: wherever plainTemplate takes a
// template, its analysis is the one text/template's parser gives: over
// hand-made cases at the edges of what it takes, and over every quoted
// template in the repository's workflow files.
func TestPlainTemplateIsTheParsedOne(t *testing.T) {
	cases := map[string]bool{ // source: whether plainTemplate takes it
		"{{.params.q}}":                     true,
		"{{ .steps.a.output.items }}":       true,
		"{{\t.params.q\t}}":                 true,
		"shard {{.params.query}} #0":        true,
		"{{.a}}{{.b}}":                      true,
		" {{.a}}":                           true,
		"{{.a}} ":                           true,
		"{{.a}}}":                           true,
		"}} {{.a}}":                         true,
		"{{.a_1.B2._c}}":                    true,
		"{{.if.range}}":                     true,
		"":                                  true,
		"{{.}}":                             false,
		"{{.a .b}}":                         false,
		"{{- .a}}":                          false,
		"{{.a -}}":                          false,
		"{{.a-b}}":                          false,
		"{{.1a}}":                           false,
		"{{.é}}":                            false,
		"{{$.params.q}}":                    false,
		"{{.a | len}}":                      false,
		"{{json .a}}":                       false,
		"{{/* c */}}":                       false,
		"{{.a}":                             false,
		"{{.a}} {{":                         false,
		"{{index .steps \"a\" \"output\"}}": false,
		"{{(.steps.a.output).f}}":           false,
	}
	for src, takes := range cases {
		a, ok := plainTemplate(src)
		if ok != takes {
			t.Errorf("plainTemplate(%q) takes it: %v; want %v", src, ok, takes)
		}
		if ok {
			samePlain(t, src, a)
		}
	}
	// Every template in the workflow files of the tree.
	quoted := regexp.MustCompile(`"((?:[^"\\]|\\.)*\{\{(?:[^"\\]|\\.)*)"|'((?:[^']|'')*\{\{(?:[^']|'')*)'`)
	root := filepath.Join("..")
	taken := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range quoted.FindAllStringSubmatch(string(b), -1) {
			src := m[1] + strings.ReplaceAll(m[2], "''", "'")
			if a, ok := plainTemplate(src); ok {
				taken++
				samePlain(t, src, a)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if taken < 100 {
		t.Errorf("plainTemplate took %d of the tree's templates; want the common ones (at least 100)", taken)
	}
}

func samePlain(t *testing.T, src string, plain *templateAnalysis) {
	t.Helper()
	parsed := parsedTemplate(src)
	if diff := cmp.Diff(parsed, plain, cmp.AllowUnexported(templateAnalysis{}, ref{}, undefinedTemplate{}, queryProblem{})); diff != "" {
		t.Errorf("plainTemplate(%q) differs from the parsed analysis (-parsed +plain):\n%s", src, diff)
	}
}

// FuzzPlainTemplate: whatever plainTemplate takes, text/template parses
// to the same analysis.
func FuzzPlainTemplate(f *testing.F) {
	for _, s := range []string{"{{.params.q}}", "a {{ .steps.x.output }} b", "{{.a}}{{.b}}", "{{- .a}}", "{{.a.b.c}}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if a, ok := plainTemplate(src); ok {
			samePlain(t, src, a)
		}
	})
}

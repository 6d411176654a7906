package compiler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree writes files (forward-slash names) under a temporary directory and
// changes into it for the rest of the test.
func tree(t *testing.T, files ...string) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
}

func names(srcs []Source) []string {
	out := make([]string, len(srcs))
	for i, s := range srcs {
		out[i] = s.Name
	}
	return out
}

func TestLoad(t *testing.T) {
	files := []string{
		"a.yaml", "b.json", "notes.txt",
		"wf/z.yml", "wf/b.yaml", "wf/sub/c.yaml", "wf/sub/readme.md",
		"wf/.hidden/secret.yaml", "wf/node_modules/pkg/package.json",
	}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"a.yaml"}, []string{"a.yaml"}},
		// An explicit file is read whatever its extension.
		{[]string{"notes.txt"}, []string{"notes.txt"}},
		// Directories: recursive, sorted, only source extensions, no
		// hidden directories or node_modules.
		{[]string{"wf"}, []string{"wf/b.yaml", "wf/sub/c.yaml", "wf/z.yml"}},
		{[]string{"."}, []string{"a.yaml", "b.json", "wf/b.yaml", "wf/sub/c.yaml", "wf/z.yml"}},
		{[]string{"./wf/sub/"}, []string{"wf/sub/c.yaml"}},
		// Globs are sorted; arguments keep their order; duplicates go.
		{[]string{"wf/*.y*ml", "a.yaml"}, []string{"wf/b.yaml", "wf/z.yml", "a.yaml"}},
		{[]string{"a.yaml", ".", "a.yaml"}, []string{"a.yaml", "b.json", "wf/b.yaml", "wf/sub/c.yaml", "wf/z.yml"}},
		// A glob may match a directory, which is then searched.
		{[]string{"w?"}, []string{"wf/b.yaml", "wf/sub/c.yaml", "wf/z.yml"}},
		// A hidden directory named explicitly is searched.
		{[]string{"wf/.hidden"}, []string{"wf/.hidden/secret.yaml"}},
	}
	tree(t, files...)
	for _, tc := range tests {
		got, err := Load(tc.args)
		if err != nil {
			t.Errorf("Load(%q) error = %v; want none", tc.args, err)
			continue
		}
		if diff := cmp.Diff(tc.want, names(got)); diff != "" {
			t.Errorf("Load(%q) names mismatch (-want +got):\n%s", tc.args, diff)
		}
		for _, s := range got {
			if want := "# " + s.Name + "\n"; string(s.Src) != want {
				t.Errorf("Load(%q): %s holds %q; want %q", tc.args, s.Name, s.Src, want)
			}
		}
	}
}

func TestLoadAbsoluteInsideWorkingDir(t *testing.T) {
	tree(t, "x/a.yaml")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load([]string{filepath.Join(wd, "x")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x/a.yaml"}, names(got)); diff != "" {
		t.Errorf("Load(absolute dir) names mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadErrors(t *testing.T) {
	tree(t, "a.yaml")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"missing.yaml"}, "missing.yaml: no such file or directory"},
		{[]string{"a.yaml", "nope/"}, "nope/: no such file or directory"},
		{[]string{"*.json"}, "*.json: no files match"},
		{[]string{"[x"}, "bad pattern"},
	}
	for _, tc := range tests {
		_, err := Load(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%q) error = %v; want one containing %q", tc.args, err, tc.want)
		}
	}
}

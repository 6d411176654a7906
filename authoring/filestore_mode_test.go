package authoring

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFileStoreSaveModes: both files of a save (NAME.yaml and NAME.vN.yaml)
// get the same mode, 0644 less the umask.
func TestFileStoreSaveModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	s, err := NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Save(context.Background(), "demo", "name: demo\n", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{s.currentPath("demo"), s.versionPath("demo", v.Version)} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != 0o644 {
			t.Errorf("%s: mode %o, want 644", filepath.Base(p), got)
		}
	}
}

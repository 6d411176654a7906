package main

import (
	"archive/tar"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestImage builds the image from this checkout, reads it back and checks
// what it holds: one layer with the two binaries and the CA bundle only
// (no shell, no sources), a non-root user, /vmcp as the entrypoint; then
// the binaries taken out of the layer run.
func TestImage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "vmcp-image.tar")
	if err := Build("../..", out, "ghcr.io/vmcp-dev/vmcp:test"); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatalf("the tarball is not an image: %v", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Config
	if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/vmcp"}) || cfg.OS != "linux" {
		t.Errorf("config: user %q, entrypoint %v, os %s; want 65532:65532, [/vmcp], linux", c.User, c.Entrypoint, cfg.OS)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	bin := t.TempDir()
	var files []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		files = append(files, h.Name)
		if h.Uid != 0 || (h.Name == "vmcp" || h.Name == "vmcpc") && h.Mode != 0o755 {
			t.Errorf("%s: uid %d mode %o; want root-owned, binaries 0755", h.Name, h.Uid, h.Mode)
		}
		if filepath.Dir(h.Name) == "." {
			f, err := os.OpenFile(filepath.Join(bin, h.Name), os.O_CREATE|os.O_WRONLY, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(f, tr)
			f.Close()
		}
	}
	if want := []string{"etc/ssl/certs/ca-certificates.crt", "vmcp", "vmcpc"}; !slices.Equal(files, want) {
		t.Errorf("the layer's files = %v; want only %v", files, want)
	}
	for _, args := range [][]string{{"vmcp", "ready", "--help"}, {"vmcpc", "--help"}} {
		out, err := exec.Command(filepath.Join(bin, args[0]), args[1:]...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Usage") {
			t.Errorf("%v from the image = %v\n%s", args, err, out)
		}
	}
	// Static: the image has no dynamic loader or libc.
	f, err := elf.Open(filepath.Join(bin, "vmcp"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("vmcp asks for a dynamic loader; the image has none (build with CGO_ENABLED=0)")
		}
	}
}

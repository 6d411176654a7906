package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// caBundle is where Debian keeps the CA certificates; the image carries
// them at the same path.
const caBundle = "/etc/ssl/certs/ca-certificates.crt"

// User is the image's user and group: not root.
const User = "65532:65532"

func main() {
	out := flag.String("o", "vmcp-image.tar", "the image tarball to write")
	tag := flag.String("tag", "ghcr.io/vmcp-dev/vmcp:dev", "the image's name and tag in the tarball")
	repo := flag.String("repo", "..", "the vmcp checkout to build")
	flag.Parse()
	if err := Build(*repo, *out, *tag); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", *out, "as", *tag)
}

// Build compiles the binaries of the checkout at repo and writes the image
// to out, named tag.
func Build(repo, out, tag string) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("-tag %q: %w", tag, err)
	}
	dir, err := os.MkdirTemp("", "vmcp-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files := map[string][]byte{}
	for _, bin := range []string{"vmcp", "vmcpc"} {
		p := filepath.Join(dir, bin)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", p, "./cmd/"+bin)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goruntime.GOARCH)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %v\n%s", bin, err, b)
		}
		if files[bin], err = os.ReadFile(p); err != nil {
			return err
		}
	}
	ca, err := os.ReadFile(caBundle)
	if err != nil {
		return fmt.Errorf("the CA bundle the image carries: %w (apt-get install ca-certificates)", err)
	}
	files[caBundle[1:]] = ca
	layer, err := layerOf(files)
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", goruntime.GOARCH
	cfg.Config.User = User
	cfg.Config.Entrypoint = []string{"/vmcp"}
	cfg.Config.Cmd = []string{"run", "--config", "/etc/vmcp/vmcp.yaml"}
	cfg.Config.WorkingDir = "/var/lib/vmcp"
	cfg.Config.Env = []string{"SSL_CERT_FILE=" + caBundle}
	cfg.Config.ExposedPorts = map[string]struct{}{"8080/tcp": {}}
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":  "vmcp",
		"org.opencontainers.image.source": "https://github.com/vmcp-dev/vmcp",
	}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	return tarball.WriteToFile(out, ref, img)
}

// layerOf is one layer of files (path without the leading slash ->
// content): binaries executable, the rest readable, the directories
// they need, all owned by root, with a fixed time so the layer is
// reproducible.
func layerOf(files map[string][]byte) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	dirs := map[string]bool{}
	for _, p := range sortedKeys(files) {
		for d := filepath.Dir(p); d != "." && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	for _, d := range sortedKeys(dirs) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	for _, p := range sortedKeys(files) {
		mode := int64(0o644)
		if filepath.Dir(p) == "." {
			mode = 0o755 // the binaries, at the root
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: mode, Size: int64(len(files[p])), ModTime: epoch}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[p]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
}

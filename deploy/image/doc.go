// Command image builds vmcp's container image without a container daemon
// (google/go-containerregistry): one layer holding the static vmcp and
// vmcpc binaries (CGO_ENABLED=0; the SQLite driver is pure Go) and the
// build machine's CA bundle (for TLS to backends and identity providers),
// on no base image at all; user 65532, entrypoint /vmcp. It writes a
// docker-format tarball that `docker load`, `podman load` or `crane push`
// take.
//
//	go run ./image -o ../build/vmcp-image.tar   (from deploy/; make image)
package main

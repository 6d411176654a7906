package testenv

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStartTemporalServesAndStops(t *testing.T) {
	s := StartTemporal(t, 17490, 17499)
	c, err := net.DialTimeout("tcp", s.Address, time.Second)
	if err != nil {
		t.Fatalf("dial %s after StartTemporal: %v", s.Address, err)
	}
	c.Close()
	s.Stop()
	if c, err := net.DialTimeout("tcp", s.Address, time.Second); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after Stop", s.Address)
	}
	s.Stop() // a second Stop (the test cleanup) is harmless
}

func TestFindTemporalNamesTheInstallCommand(t *testing.T) {
	noPath := func(string) (string, error) { return "", errors.New("not found") }
	empty := t.TempDir()
	env := map[string]string{"HOME": empty, "GOPATH": filepath.Join(empty, "gopath")}
	_, err := findTemporal(noPath, func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), TemporalInstall) {
		t.Fatalf("findTemporal with no CLI anywhere = %v; want an error naming %q", err, TemporalInstall)
	}
	// The CI cache directory is found without PATH.
	cached := filepath.Join(empty, ".cache", "vmcp", "bin", "temporal")
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cached, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := findTemporal(noPath, func(k string) string { return env[k] })
	if err != nil || got != cached {
		t.Fatalf("findTemporal with the CI cache = %q, %v; want %q", got, err, cached)
	}
}

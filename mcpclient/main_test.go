package mcpclient

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/internal/testservers"
)

// TestMain lets the test binary double as the fake MCP server: a backend
// whose command is os.Args[0] with VMCP_TESTSERVER=fake serves
// testservers.NewFake on stdio.
func TestMain(m *testing.M) {
	testservers.Main()
	os.Exit(m.Run())
}

// Ports for this package's HTTP tests.
const portLo, portHi = 17100, 17199

// fakeBackend configures the fake server as a stdio backend.
func fakeBackend(env map[string]string) *config.Backend {
	e := map[string]string{testservers.EnvServe: "fake"}
	for k, v := range env {
		e[k] = v
	}
	return &config.Backend{Command: os.Args[0], Env: e, Transport: config.TransportStdio, Timeout: 20 * time.Second}
}

// everythingStdio configures @modelcontextprotocol/server-everything on stdio.
func everythingStdio(t *testing.T) *config.Backend {
	return &config.Backend{Command: testenv.NodeBin(t, "mcp-server-everything"), Args: []string{"stdio"},
		Transport: config.TransportStdio, Timeout: 30 * time.Second}
}

// testLogger logs to the test output at debug level when -v is given.
func testLogger(t testing.TB) *slog.Logger {
	if !testing.Verbose() {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// connect connects to the backends and closes the manager when the test ends.
func connect(t testing.TB, backends map[string]*config.Backend) *Manager {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, err := Connect(ctx, backends, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

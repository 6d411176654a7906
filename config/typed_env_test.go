package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// ${VAR}, quoted or not, gives an integer, a boolean or a duration where
// the field is one.
func TestEnvInTypedFields(t *testing.T) {
	src := `
backends:
  a:
    command: x
    timeout: ${CALL_TIMEOUT}
    startTimeout: "${START}"
  h:
    url: "http://127.0.0.1:17001/mcp"
    continuousListening: ${LISTEN}
server:
  maxParallel: ${N}
  exposeBackendTools: "${EXPOSE}"
state:
  maxOutputBytes: "${MAX_OUT:-2048}"
limits:
  maxIterations: ${ITER}
`
	env := map[string]string{"CALL_TIMEOUT": "5s", "START": "2m", "LISTEN": "true", "N": " 7 ", "EXPOSE": "false", "ITER": "2500"}
	dir := writeTree(t, map[string]string{"vmcp.yaml": src})
	cfg, err := Load(filepath.Join(dir, "vmcp.yaml"), envOf(env))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.Server.MaxParallel != 7 || cfg.Server.ExposeBackendTools || cfg.State.MaxOutputBytes != 2048 || cfg.Limits.MaxIterations != 2500 {
		t.Errorf("server = %+v, state = %+v, limits = %+v; want maxParallel 7, exposeBackendTools false, maxOutputBytes 2048, maxIterations 2500", cfg.Server, cfg.State, cfg.Limits)
	}
	if a := cfg.Backends["a"]; a.Timeout != 5*time.Second || a.StartTimeout != 2*time.Minute {
		t.Errorf("backend a timeouts = %s, %s; want 5s, 2m", a.Timeout, a.StartTimeout)
	}
	if !cfg.Backends["h"].ContinuousListening {
		t.Errorf("backend h continuousListening = false; want true from ${LISTEN}")
	}
}

func TestLimitsDefault(t *testing.T) {
	dir := writeTree(t, map[string]string{"vmcp.yaml": "backends: {a: {command: x}}\n"})
	cfg, err := Load(filepath.Join(dir, "vmcp.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Limits.MaxIterations != ir.DefaultIterationLimit {
		t.Errorf("limits.maxIterations = %d; want the default %d", cfg.Limits.MaxIterations, ir.DefaultIterationLimit)
	}
}

// A value that does not convert is an error at the field that names the
// variable and never shows the value.
func TestEnvInTypedFieldsErrors(t *testing.T) {
	src := `server:
  maxParallel: ${N}
  exposeBackendTools: "${EXPOSE}"
limits:
  maxIterations: ${A}${B}
  max_iterations_typo: 1
backends:
  a:
    command: x
    timeout: "${T}"
state:
  maxOutputBytes: ${MISSING}
`
	env := map[string]string{"N": "ten-secret", "EXPOSE": "maybe-secret", "A": "0", "B": "x", "T": "forever-secret"}
	dir := writeTree(t, map[string]string{"vmcp.yaml": src})
	_, err := Load(filepath.Join(dir, "vmcp.yaml"), envOf(env))
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Load error = %v; want a *config.Error", err)
	}
	msg := err.Error()
	for _, want := range []string{
		`vmcp.yaml:2:16: error: server.maxParallel must be an integer, and the value of environment variable N is not one`,
		`vmcp.yaml:3:23: error: server.exposeBackendTools must be true or false, and the value of environment variable EXPOSE is not one`,
		`vmcp.yaml:5:18: error: limits.maxIterations must be an integer, and the value of environment variables A, B is not one`,
		`vmcp.yaml:6:3: error: unknown key "max_iterations_typo" in limits`,
		`vmcp.yaml:10:14: error: backend "a" field timeout must be a Go duration (for example 30s, 5m, 1h30m), and the value of environment variable T is not one`,
		`vmcp.yaml:12:19: error: state.maxOutputBytes: environment variable MISSING is not set`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("Load error =\n%s\nwant it to contain %q", msg, want)
		}
	}
	if strings.Contains(msg, "secret") {
		t.Errorf("Load error shows a variable's value:\n%s", msg)
	}
}

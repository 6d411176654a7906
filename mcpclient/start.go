package mcpclient

// Starting backends in the background.
//
// Start returns a Manager at once and starts every backend concurrently,
// each bounded by its startTimeout, so that a server built on it can
// answer its own clients while slow backends (npm servers that download
// and boot) are still coming up. Wait blocks until the first start of the
// named backends has ended, so a caller waits only for the backends it
// needs. A call to a backend whose first start is still going waits for
// it (conn.get holds startMu for as long as a start takes); a call to one
// whose start failed starts it again and, if that fails too, fails with an
// error naming the backend. Connect is Start followed by Wait for all.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/vmcp-dev/vmcp/config"
)

// firstStart is the outcome of a backend's first start; err is set before
// done is closed.
type firstStart struct {
	done chan struct{}
	err  error
}

// Start checks the backends' configuration and starts or dials each of
// them in the background, returning at once. A start that fails is kept
// for Wait, and the backend is started again by the next call that needs
// it. Always Close the manager.
func Start(backends map[string]*config.Backend, opts Options) (*Manager, error) {
	m, err := newManager(backends, opts)
	if err != nil {
		return nil, err
	}
	for _, name := range m.names {
		f := &firstStart{done: make(chan struct{})}
		m.first[name] = f
		go m.startFirst(name, f)
	}
	return m, nil
}

// startFirst runs a backend's first start, under the manager's lifetime.
func (m *Manager) startFirst(name string, f *firstStart) {
	defer close(f.done)
	start := time.Now()
	_, f.err = m.conns[name].get(m.ctx)
	if f.err != nil {
		m.log.Debug("backend did not start", "backend", name, "err", f.err)
		return
	}
	// Tools locks: a tools/list_changed refresh may be running.
	m.log.Info("backend connected", "backend", name, "transport", m.conns[name].cfg.Transport,
		"tools", len(m.Tools(name)), "took", time.Since(start).Round(time.Millisecond))
}

// Wait blocks until the first start of each named backend has ended, or
// ctx ends. It returns the failed starts joined in name order (each error
// names its backend), an error for a name that is not a backend, or, when
// ctx ends first, an error naming the backends still starting.
func (m *Manager) Wait(ctx context.Context, names ...string) error {
	var errs, pending []string
	var failed []error
	for _, name := range sortedUnique(names) {
		f, ok := m.first[name]
		if !ok {
			errs = append(errs, fmt.Sprintf("backend %q is not configured", name))
			continue
		}
		select {
		case <-f.done:
			if f.err != nil {
				failed = append(failed, f.err)
			}
		case <-ctx.Done():
			pending = append(pending, fmt.Sprintf("%q", name))
		}
	}
	for _, e := range errs {
		failed = append(failed, errors.New(e))
	}
	if len(pending) > 0 {
		failed = append(failed, fmt.Errorf("backends %s were still starting: %w", strings.Join(pending, ", "), ctx.Err()))
	}
	return errors.Join(failed...)
}

// Closed reports whether Close has been called.
func (m *Manager) Closed() bool { return m.ctx.Err() != nil }

func sortedUnique(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

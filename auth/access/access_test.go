package access

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

// engineOf is a Runner over a store that records cancels.
type engineOf struct {
	s         *runtime.MemoryStore
	cancelled []string
}

func (e *engineOf) Status(ctx context.Context, id string) (*runtime.Run, error) {
	return e.s.GetRun(ctx, id)
}

func (e *engineOf) Cancel(_ context.Context, id string) error {
	e.cancelled = append(e.cancelled, id)
	return nil
}

func as(subject string, scopes ...httpsafe.Scope) context.Context {
	return httpsafe.WithIdentity(context.Background(), httpsafe.Identity{Subject: subject, Scopes: scopes})
}

// TestOwnerRule: a run caller reads, lists and cancels its own runs; an
// admin and the local operator every run; another owner's run and an
// ownerless one are not found to a run caller, and never cancelled.
func TestOwnerRule(t *testing.T) {
	ms := runtime.NewMemoryStore(0)
	for i, owner := range []string{"alice", "bob", ""} {
		r := &runtime.Run{ID: "run-" + owner, Workflow: "wf", Owner: owner, Status: runtime.RunRunning, StartedAt: time.Unix(int64(i), 0)}
		if err := ms.CreateRun(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		ctx  context.Context
		sees []string
	}{
		{"alice (run)", as("alice", httpsafe.ScopeRun), []string{"run-alice"}},
		{"bob (run)", as("bob", httpsafe.ScopeRun), []string{"run-bob"}},
		{"admin", as("ops", httpsafe.ScopeRun, httpsafe.ScopeAdmin), []string{"run-", "run-bob", "run-alice"}},
		{"local operator", context.Background(), []string{"run-", "run-bob", "run-alice"}},
		{"no subject (run)", as("", httpsafe.ScopeRun), nil},
	}
	for _, tt := range tests {
		eng := &engineOf{s: ms}
		e, s := Engine(eng), Store(ms)
		list, err := s.ListRuns(tt.ctx, runtime.RunFilter{})
		var ids []string
		for _, r := range list {
			ids = append(ids, r.ID)
		}
		if err != nil || !slices.Equal(ids, tt.sees) {
			t.Errorf("%s: ListRuns = %v, %v; want %v", tt.name, ids, err, tt.sees)
		}
		for _, id := range []string{"run-alice", "run-bob", "run-"} {
			want := slices.Contains(tt.sees, id)
			_, errG := s.GetRun(tt.ctx, id)
			_, errS := e.Status(tt.ctx, id)
			errC := e.Cancel(tt.ctx, id)
			for what, err := range map[string]error{"GetRun": errG, "Status": errS, "Cancel": errC} {
				if want && err != nil || !want && !errors.Is(err, runtime.ErrRunNotFound) {
					t.Errorf("%s: %s(%s) = %v; want found %v", tt.name, what, id, err, want)
				}
			}
			if got := slices.Contains(eng.cancelled, id); got != want {
				t.Errorf("%s: Cancel(%s) reached the engine: %v; want %v", tt.name, id, got, want)
			}
		}
	}
}

package fakebackend

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/toolcall"
)

func TestBackendFailsFirstThenAnswers(t *testing.T) {
	b := New(map[string]*Tool{"svc.flaky": {FailFirst: 1, Result: func(args map[string]any) any { return args["n"] }}})
	call := toolcall.Call{Backend: "svc", Tool: "flaky", StepID: "s", Arguments: map[string]any{"n": 1.0}}
	if _, err := b.CallTool(context.Background(), call); !errors.Is(err, ErrDown) {
		t.Fatalf("first call error = %v; want ErrDown", err)
	}
	res, err := b.CallTool(context.Background(), call)
	if err != nil || res.Structured != 1.0 {
		t.Fatalf("second call = %+v, %v; want structured 1", res, err)
	}
	if n := len(b.CallsTo("s")); n != 2 {
		t.Errorf("CallsTo(s) = %d calls; want 2", n)
	}
}

func TestBackendEchoesAnUnknownTool(t *testing.T) {
	b := New(nil)
	res, err := b.CallTool(context.Background(), toolcall.Call{Backend: "x", Tool: "y", StepID: "a", Arguments: map[string]any{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"args": map[string]any{"k": "v"}}, res.Structured); diff != "" {
		t.Errorf("echo (-want +got):\n%s", diff)
	}
	if got := b.Calls(); len(got) != 1 || got[0].Tool != "y" || b.MaxFlight.Load() != 1 {
		t.Errorf("Calls() = %+v, MaxFlight %d; want the one call", got, b.MaxFlight.Load())
	}
}

func TestBackendHangEndsWithTheContext(t *testing.T) {
	b := New(map[string]*Tool{"svc.hang": {Hang: true}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.CallTool(ctx, toolcall.Call{Backend: "svc", Tool: "hang"}); !errors.Is(err, context.Canceled) || b.SawCancel.Load() != 1 {
		t.Errorf("hanging call on an ended context = %v, SawCancel %d; want context.Canceled, 1", err, b.SawCancel.Load())
	}
}

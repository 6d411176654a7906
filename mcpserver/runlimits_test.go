package mcpserver

import (
	"context"
	"errors"
	"testing"
)

// TestAdmissionRefuses: past the owner's cap and past the server's, a run
// is refused with a LimitError naming the cap; a release makes room.
func TestAdmissionRefuses(t *testing.T) {
	a := newAdmission(RunLimits{Runs: 3, PerOwner: 2})
	ctx := context.Background()
	admit := func(owner string) (func(), error) { return a.admit(ctx, owner, nil) }
	relA, _ := admit("alice")
	if _, err := admit("alice"); err != nil {
		t.Fatal(err)
	}
	var le *LimitError
	if _, err := admit("alice"); !errors.As(err, &le) || !le.PerOwner || le.Limit != 2 {
		t.Fatalf("alice's third run = %v; want the per-owner limit of 2", err)
	}
	if _, err := admit("bob"); err != nil {
		t.Fatalf("bob's first run = %v; want it admitted", err)
	}
	if _, err := admit("bob"); !errors.As(err, &le) || le.PerOwner || le.Limit != 3 {
		t.Fatalf("the fourth run = %v; want the server's limit of 3", err)
	}
	relA()
	relA() // a second call gives back nothing more
	if _, err := admit("bob"); err != nil {
		t.Fatalf("bob's run after a release = %v; want it admitted", err)
	}
	if _, err := admit("carol"); err == nil {
		t.Fatalf("a run past the server's limit after a double release was admitted")
	}
}

// TestAdmissionWaits: with Wait, a run past a cap waits until a slot is
// given back, or until its request ends.
func TestAdmissionWaits(t *testing.T) {
	a := newAdmission(RunLimits{PerOwner: 1, Wait: true})
	first, err := a.admit(context.Background(), "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{})
	got := make(chan error, 1)
	go func() {
		rel, err := a.admit(context.Background(), "alice", func() { close(waiting) })
		if rel != nil {
			defer rel()
		}
		got <- err
	}()
	<-waiting
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := a.admit(ctx, "alice", cancel) // gives up as soon as it waits
		gaveUp <- err
	}()
	if err := <-gaveUp; err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("a waiting run whose request ended = %v; want it to give up", err)
	}
	first()
	if err := <-got; err != nil {
		t.Errorf("the waiting run = %v; want it admitted once the slot was free", err)
	}
}

package runtime

import (
	"testing"

	"github.com/google/uuid"
)

func TestNewRunIDIsAFreshUUID(t *testing.T) {
	a, b := NewRunID(), NewRunID()
	u, err := uuid.Parse(a)
	if err != nil || u.Version() != 4 || u.String() != a {
		t.Fatalf("NewRunID() = %q (parse: %v); want a canonical version-4 UUID", a, err)
	}
	if a == b {
		t.Fatalf("NewRunID() twice = %q; want two ids", a)
	}
}

func TestEnsureRunIDKeepsAGivenID(t *testing.T) {
	o := RunOptions{RunID: "given"}
	if got := o.EnsureRunID(); got != "given" || o.RunID != "given" {
		t.Fatalf("EnsureRunID() = %q, RunID %q; want both \"given\"", got, o.RunID)
	}
	var empty RunOptions
	got := empty.EnsureRunID()
	if _, err := uuid.Parse(got); err != nil || empty.RunID != got || empty.EnsureRunID() != got {
		t.Fatalf("EnsureRunID() on empty options = %q, RunID %q; want one minted id, kept", got, empty.RunID)
	}
}

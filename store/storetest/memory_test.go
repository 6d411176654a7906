package storetest_test

import (
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/storetest"
)

// TestMemoryStore holds the engine's default in-memory store to the same
// contract as the persistent stores.
func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) runtime.Store { return runtime.NewMemoryStore(0) })
}

// TestMemoryStoreRetention: the memory store prunes like the others.
func TestMemoryStoreRetention(t *testing.T) {
	storetest.Retention(t, func(t *testing.T, r runtime.Retention, now func() time.Time) runtime.Store {
		s := runtime.NewMemoryStore(r.MaxRuns)
		t.Cleanup(s.Retain(r, now))
		return s
	})
}

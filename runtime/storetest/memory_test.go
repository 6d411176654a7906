package storetest_test

import (
	"testing"

	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/runtime/storetest"
)

// TestMemoryStore holds the engine's default in-memory store to the same
// contract as the persistent stores.
func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) runtime.Store { return runtime.NewMemoryStore(0) })
}

package semantictest

import (
	"context"
	"sync"

	"github.com/vmcp-dev/vmcp/internal/fakebackend"
	"github.com/vmcp-dev/vmcp/runtime"
)

// --- fake backend ---

// The fake backend lives in internal/fakebackend, shared with the
// runtime's unit tests; these names keep the cases short.
type (
	fakeTool    = fakebackend.Tool
	fakeBackend = fakebackend.Backend
)

var newFake = fakebackend.New

// --- a scripted elicitor ---

// scriptedElicitor answers every question with res, or hangs until the
// context ends, and records the requests.
type scriptedElicitor struct {
	res  runtime.ElicitResult
	hang bool
	mu   sync.Mutex
	reqs []runtime.ElicitRequest
}

func (s *scriptedElicitor) Elicit(ctx context.Context, req runtime.ElicitRequest) (runtime.ElicitResult, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if s.hang {
		<-ctx.Done()
		return runtime.ElicitResult{}, ctx.Err()
	}
	return s.res, nil
}

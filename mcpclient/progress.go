package mcpclient

// Progress of backend tool calls: a call whose context carries a
// toolcall.Progress gets a progress token of its own, unique across
// the manager's backends, and the notifications/progress the backend sends
// with that token are handed to the receiver. mcp-go's clients call
// notification handlers on the goroutine that reads the backend's
// messages, one at a time, so the receiver sees them in the order the
// backend sent them, and before the call's result.

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/toolcall"
)

type progressRoutes struct {
	next atomic.Uint64
	mu   sync.Mutex
	byID map[string]toolcall.Progress
}

// add registers fn under a new token; done removes it.
func (p *progressRoutes) add(fn toolcall.Progress) (token string, done func()) {
	token = fmt.Sprintf("vmcp-%d", p.next.Add(1))
	p.mu.Lock()
	if p.byID == nil {
		p.byID = map[string]toolcall.Progress{}
	}
	p.byID[token] = fn
	p.mu.Unlock()
	return token, func() {
		p.mu.Lock()
		delete(p.byID, token)
		p.mu.Unlock()
	}
}

// route hands a notifications/progress to the call it belongs to, if that
// call is still running.
func (p *progressRoutes) route(n mcp.JSONRPCNotification) {
	f := n.Params.AdditionalFields
	token := fmt.Sprint(f["progressToken"])
	p.mu.Lock()
	fn := p.byID[token]
	p.mu.Unlock()
	if fn == nil {
		return
	}
	progress, _ := f["progress"].(float64)
	total, _ := f["total"].(float64)
	message, _ := f["message"].(string)
	fn(progress, total, message)
}

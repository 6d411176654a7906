package testservers

import (
	"io"
	"sync"
)

// Gate is a reader that stops: until Close it reads from R, and from then
// on a Read blocks forever (also one already waiting on R). A stdio MCP
// server reading its stdin through a Gate stops reading when told to, so
// the pipe from its client fills up and the client's writes block, as with
// a server stuck in a handler that reads its input synchronously.
type Gate struct {
	r      io.Reader
	once   sync.Once
	closed chan struct{}
}

// NewGate returns an open Gate over r.
func NewGate(r io.Reader) *Gate { return &Gate{r: r, closed: make(chan struct{})} }

func (g *Gate) Read(p []byte) (int, error) {
	select {
	case <-g.closed:
		select {}
	default:
	}
	n, err := g.r.Read(p)
	select {
	case <-g.closed:
		// Bytes read after the gate closed are never handled either.
		select {}
	default:
	}
	return n, err
}

// Close stops all reading for good.
func (g *Gate) Close() { g.once.Do(func() { close(g.closed) }) }

package mcpclient

// Bounding HTTP answers (limits.maxResultBytes).
//
// mcp-go reads a streamable HTTP response whole: a JSON body with one
// json.Decoder, an event-stream body one event at a time with an unbounded
// ReadString. The HTTP client's transport therefore wraps the body of every
// POST (the requests that carry calls; the GET listening stream is left
// alone) in a reader that fails once more than the limit has been read, so
// an answer over the limit costs at most the limit in memory. mcp-go does
// not always pass the read error on (an event stream that breaks off is
// "unexpected nil response"), so the body also marks the call's context,
// and CallRaw looks there.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
)

// errBodyTooLarge is the read error of a response body over the limit.
var errBodyTooLarge = errors.New("response body over limits.maxResultBytes")

// overLimitKey carries an *atomic.Bool in a call's context that a body over
// the limit sets.
type overLimitKey struct{}

// withOverLimitMark returns ctx carrying a fresh mark and the mark.
func withOverLimitMark(ctx context.Context) (context.Context, *atomic.Bool) {
	mark := new(atomic.Bool)
	return context.WithValue(ctx, overLimitKey{}, mark), mark
}

// limitedTransport limits the bodies of POST responses to limit bytes.
type limitedTransport struct {
	next  http.RoundTripper
	limit int64
}

func (t *limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost {
		return resp, err
	}
	mark, _ := req.Context().Value(overLimitKey{}).(*atomic.Bool)
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: t.limit, mark: mark}
	return resp, nil
}

// limitedBody fails reads once more than left bytes came.
type limitedBody struct {
	io.ReadCloser
	left int64
	mark *atomic.Bool // may be nil
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		if b.mark != nil {
			b.mark.Store(true)
		}
		b.ReadCloser.Close()
		return 0, errBodyTooLarge
	}
	return n, err
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// wrapped transport.
func (t *limitedTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

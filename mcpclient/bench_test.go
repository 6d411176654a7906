package mcpclient

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/runtime"
)

// BenchmarkCallTool measures one echo call through the Manager to the fake
// server, over stdio and over streamable HTTP on loopback: the baseline
// that the mediator's own overhead adds to.
func BenchmarkCallTool(b *testing.B) {
	for _, tc := range []struct {
		name    string
		backend func(b *testing.B) *config.Backend
	}{
		{"stdio", func(*testing.B) *config.Backend { return fakeBackend(nil) }},
		{"streamable-http", func(b *testing.B) *config.Backend {
			url, _ := serveFakeHTTP(b, "tok")
			return &config.Backend{URL: url, Transport: config.TransportStreamableHTTP,
				Headers: map[string]string{"Authorization": "Bearer tok"}, Timeout: 20 * time.Second}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m := connect(b, map[string]*config.Backend{"fake": tc.backend(b)})
			ctx := context.Background()
			call := runtime.ToolCall{Backend: "fake", Tool: "echo", Arguments: map[string]any{"message": "x"}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.CallTool(ctx, call); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLineLimiter measures what the stdout limiter adds to reading a
// backend's answers the way mcp-go does (one bufio.Reader, ReadString per
// line) from one session's stream: small answers, and answers of 1 MiB of
// text, both under the limit.
func BenchmarkLineLimiter(b *testing.B) {
	for _, size := range []int{200, 1 << 20} {
		line := `{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"` + strings.Repeat("t", size) + `"}]}}` + "\n"
		for _, limited := range []bool{false, true} {
			b.Run(fmt.Sprintf("bytes=%d/limited=%v", size, limited), func(b *testing.B) {
				var r io.Reader = &repeatReader{s: line}
				if limited {
					r = &lineLimiter{r: r, limit: config.DefaultMaxResultBytes}
				}
				br := bufio.NewReader(r)
				b.SetBytes(int64(len(line)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := br.ReadString('\n'); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// repeatReader reads s over and over.
type repeatReader struct {
	s   string
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := copy(p, r.s[r.off:])
	r.off = (r.off + n) % len(r.s)
	return n, nil
}

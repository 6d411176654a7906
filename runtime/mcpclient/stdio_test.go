package mcpclient

import (
	"bufio"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
)

// chunkReader hands out its input in small pieces, so lines cross reads.
type chunkReader struct {
	s string
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	k := min(len(p), r.n, len(r.s))
	copy(p, r.s[:k])
	r.s = r.s[k:]
	return k, nil
}

func TestLineLimiterReplacesLinesOverTheLimit(t *testing.T) {
	huge := strings.Repeat("x", 5000)
	tooLarge := func(id string, line string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32000,"message":"vmcp: answer over limits.maxResultBytes: ` +
			strconv.Itoa(len(line)) + `"}}`
	}
	idFirst := `{"jsonrpc":"2.0","id":7,"result":{"text":"` + huge + `"}}`
	idLast := `{"result":{"content":[{"type":"text","text":"` + huge + `\"}\\"}]},"jsonrpc":"2.0","id":"abc"}`
	nested := `{"result":{"id":99,"x":"` + huge + `"},"id":3}`
	tests := []struct {
		name, in string
		want     []string // the lines mcp-go reads
	}{
		{"short lines pass", `{"id":1,"result":{}}` + "\n" + `{"id":2}` + "\n",
			[]string{`{"id":1,"result":{}}`, `{"id":2}`}},
		{"id first", idFirst + "\n" + `{"id":8}` + "\n", []string{"<fragment>", tooLarge("7", idFirst), `{"id":8}`}},
		{"id last, as the TypeScript SDK writes it", idLast + "\n", []string{"<fragment>", tooLarge(`"abc"`, idLast)}},
		{"nested ids do not count", nested + "\n", []string{"<fragment>", tooLarge("3", nested)}},
		{"a notification over the limit is dropped", `{"method":"notifications/message","params":{"x":"` + huge + `"}}` + "\n" + `{"id":4}` + "\n",
			[]string{"<fragment>", `{"id":4}`}},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 7, 4096} {
			l := &lineLimiter{r: &chunkReader{s: tt.in, n: chunk}, limit: 1000, log: slog.New(slog.DiscardHandler), backend: "b"}
			br := bufio.NewReader(l)
			var got []string
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					break
				}
				line = strings.TrimSuffix(line, "\n")
				if len(line) > 1000 {
					t.Errorf("%s (reads of %d): a line of %d bytes passed a limit of 1000", tt.name, chunk, len(line))
				}
				if strings.HasPrefix(line, `{"jsonrpc":"2.0","id":7,"result"`) || strings.HasPrefix(line, `{"result":`) || strings.HasPrefix(line, `{"method"`) {
					line = "<fragment>"
				}
				got = append(got, line)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("%s (reads of %d): lines =\n%q\nwant\n%q", tt.name, chunk, got, tt.want)
			}
		}
	}
}

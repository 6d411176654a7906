package postgres

// Column encodings, the same as the SQLite store's (store/sqlite):
// times are BIGINT Unix nanoseconds (a timestamptz keeps microseconds, and
// a run's record must round-trip to the nanosecond), JSON values are TEXT
// (jsonb would reorder keys and refuse the damaged rows that Unreadable
// reports), and an output over Options.MaxOutputBytes is replaced by a
// truncation marker. Free text (a step's error and note) has its NUL bytes
// and invalid UTF-8 replaced, which PostgreSQL's TEXT refuses.

import (
	"strings"
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/store/internal/rowcodec"
)

// codec encodes the store's rows: the encodings the SQLite store uses
// (rowcodec), with free text made storable as TEXT (cleanText).
func (s *Store) codec() rowcodec.Codec {
	return rowcodec.Codec{MaxOutputBytes: s.opts.MaxOutputBytes, Clean: cleanText}
}

// cleanText makes s storable as TEXT: invalid UTF-8 and NUL become U+FFFD.
func cleanText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

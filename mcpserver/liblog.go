package mcpserver

import (
	"context"
	"log/slog"
)

// libraryLogger is the logger mcp-go's HTTP transport writes to: vmcp's
// own, with the library's INFO messages lowered to DEBUG. Those speak the
// library's language, not vmcp's (every elicitation answer over HTTP is
// "Delivered sampling response"), and already have vmcp's own INFO line
// where they matter. Warnings and errors keep their level.
func libraryLogger(l *slog.Logger) *slog.Logger {
	return slog.New(demoteInfo{l.Handler()})
}

type demoteInfo struct{ h slog.Handler }

func demote(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}

func (d demoteInfo) Enabled(ctx context.Context, l slog.Level) bool {
	return d.h.Enabled(ctx, demote(l))
}

func (d demoteInfo) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return d.h.Handle(ctx, r)
}

func (d demoteInfo) WithAttrs(as []slog.Attr) slog.Handler { return demoteInfo{d.h.WithAttrs(as)} }
func (d demoteInfo) WithGroup(n string) slog.Handler       { return demoteInfo{d.h.WithGroup(n)} }

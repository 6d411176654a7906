package fake

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

// Delay is one server's latency per tool call.
type Delay struct{ D time.Duration }

// Flag defines -name on fs, a Go duration whose default is the value of
// the environment variable env (0 when unset). A malformed value of env is
// an error naming it.
func Flag(fs *flag.FlagSet, name, env string) (*Delay, error) {
	d := &Delay{}
	if v := os.Getenv(env); v != "" {
		parsed, err := time.ParseDuration(v)
		if err != nil || parsed < 0 {
			return nil, fmt.Errorf("%s=%q: want a non-negative Go duration such as 5ms", env, v)
		}
		d.D = parsed
	}
	fs.DurationVar(&d.D, name, d.D, "artificial latency of every tool call (default $"+env+", else 0)")
	return d, nil
}

// Wait sleeps for the delay, or returns ctx's error when the call is
// cancelled first.
func (d *Delay) Wait(ctx context.Context) error {
	if d.D <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d.D)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

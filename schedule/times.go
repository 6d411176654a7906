package schedule

// When a schedule ticks: next(t) is the first tick strictly after t.

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/vmcp-dev/vmcp/config"
)

// times gives a schedule's ticks.
type times interface {
	next(t time.Time) time.Time
}

// every ticks at the multiples of d since the Unix epoch.
type every time.Duration

func (e every) next(t time.Time) time.Time {
	d := int64(e)
	n := t.UnixNano()
	k := n / d
	if n < 0 && n%d != 0 {
		k-- // floor, for times before 1970
	}
	return time.Unix(0, (k+1)*d).In(t.Location())
}

// cronTimes ticks when a cron expression matches, read in loc.
type cronTimes struct {
	spec cron.Schedule
	loc  *time.Location
}

func (c cronTimes) next(t time.Time) time.Time { return c.spec.Next(t.In(c.loc)) }

// timesOf parses a schedule's cron or every. The config loader checked
// both, so an error here is a config that did not come from it.
func timesOf(s *config.Schedule) (times, error) {
	if s.Every > 0 {
		return every(s.Every), nil
	}
	spec, err := cron.ParseStandard(s.Cron)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: cron %q: %v", s.Name, s.Cron, err)
	}
	loc := time.UTC
	if s.Timezone != "" {
		if loc, err = time.LoadLocation(s.Timezone); err != nil {
			return nil, fmt.Errorf("schedule %q: timezone %q: %v", s.Name, s.Timezone, err)
		}
	}
	return cronTimes{spec: spec, loc: loc}, nil
}

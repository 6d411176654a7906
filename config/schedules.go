package config

// Reading `schedules:`, the runs vmcp starts on its own: a list of
// {name, workflow, cron | every, timezone, arguments, overlap, catchUp}.
// What can be checked from the file alone is checked here, each problem at
// its own position: the name (letters, digits, '_' and '-', unique), one
// of cron (five fields, parsed by robfig/cron/v3, the parser the scheduler
// uses) and every (a Go duration of at least a second), a timezone known
// to the tz database, overlap skip or allow. Whether the workflow exists
// and whether the arguments match its parameters needs the compiled
// workflows: vmcp run checks that at startup (schedule.Check), at the
// positions kept here.

import (
	"fmt"
	"time"

	yaml "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/robfig/cron/v3"

	"github.com/vmcp-dev/vmcp/ir"
)

// Overlap policies of a schedule.
const (
	OverlapSkip  = "skip"
	OverlapAllow = "allow"
)

// ScheduleTriggerPrefix starts the trigger, and the owner, of a scheduled
// run: schedule:NAME. A token's name has no ":", so no caller owns a
// schedule's runs.
const ScheduleTriggerPrefix = "schedule:"

// ScheduleTrigger is the trigger and the owner of schedule name's runs.
func ScheduleTrigger(name string) string { return ScheduleTriggerPrefix + name }

// MinEvery is the shortest `every` a schedule may have.
const MinEvery = time.Second

// Schedule is one entry of schedules:.
type Schedule struct {
	// Name is unique among the schedules; the runs it starts are owned
	// by "schedule:NAME" and have the trigger "schedule:NAME".
	Name string
	// Workflow is the workflow the schedule runs, with Arguments as its
	// parameters (nil for none).
	Workflow  string
	Arguments map[string]any
	// Cron is a five-field cron expression (minute hour day-of-month month
	// day-of-week, or a descriptor such as @hourly), read in Timezone
	// (an IANA name; "" is UTC). Every is the other way to give the
	// times: every multiple of it since the Unix epoch. Exactly one is
	// set.
	Cron     string
	Timezone string
	Every    time.Duration
	// Overlap is what a tick does while the schedule's previous run still
	// runs: OverlapSkip (the default) skips it, OverlapAllow starts
	// another run.
	Overlap string
	// CatchUp runs a tick missed while vmcp was down once, at startup.
	CatchUp bool
	// Pos is the entry's position, and WorkflowPos and ArgumentsPos those
	// of its workflow and arguments values (the entry's when absent), for
	// the checks made once the workflows are compiled.
	Pos, WorkflowPos, ArgumentsPos ir.Pos
}

// schedules reads the schedules: list.
func (l *loader) schedules(n ast.Node) {
	n = unwrap(n)
	if _, null := n.(*ast.NullNode); null {
		return
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		l.errorf(n, "schedules", CodeBadType, "schedules must be a list of {name, workflow, cron or every}, not %s", kind(n))
		return
	}
	seen := map[string]string{}
	for i, e := range seq.Values {
		path := fmt.Sprintf("schedules[%d]", i)
		s := l.schedule(e, path)
		if s == nil {
			continue
		}
		if first, dup := seen[s.Name]; dup {
			l.diags.Errorf(s.Pos, path+".name", CodeDuplicateKey, "%s has the name %q, as %s has: schedule names are unique (they name the runs' owner and trigger)", path, s.Name, first)
			continue
		}
		seen[s.Name] = path
		l.cfg.Schedules = append(l.cfg.Schedules, s)
	}
}

// schedule reads one entry; nil when it has errors.
func (l *loader) schedule(n ast.Node, path string) *Schedule {
	s := &Schedule{Overlap: OverlapSkip, Pos: l.pos(n)}
	s.WorkflowPos, s.ArgumentsPos = s.Pos, s.Pos
	before := len(l.diags.Errors())
	var cronNode, tzNode ast.Node
	known := []string{"name", "workflow", "cron", "every", "timezone", "arguments", "overlap", "catchUp"}
	l.fields(n, path, known, func(key string, k, v ast.Node) {
		p := joinPath(path, key)
		switch key {
		case "name":
			name, ok := l.str(v, p, p)
			if ok && !backendNameRE.MatchString(name) {
				l.errorf(v, p, CodeBadName, "schedule name %q must be letters, digits, '_' and '-' (its runs are owned by schedule:%s)", name, name)
				ok = false
			}
			if ok {
				s.Name = name
			}
		case "workflow":
			s.Workflow, _ = l.str(v, p, p)
			s.WorkflowPos = l.pos(v)
		case "cron":
			cronNode = v
			s.Cron, _ = l.str(v, p, p)
		case "every":
			if d := l.duration(v, p, p); d > 0 {
				if d < MinEvery {
					l.errorf(v, p, CodeBadValue, "%s must be at least %s, not %s", p, MinEvery, d)
				}
				s.Every = d
			}
		case "timezone":
			tzNode = v
			s.Timezone, _ = l.str(v, p, p)
		case "arguments":
			s.ArgumentsPos = l.pos(v)
			s.Arguments = l.arguments(v, p)
		case "overlap":
			if o, ok := l.oneOf(v, p, p, OverlapSkip, OverlapAllow); ok {
				s.Overlap = o
			}
		case "catchUp":
			s.CatchUp = l.boolean(v, p, p)
		}
	})
	if _, isMap := unwrap(n).(*ast.MappingNode); !isMap {
		if _, null := unwrap(n).(*ast.NullNode); !null {
			return nil // reported by fields
		}
	}
	what := path
	if s.Name != "" {
		what = fmt.Sprintf("schedule %q", s.Name)
	}
	if s.Name == "" && !l.hasKey(n, "name") {
		l.errorf(n, path, CodeMissingField, "%s needs a name (it names the runs' owner and trigger, schedule:NAME)", path)
	}
	if s.Workflow == "" && !l.hasKey(n, "workflow") {
		l.errorf(n, path, CodeMissingField, "%s needs a workflow, the one it runs", what)
	}
	hasCron, hasEvery := l.hasKey(n, "cron"), l.hasKey(n, "every")
	switch {
	case hasCron && hasEvery:
		l.errorf(n, path, CodeBadValue, "%s has both cron and every; give one (cron: \"*/15 * * * *\" or every: 30s)", what)
	case !hasCron && !hasEvery:
		l.errorf(n, path, CodeMissingField, "%s needs cron (five fields, for example \"*/15 * * * *\") or every (a duration, for example 30s)", what)
	case hasCron && s.Cron != "":
		if _, err := cron.ParseStandard(s.Cron); err != nil {
			l.errorf(cronNode, path+".cron", CodeBadValue, "%s: %q is not a cron expression: %v (five fields: minute hour day-of-month month day-of-week, for example \"*/15 * * * *\")", what, s.Cron, err)
		}
	}
	if tzNode != nil && s.Timezone != "" {
		if hasEvery {
			l.errorf(tzNode, path+".timezone", CodeBadValue, "%s: timezone applies to cron only (every counts from the Unix epoch)", what)
		} else if _, err := time.LoadLocation(s.Timezone); err != nil {
			l.errorf(tzNode, path+".timezone", CodeBadValue, "%s: timezone %q is not in the tz database (for example UTC, Europe/Paris, America/New_York)", what, s.Timezone)
		}
	}
	if len(l.diags.Errors()) > before {
		return nil
	}
	return s
}

// arguments reads a schedule's arguments: a mapping of plain YAML values
// (checked against the workflow's parameters at startup).
func (l *loader) arguments(n ast.Node, path string) map[string]any {
	if _, null := unwrap(n).(*ast.NullNode); null {
		return nil
	}
	if _, isMap := unwrap(n).(*ast.MappingNode); !isMap {
		l.errorf(n, path, CodeBadType, "%s must be a mapping of parameter names to values, not %s", path, kind(unwrap(n)))
		return nil
	}
	var out map[string]any
	if err := yaml.NodeToValue(unwrap(n), &out); err != nil {
		l.errorf(n, path, CodeBadValue, "%s: %v", path, err)
		return nil
	}
	return out
}

package main

// The schedules of vmcp.yaml (package schedule): checked against the
// compiled workflows when the stack opens, started by vmcp run once its
// runner is ready, stopped at the first signal (the runs they started
// are then the shutdown's, like any other).

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/schedule"
)

// checkSchedules reports, on diagOut with the config's source lines, the
// schedules whose workflow is not served or whose arguments do not match
// its parameters.
func (st *stack) checkSchedules(diagOut io.Writer) error {
	if len(st.cfg.Schedules) == 0 {
		return nil
	}
	var names []string
	for _, wf := range st.plan.Workflows {
		names = append(names, wf.Name)
	}
	diags := schedule.Check(st.cfg.Schedules, names, st.engine.ValidateParams)
	if !diags.HasErrors() {
		return nil
	}
	src := diag.Sources{}
	if b, err := os.ReadFile(st.cfg.Path); err == nil {
		for _, d := range diags {
			src[d.Pos.File] = b
		}
	}
	diag.Print(diagOut, diags.Sorted(), diag.Text, src)
	return failuref("%d error(s) in the schedules of %s", len(diags.Errors()), st.cfg.Path)
}

// startSchedules fires the schedules' runs through runner until ticks
// ends (the first signal); the runs go on under runs (the server's
// context). It returns the scheduler's Stop.
func (st *stack) startSchedules(ticks, runs context.Context, runner schedule.Runner, log *slog.Logger) (func(), error) {
	if len(st.cfg.Schedules) == 0 {
		return func() {}, nil
	}
	s, err := schedule.New(st.cfg.Schedules, schedule.Options{Runner: runner, Store: st.exec.Store(), Logger: log})
	if err != nil {
		return nil, err
	}
	s.Start(ticks, runs)
	log.Info("schedules started", "count", len(st.cfg.Schedules))
	return s.Stop, nil
}

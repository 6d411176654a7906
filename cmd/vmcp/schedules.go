package main

// The schedules of vmcp.yaml (package schedule): checked against the
// compiled workflows when the stack opens, started by vmcp run once its
// runner is ready, stopped at the first signal (the runs they started
// are then the shutdown's, like any other). With executor: temporal they
// are Temporal Schedules instead (temporalrun/schedules.go): Temporal
// fires them, and vmcp run records and follows their runs.

import (
	"context"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/schedule"
	"github.com/vmcp-dev/vmcp/temporalrun"
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
	if tr, ok := st.exec.(*temporalrun.Runner); ok {
		return startTemporalSchedules(ticks, tr, st.cfg.Schedules, log)
	}
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

// startTemporalSchedules makes the schedules Temporal Schedules (also
// with none: those of an earlier config are deleted), and records and
// follows the runs they fire until ticks ends (temporalrun/schedules.go).
func startTemporalSchedules(ticks context.Context, tr *temporalrun.Runner, list []*config.Schedule, log *slog.Logger) (func(), error) {
	ctx, cancel := context.WithTimeout(ticks, time.Minute)
	defer cancel()
	if err := tr.ReconcileSchedules(ctx, list); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return func() {}, nil
	}
	watch, stop := context.WithCancel(ticks)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr.WatchSchedules(watch, list)
	}()
	log.Info("schedules started as Temporal Schedules", "count", len(list))
	return func() { stop(); <-done }, nil
}

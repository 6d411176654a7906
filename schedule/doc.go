// Package schedule starts the runs of vmcp.yaml's schedules: (config.Schedule)
// on their own, through the same runner as a client's call, so a scheduled
// run is a run like any other: stored, traced, shown in the console and the
// API, cancelled by the shutdown.
//
// In: the config's schedules, a Runner (vmcp run's, which counts and
// tracks runs), the run Store, a logger. Out: runs owned by
// "schedule:NAME" with the trigger "schedule:NAME" (Trigger, Owner). Entry
// points: Check, at startup, that every schedule's workflow is served and
// its arguments match the workflow's parameters (a diag.List with the
// config's positions); New and Start to run them; Stop to stop ticking.
//
// The algorithm (scheduler.go):
//
//   - Times. A cron schedule's ticks are the times robfig/cron/v3's
//     standard parser gives, in the schedule's timezone (UTC by default;
//     a daylight-saving gap or repeat is the library's rule: a time that
//     does not exist is skipped, a repeated one fires once). An `every: D`
//     schedule ticks at every multiple of D since the Unix epoch, so the
//     ticks are the same times in every process and across restarts.
//   - The last fire is the store's: the start time of the newest run whose
//     trigger is schedule:NAME. Nothing else is kept.
//   - At start, when the tick after the last fire is already past, ticks
//     were missed while vmcp was down: with catchUp the newest missed
//     tick is run once, now; without it they are logged and dropped. A
//     schedule that never fired has missed nothing.
//   - Then each schedule waits for its next tick after max(now, last
//     fire), fires it, and waits for the one after. A tick is never
//     fired twice: the next tick is always strictly after the last fire.
//   - overlap: skip (the default) skips a tick, logging it, while the
//     schedule's previous run has not finished: the one this process
//     started, or a running one in the store (a run resumed after a
//     restart). overlap: allow starts another run.
//   - A tick's run id is derived from the schedule's name and the tick's
//     time (a name-based UUID), so two processes sharing a store that
//     fire one tick create one run: the second CreateRun is refused.
package schedule

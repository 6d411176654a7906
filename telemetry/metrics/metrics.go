package metrics

// How events become metrics. Observe keeps, per active run, the run's start
// time and the start time of each running step (keyed by run id, then step
// id). run_started adds the run; step_started adds a step and raises the
// steps-in-flight gauge; step_completed and step_failed observe the step's
// duration from its recorded start and lower the gauge; step_retrying counts
// a retry; run_finished observes the run's duration and final status,
// lowers the in-flight gauges for the run and for any step still recorded
// (a cancelled run may stop steps without a step event), and forgets the
// run. Events carry their own timestamps, so durations do not depend on when
// Observe happens to be called. Labels are bounded by the plan: workflow
// names, step ids, backend and tool names, and fixed status words.

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vmcp-dev/vmcp/runtime"
)

// durationBuckets span a fast backend call to a long workflow (seconds).
var durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800}

// Metrics holds vmcp's collectors and the registry they are on.
type Metrics struct {
	reg *prometheus.Registry

	runs          *prometheus.CounterVec   // workflow, status
	runDuration   *prometheus.HistogramVec // workflow, status
	runsInFlight  *prometheus.GaugeVec     // workflow
	steps         *prometheus.CounterVec   // workflow, status
	stepDuration  *prometheus.HistogramVec // workflow, step, status
	stepsInFlight *prometheus.GaugeVec     // workflow
	retries       *prometheus.CounterVec   // workflow, step
	callDuration  *prometheus.HistogramVec // backend, tool
	callErrors    *prometheus.CounterVec   // backend, tool, kind
	callsInFlight *prometheus.GaugeVec     // backend

	mu     sync.Mutex
	active map[string]*activeRun
}

type activeRun struct {
	workflow string
	started  time.Time
	steps    map[string]time.Time
}

// New returns metrics registered on a new registry, with the Go runtime
// and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg:    prometheus.NewRegistry(),
		active: map[string]*activeRun{},
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmcp_runs_total", Help: "Finished workflow runs by workflow and final status.",
		}, []string{"workflow", "status"}),
		runDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "vmcp_run_duration_seconds", Help: "Duration of finished workflow runs.", Buckets: durationBuckets,
		}, []string{"workflow", "status"}),
		runsInFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "vmcp_runs_in_flight", Help: "Workflow runs currently executing.",
		}, []string{"workflow"}),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmcp_steps_total", Help: "Finished steps by workflow and status (completed, failed, skipped).",
		}, []string{"workflow", "status"}),
		stepDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "vmcp_step_duration_seconds", Help: "Duration of steps that ran, retries included.", Buckets: durationBuckets,
		}, []string{"workflow", "step", "status"}),
		stepsInFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "vmcp_steps_in_flight", Help: "Steps currently running.",
		}, []string{"workflow"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmcp_step_retries_total", Help: "Step retries (attempts after the first).",
		}, []string{"workflow", "step"}),
		callDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "vmcp_backend_call_duration_seconds", Help: "Latency of backend tool calls, failed ones included.", Buckets: durationBuckets,
		}, []string{"backend", "tool"}),
		callErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmcp_backend_call_errors_total", Help: "Failed backend tool calls by kind: error (transport or protocol), tool_error (isError result), cancelled.",
		}, []string{"backend", "tool", "kind"}),
		callsInFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "vmcp_backend_calls_in_flight", Help: "Backend tool calls currently waiting for an answer.",
		}, []string{"backend"}),
	}
	m.reg.MustRegister(m.runs, m.runDuration, m.runsInFlight, m.steps, m.stepDuration, m.stepsInFlight,
		m.retries, m.callDuration, m.callErrors, m.callsInFlight,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry, for tests and extra collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Observe records one engine event. It is safe for concurrent use and
// meant to be (part of) runtime.RunOptions.OnEvent.
func (m *Metrics) Observe(ev runtime.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch ev.Kind {
	case runtime.EventRunStarted:
		if _, ok := m.active[ev.RunID]; ok {
			return
		}
		m.active[ev.RunID] = &activeRun{workflow: ev.Workflow, started: ev.Time, steps: map[string]time.Time{}}
		m.runsInFlight.WithLabelValues(ev.Workflow).Inc()
	case runtime.EventStepStarted:
		ar := m.active[ev.RunID]
		if ar == nil {
			return
		}
		if _, ok := ar.steps[ev.StepID]; !ok {
			ar.steps[ev.StepID] = ev.Time
			m.stepsInFlight.WithLabelValues(ev.Workflow).Inc()
		}
	case runtime.EventStepRetrying:
		m.retries.WithLabelValues(ev.Workflow, ev.StepID).Inc()
	case runtime.EventStepCompleted, runtime.EventStepFailed, runtime.EventStepSkipped:
		status := stepStatus(ev.Kind)
		m.steps.WithLabelValues(ev.Workflow, status).Inc()
		ar := m.active[ev.RunID]
		if ar == nil {
			return
		}
		if start, ok := ar.steps[ev.StepID]; ok {
			delete(ar.steps, ev.StepID)
			m.stepsInFlight.WithLabelValues(ev.Workflow).Dec()
			m.stepDuration.WithLabelValues(ev.Workflow, ev.StepID, status).Observe(seconds(start, ev.Time))
		}
	case runtime.EventRunFinished:
		status := string(ev.Status)
		m.runs.WithLabelValues(ev.Workflow, status).Inc()
		ar := m.active[ev.RunID]
		if ar == nil {
			return
		}
		delete(m.active, ev.RunID)
		m.runsInFlight.WithLabelValues(ar.workflow).Dec()
		m.stepsInFlight.WithLabelValues(ar.workflow).Sub(float64(len(ar.steps)))
		m.runDuration.WithLabelValues(ar.workflow, status).Observe(seconds(ar.started, ev.Time))
	}
}

func stepStatus(k runtime.EventKind) string {
	switch k {
	case runtime.EventStepCompleted:
		return string(runtime.StepCompleted)
	case runtime.EventStepFailed:
		return string(runtime.StepFailed)
	default:
		return string(runtime.StepSkipped)
	}
}

func seconds(from, to time.Time) float64 {
	if from.IsZero() || to.Before(from) {
		return 0
	}
	return to.Sub(from).Seconds()
}

// WrapBackend returns a Backend that calls b and measures every call.
func (m *Metrics) WrapBackend(b runtime.Backend) runtime.Backend {
	return &timedBackend{next: b, m: m}
}

type timedBackend struct {
	next runtime.Backend
	m    *Metrics
}

func (t *timedBackend) CallTool(ctx context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	inFlight := t.m.callsInFlight.WithLabelValues(call.Backend)
	inFlight.Inc()
	start := time.Now()
	res, err := t.next.CallTool(ctx, call)
	t.m.callDuration.WithLabelValues(call.Backend, call.Tool).Observe(time.Since(start).Seconds())
	inFlight.Dec()
	switch {
	case err != nil && ctx.Err() != nil:
		t.m.callErrors.WithLabelValues(call.Backend, call.Tool, "cancelled").Inc()
	case err != nil:
		t.m.callErrors.WithLabelValues(call.Backend, call.Tool, "error").Inc()
	case res != nil && res.IsError:
		t.m.callErrors.WithLabelValues(call.Backend, call.Tool, "tool_error").Inc()
	}
	return res, err
}

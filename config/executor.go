package config

// The executor: section of vmcp.yaml says where runs execute. kind: local
// (the default) runs them in the vmcp process; kind: temporal starts each
// run as a Temporal workflow on the server at address, in namespace, on
// the task queue that `vmcp worker` processes poll (design.md "Scale-out
// on Temporal").
//
//	executor: {kind: temporal, address: 127.0.0.1:7233, namespace: default, taskQueue: vmcp}
//
// heartbeatTimeout (default 10s) is how long a worker may be silent during
// a backend call before Temporal takes it for dead and the step's fate is
// decided: run again on another worker when it is idempotent, the run
// interrupted at it otherwise.
//
// localActivities (default true) lets a worker run quick steps that may
// run twice as Temporal local activities, in the workflow task that
// starts them (temporalrun/quick.go): milliseconds per step instead of
// tens. A step is quick when its tool's calls on the worker have averaged
// 10ms or less, or when the tool is listed in quickTools (backend.tool).

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// Executor kinds.
const (
	ExecutorLocal    = "local"
	ExecutorTemporal = "temporal"
)

// Defaults of the executor section under kind: temporal.
const (
	DefaultTemporalAddress   = "127.0.0.1:7233"
	DefaultTemporalNamespace = "default"
	DefaultTemporalTaskQueue = "vmcp"
	DefaultHeartbeatTimeout  = 10 * time.Second
)

// Executor is vmcp.yaml's executor: section.
type Executor struct {
	// Kind is local (default) or temporal.
	Kind string
	// Address is the Temporal frontend, host:port (default 127.0.0.1:7233).
	Address string
	// Namespace is the Temporal namespace (default "default").
	Namespace string
	// TaskQueue is the queue `vmcp worker` polls and `vmcp run` starts
	// workflows on (default "vmcp").
	TaskQueue string
	// HeartbeatTimeout bounds a worker's silence during a backend call
	// (default 10s).
	HeartbeatTimeout time.Duration
	// LocalActivities lets workers run quick steps that may run twice as
	// local activities (default true).
	LocalActivities bool
	// QuickTools are backend.tool names known to be quick: local
	// activities from their first call.
	QuickTools []string
}

// Temporal reports whether runs execute on Temporal.
func (e Executor) Temporal() bool { return e.Kind == ExecutorTemporal }

// defaultExecutor is the section when the file has none.
func defaultExecutor() Executor {
	return Executor{
		Kind:             ExecutorLocal,
		Address:          DefaultTemporalAddress,
		Namespace:        DefaultTemporalNamespace,
		TaskQueue:        DefaultTemporalTaskQueue,
		HeartbeatTimeout: DefaultHeartbeatTimeout,
		LocalActivities:  true,
	}
}

// executor reads the executor: section. The Temporal fields are accepted
// under kind: local too (they take effect when kind changes), but each is
// checked either way.
func (l *loader) executor(n ast.Node) {
	e := &l.cfg.Executor
	known := []string{"kind", "address", "namespace", "taskQueue", "heartbeatTimeout", "localActivities", "quickTools"}
	l.fields(n, "executor", known, func(key string, k, v ast.Node) {
		p := "executor." + key
		switch key {
		case "kind":
			if kind, ok := l.oneOf(v, p, p, ExecutorLocal, ExecutorTemporal); ok {
				e.Kind = kind
			}
		case "address":
			if a, ok := l.str(v, p, p); ok {
				if host, port, err := net.SplitHostPort(a); err != nil || host == "" || port == "" {
					l.errorf(v, p, CodeBadValue, "%s %q is not host:port (for example %s)", p, a, DefaultTemporalAddress)
				} else {
					e.Address = a
				}
			}
		case "namespace":
			l.nonEmpty(v, p, DefaultTemporalNamespace, &e.Namespace)
		case "taskQueue":
			l.nonEmpty(v, p, DefaultTemporalTaskQueue, &e.TaskQueue)
		case "heartbeatTimeout":
			if d := l.duration(v, p, p); d > 0 {
				e.HeartbeatTimeout = d
			}
		case "localActivities":
			e.LocalActivities = l.boolean(v, p, p)
		case "quickTools":
			for i, t := range l.strList(v, p, p) {
				if b, name, ok := strings.Cut(t, "."); !ok || b == "" || name == "" {
					item := v
					if seq, isSeq := unwrap(v).(*ast.SequenceNode); isSeq && i < len(seq.Values) {
						item = seq.Values[i]
					}
					l.errorf(item, fmt.Sprintf("%s[%d]", p, i), CodeBadValue, "%s[%d] %q is not backend.tool (for example github.list_issues)", p, i, t)
					continue
				}
				e.QuickTools = append(e.QuickTools, t)
			}
		}
	})
}

// nonEmpty reads a string field at path that, when given, may not be
// empty (leaving it out keeps def) into dst.
func (l *loader) nonEmpty(v ast.Node, path, def string, dst *string) {
	s, ok := l.str(v, path, path)
	switch {
	case !ok:
	case s == "":
		l.errorf(v, path, CodeBadValue, "%s is empty; leave it out for %q", path, def)
	default:
		*dst = s
	}
}

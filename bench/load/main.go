package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	o := defaultOptions()
	flag.IntVar(&o.Clients, "clients", o.Clients, "concurrent MCP clients, one session each")
	flag.DurationVar(&o.Duration, "duration", o.Duration, "how long the clients call")
	flag.Float64Var(&o.Tasks, "tasks", o.Tasks, "share of the calls made as MCP tasks (0 to 1); 0 uses the default protocol, as the load did before tasks")
	flag.DurationVar(&o.Poll, "poll", o.Poll, "how often a task call polls tasks/get")
	flag.IntVar(&o.Owners, "owners", o.Owners, "bearer tokens (owners) the clients are spread over")
	flag.IntVar(&o.Port, "port", 17650, "loopback port for vmcp (use 17000-17999 on shared machines)")
	flag.StringVar(&o.VMCP, "vmcp", "", "vmcp binary (default: go build ./cmd/vmcp)")
	flag.StringVar(&o.Backend, "backend", "", "test backend binary (default: go build ./e2e/testbackend)")
	flag.StringVar(&o.Store, "store", o.Store, "run store: sqlite or memory (for comparison)")
	flag.DurationVar(&o.Settle, "settle", o.Settle, "how long to wait after the load for goroutines to return to baseline")
	flag.DurationVar(&o.GCWait, "gc-wait", o.GCWait, "how long to wait after the load for vmcp's next garbage collection, to check its heap (0: check only the RSS)")
	flag.IntVar(&o.Runs, "runs", o.Runs, "server.limits.runs: runs in flight on the server")
	flag.IntVar(&o.PerOwnerRuns, "per-owner-runs", o.PerOwnerRuns, "server.limits.perOwner.runs (below clients/owners, runs wait for a slot)")
	flag.IntVar(&o.Replicas, "replicas", 0, "with N >= 2: the replica load, N vmcp processes on one PostgreSQL (on -port+1 to -port+N, PostgreSQL on -port+N+1), one killed at half time, then the same load on SQLite (-port); see replicas.go")
	flag.BoolVar(&o.PGDurable, "pg-durable", true, "with -replicas: PostgreSQL with fsync and synchronous_commit on, as in production")
	flag.DurationVar(&o.Lease, "lease", o.Lease, "with -replicas: state.lease, how long a killed replica's runs wait for another")
	flag.DurationVar(&o.RestartAfter, "restart-after", o.RestartAfter, "with -replicas: how long the killed replica stays down")
	flag.Parse()
	run := run
	if o.Replicas > 0 {
		for i := range o.Replicas {
			o.ReplicaPorts = append(o.ReplicaPorts, o.Port+1+i)
		}
		o.PGPort = o.Port + o.Replicas + 1
		run = runReplicas
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// defaultOptions is the load docs/performance.md reports: 200 clients, 30% of the
// calls tasks, for 30 seconds.
func defaultOptions() options {
	return options{
		Clients:  200,
		Duration: 30 * time.Second,
		Tasks:    0.3,
		Poll:     50 * time.Millisecond,
		Owners:   4,
		Store:    "sqlite",
		Settle:   60 * time.Second,
		// Caps the 200 clients fit under (50 per owner).
		Runs:         256,
		PerOwnerRuns: 96,
		// An idle Go program collects at the latest two minutes after
		// its last collection.
		GCWait: 150 * time.Second,
		// The replica load's.
		Lease:        2 * time.Second,
		RestartAfter: 3 * time.Second,
	}
}

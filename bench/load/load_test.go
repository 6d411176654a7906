package main

import (
	"bytes"
	"flag"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// The load test's own port range, unless -load.port names one.
const loadPortLo, loadPortHi = 17630, 17639

var loadPort = flag.Int("load.port", 0, "loopback port for vmcp (default: a free one from 17630-17639)")

// TestLoad is docs/performance.md's load, shorter: 200 clients for 10 seconds, 30%
// of the calls MCP tasks, against a real `vmcp run` with the server's caps
// on. It fails when a call fails, vmcp's count of completed runs differs
// from the clients', or the server's goroutines and RSS do not come back
// to baseline (see run; it does not wait for vmcp's next garbage
// collection, which `go run ./bench/load` does). The latencies and
// throughput are logged; none is asserted.
func TestLoad(t *testing.T) {
	o := defaultOptions()
	o.Duration = 10 * time.Second
	o.GCWait = 0 // two more minutes; the RSS is checked instead
	o.Port = *loadPort
	if o.Port == 0 {
		o.Port = testenv.FreePort(t, loadPortLo, loadPortHi)
	}
	var out bytes.Buffer
	err := run(o, &out)
	t.Logf("\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
}

// The replica load's ports: 17770-17775 (three replicas, the SQLite
// process and the PostgreSQL cluster; examples/demo's replicas page test
// has 17776-17779).
const replicaLoadLo, replicaLoadHi = 17770, 17775

// TestLoadReplicas is docs/replicas.md's load, shorter: 100 clients for
// 10 seconds on three `vmcp run` replicas on one PostgreSQL (fsync off),
// 30% of the calls tasks, the second replica SIGKILLed at 5 s and started
// again 2 s later; then the same for 10 seconds on one SQLite process. It
// fails when a run did not end exactly once under the resume rules, a call
// or a task was lost, or a call failed other than by the kill (see
// replicas.go); the latencies and throughput are logged, none asserted.
func TestLoadReplicas(t *testing.T) {
	o := defaultOptions()
	o.Clients = 100
	o.Duration = 10 * time.Second
	o.RestartAfter = 2 * time.Second
	o.Replicas = 3
	for range o.Replicas {
		o.ReplicaPorts = append(o.ReplicaPorts, testenv.FreePort(t, replicaLoadLo, replicaLoadHi))
	}
	o.Port = testenv.FreePort(t, replicaLoadLo, replicaLoadHi)
	o.PGPort = testenv.FreePort(t, replicaLoadLo, replicaLoadHi)
	var out bytes.Buffer
	err := runReplicas(o, &out)
	t.Logf("\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
}

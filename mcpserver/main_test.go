package mcpserver

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	goruntime "runtime"
	"runtime/pprof"
	"testing"
	"time"
)

// TestMain fails the package when goroutines outlive the tests: every
// server, session, run and client the tests start must be gone at the end.
// Not when fuzzing (-fuzz): the fuzzer keeps a signal goroutine of its own.
func TestMain(m *testing.M) {
	before := goruntime.NumGoroutine()
	code := m.Run()
	if fuzz := flag.Lookup("test.fuzz"); code == 0 && (fuzz == nil || fuzz.Value.String() == "") {
		if err := noLeakedGoroutines(before); err != nil {
			fmt.Fprintln(os.Stderr, err)
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			code = 1
		}
	}
	os.Exit(code)
}

func noLeakedGoroutines(before int) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Idle keep-alive connections of the test clients are not leaks.
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		n := goruntime.NumGoroutine()
		if n <= before {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d goroutines still running 10s after the tests (%d before them)", n, before)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

package main

// The recording proxy. vmcp starts every backend of a measured config
// through this program (the same binary, with RecordEnv set): it starts
// the real backend, passes its stdin and stdout through unchanged, and
// appends every JSON-RPC line to the record file with its direction, so
// the measurement counts the bytes that really crossed the wire.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// RecordEnv names the record file; when it is set, the program is a proxy
// and its arguments are the backend's command line.
const RecordEnv = "VMCP_TOKENS_RECORD"

// Directions in the record: a line vmcp sent to the backend, or one the
// backend sent to vmcp.
const (
	toBackend   = '>'
	fromBackend = '<'
)

// runProxy runs the backend args[0] with args[1:] and records its traffic
// in the file named by RecordEnv. It returns the exit code to use.
func runProxy(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "tokens proxy: no backend command")
		return 2
	}
	rec, err := os.OpenFile(os.Getenv(RecordEnv), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tokens proxy:", err)
		return 2
	}
	defer rec.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tokens proxy:", err)
		return 2
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tokens proxy:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "tokens proxy:", err)
		return 2
	}
	var mu sync.Mutex
	record := func(dir byte, line []byte) {
		mu.Lock()
		defer mu.Unlock()
		rec.Write([]byte{dir, ' '})
		rec.Write(line)
		if len(line) == 0 || line[len(line)-1] != '\n' {
			rec.Write([]byte{'\n'})
		}
	}
	go func() {
		pipe(os.Stdin, in, func(l []byte) { record(toBackend, l) })
		in.Close()
	}()
	pipe(out, os.Stdout, func(l []byte) { record(fromBackend, l) })
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		return 1
	}
	return 0
}

// pipe copies r to w line by line, calling seen with each line.
func pipe(r io.Reader, w io.Writer, seen func([]byte)) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			seen(line)
			if _, werr := w.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

package main

// The terminal elicitor of vmcp call: when stdin and stderr are terminals,
// an elicitation step asks its question on stderr and reads the answer from
// stdin, field by field from the step's schema (strings as typed; numbers,
// integers and booleans parsed), and then whether to accept, decline or
// cancel. A bare Enter takes the default the prompt shows: a field's schema
// default ("[default: 3]"), nothing for an optional field ("[optional]"),
// and cancel at the last question ("(Enter: cancel)"), so that an answer is
// only ever accepted when the user says so. A required field without a
// default is asked again. Without a terminal there is nobody to ask, so
// vmcp call passes no elicitor and the engine takes the step's onCancel
// action.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/vmcp-dev/vmcp/runtime"
)

type terminalElicitor struct {
	mu  sync.Mutex // one question at a time
	in  *bufio.Reader
	out io.Writer
	// pause stops the progress display from drawing over the question.
	pause func(bool)
}

func newTerminalElicitor(in io.Reader, out io.Writer, pause func(bool)) *terminalElicitor {
	return &terminalElicitor{in: bufio.NewReader(in), out: out, pause: pause}
}

// Elicit asks on the terminal. The step's deadline still applies: when it
// passes, the answer in progress is abandoned.
func (e *terminalElicitor) Elicit(ctx context.Context, req runtime.ElicitRequest) (runtime.ElicitResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pause != nil {
		e.pause(true)
		defer e.pause(false)
	}
	type outcome struct {
		res runtime.ElicitResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := e.ask(req)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
		fmt.Fprintln(e.out)
		return runtime.ElicitResult{}, ctx.Err()
	}
}

func (e *terminalElicitor) ask(req runtime.ElicitRequest) (runtime.ElicitResult, error) {
	who := "step " + req.StepID
	if req.Backend != "" {
		who += ", asked by " + req.Backend + "." + req.Tool
	}
	fmt.Fprintf(e.out, "\n%s (%s)\n", req.Message, who)
	props, _ := req.Schema["properties"].(map[string]any)
	required := map[string]bool{}
	if r, ok := req.Schema["required"].([]any); ok {
		for _, n := range r {
			if s, ok := n.(string); ok {
				required[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	content := map[string]any{}
	for _, name := range names {
		prop, _ := props[name].(map[string]any)
		typ, _ := prop["type"].(string)
		def, hasDefault := prop["default"]
		label := name
		if typ != "" {
			label += " (" + typ + ")"
		}
		if d, ok := prop["description"].(string); ok && d != "" {
			label += " - " + d
		}
		switch {
		case hasDefault:
			label += " [default: " + showDefault(def) + "]"
		case !required[name]:
			label += " [optional]"
		}
		for {
			line, err := e.readLine(label + ": ")
			if err != nil {
				return runtime.ElicitResult{}, err
			}
			if line == "" {
				if hasDefault {
					content[name] = def
					break
				}
				if !required[name] {
					break
				}
				fmt.Fprintf(e.out, "  %s is required\n", name)
				continue
			}
			v, err := parseAnswer(line, typ)
			if err != nil {
				fmt.Fprintf(e.out, "  %v\n", err)
				continue
			}
			content[name] = v
			break
		}
	}
	for {
		line, err := e.readLine("[a]ccept, [d]ecline or [c]ancel (Enter: cancel)? ")
		if err != nil {
			return runtime.ElicitResult{}, err
		}
		switch strings.ToLower(line) {
		case "a", "accept", "y", "yes":
			return runtime.ElicitResult{Action: runtime.ElicitAccept, Content: content}, nil
		case "d", "decline", "n", "no":
			return runtime.ElicitResult{Action: runtime.ElicitDecline}, nil
		case "c", "cancel", "":
			return runtime.ElicitResult{Action: runtime.ElicitCancel}, nil
		}
	}
}

// showDefault prints a schema default as the user would type it: strings
// as they are, anything else as JSON.
func showDefault(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func (e *terminalElicitor) readLine(prompt string) (string, error) {
	fmt.Fprint(e.out, prompt)
	line, err := e.in.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		if errors.Is(err, io.EOF) {
			return "", errors.New("stdin ended before the elicitation was answered")
		}
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// parseAnswer reads one typed field value.
func parseAnswer(s, typ string) (any, error) {
	switch typ {
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not yes or no", s)
	}
	return s, nil
}

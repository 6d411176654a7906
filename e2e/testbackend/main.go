package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/internal/testservers"
)

func main() {
	record := flag.String("record", "", "append sleep events to this file")
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	faults := flag.Bool("faults", false, "also serve big and stop_reading")
	gated := flag.Bool("gated", false, "also serve gated (for the resume tests)")
	typed := flag.Bool("typed", false, "also serve create_tickets, whose input schema is an array of objects")
	initDelay := flag.Duration("init-delay", 0, "wait this long before serving: a backend slow to come up")
	stamp := flag.Bool("stamp", false, "also serve stamp, which records when each call arrived (for the rate limit tests)")
	askers := flag.Bool("askers", false, "also serve the tools that ask their caller (testservers.AddAskers)")
	recordAuth := flag.String("record-auth", "", "with -http, append the Authorization header of every request to this file")
	flag.Parse()
	time.Sleep(*initDelay)
	r := &recorder{path: *record}
	stdin := testservers.NewGate(os.Stdin)
	sopts := []server.ServerOption{server.WithToolCapabilities(false)}
	if *askers {
		sopts = append(sopts, server.WithLegacyServerInitiatedRequests())
	}
	s := server.NewMCPServer("testbackend", "1.0.0", sopts...)
	// echo and add are pure: read-only, idempotent, closed-world (a
	// composite tool of only these may claim readOnlyHint). The other
	// tools keep mcp-go's defaults: not read-only, destructive, open-world.
	pure := []mcp.ToolOption{mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)}
	s.AddTool(mcp.NewTool("echo", append([]mcp.ToolOption{
		mcp.WithDescription("Return the text"),
		mcp.WithString("text", mcp.Required())}, pure...)...,
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultStructuredOnly(map[string]any{"text": req.GetString("text", "")}), nil
	})
	s.AddTool(mcp.NewTool("add", append([]mcp.ToolOption{
		mcp.WithDescription("Add two numbers"),
		mcp.WithNumber("a", mcp.Required()),
		mcp.WithNumber("b", mcp.Required())}, pure...)...,
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultStructuredOnly(map[string]any{"sum": req.GetFloat("a", 0) + req.GetFloat("b", 0)}), nil
	})
	s.AddTool(mcp.NewTool("sleep",
		mcp.WithDescription("Wait ms milliseconds plus seconds seconds unless cancelled"),
		mcp.WithNumber("ms", mcp.Required()),
		mcp.WithNumber("seconds"),
		mcp.WithString("label"),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		label := req.GetString("label", "sleep")
		r.add("start " + label)
		wait := time.Duration(req.GetFloat("ms", 0)*float64(time.Millisecond) + req.GetFloat("seconds", 0)*float64(time.Second))
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
			r.add("done " + label)
			return mcp.NewToolResultStructuredOnly(map[string]any{"label": label, "slept": true}), nil
		case <-ctx.Done():
			r.add("cancelled " + label)
			return nil, ctx.Err()
		}
	})
	s.AddTool(mcp.NewTool("count",
		mcp.WithDescription("Send n progress notifications (when asked for progress), then return"),
		mcp.WithNumber("n", mcp.Required()),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := int(req.GetFloat("n", 0))
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			srv := server.ServerFromContext(ctx)
			for i := 1; i <= n; i++ {
				_ = srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
					"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": n, "message": fmt.Sprintf("item %d", i),
				})
			}
			// mcp-go's stdio server writes notifications on another
			// goroutine than the result: let them go first.
			time.Sleep(50 * time.Millisecond)
		}
		return mcp.NewToolResultStructuredOnly(map[string]any{"counted": n}), nil
	})
	s.AddTool(mcp.NewTool("fail",
		mcp.WithDescription("Return an error result"),
		mcp.WithString("message"),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError(req.GetString("message", "failed on purpose")), nil
	})
	s.AddTool(mcp.NewTool("crash",
		mcp.WithDescription("Exit the process mid-call"),
		mcp.WithNumber("after_ms"),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		time.Sleep(time.Duration(req.GetFloat("after_ms", 0)) * time.Millisecond)
		fmt.Fprintln(os.Stderr, "testbackend: crashing on purpose")
		os.Exit(3)
		return nil, nil
	})
	s.AddTool(mcp.NewTool("pid",
		mcp.WithDescription("Return the process id"),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultStructuredOnly(map[string]any{"pid": os.Getpid()}), nil
	})
	s.AddTool(mcp.NewToolWithRawSchema("keys", "Count the arguments, whatever they are",
		[]byte(`{"type": "object", "additionalProperties": true}`),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultStructuredOnly(map[string]any{"keys": len(req.GetArguments())}), nil
	})
	s.AddTool(mcp.NewTool("hang",
		mcp.WithDescription("Never answer"),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {}
	})

	if *faults {
		addFaults(s, stdin)
	}
	if *gated {
		addGated(s, r)
	}
	if *typed {
		addTyped(s, r)
	}
	if *stamp {
		addStamp(s, r)
	}
	if *askers {
		testservers.AddAskers(s)
	}

	var err error
	if *httpAddr != "" {
		var h http.Handler = server.NewStreamableHTTPServer(s)
		if *recordAuth != "" {
			h = recordAuthorization(&recorder{path: *recordAuth}, h)
		}
		err = http.ListenAndServe(*httpAddr, h)
	} else if *faults {
		err = server.NewStdioServer(s).Listen(context.Background(), stdin, os.Stdout)
	} else {
		// More workers than mcp-go's 5, so that every call a test holds
		// in flight (up to vmcp's default maxParallel of 10, and more)
		// reaches its handler and is recorded.
		err = server.ServeStdio(s, server.WithWorkerPoolSize(32))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbackend:", err)
		os.Exit(1)
	}
}

// addFaults adds the tools of -faults; stop_reading closes stdin.
func addFaults(s *server.MCPServer, stdin *testservers.Gate) {
	s.AddTool(mcp.NewTool("big",
		mcp.WithDescription("Return a text result of the given size"),
		mcp.WithNumber("bytes", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(strings.Repeat("x", int(req.GetFloat("bytes", 0)))), nil
	})
	s.AddTool(mcp.NewTool("stop_reading",
		mcp.WithDescription("Answer, then never read stdin again (stdio only)"),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		stdin.Close()
		return mcp.NewToolResultStructuredOnly(map[string]any{"reading": false}), nil
	})
}

// addGated adds gated: it records "call LABEL" as the call arrives, then,
// when gate names a file, waits until that file exists (or the call is
// cancelled), so a test knows exactly which call is in flight. It keeps
// mcp-go's default annotations (not idempotent); gated_idempotent is the
// same tool declaring idempotentHint.
func addGated(s *server.MCPServer, r *recorder) {
	opts := []mcp.ToolOption{
		mcp.WithDescription("Record the call, wait for the gate file if one is named, return the label"),
		mcp.WithString("label", mcp.Required()),
		mcp.WithString("gate"),
	}
	s.AddTool(mcp.NewTool("gated", opts...), gatedHandler(r))
	s.AddTool(mcp.NewTool("gated_idempotent", append(opts, mcp.WithIdempotentHintAnnotation(true))...), gatedHandler(r))
}

// addTyped adds create_tickets, which takes items, an array of objects
// that each have a string name. It records "call create_tickets N" (N
// items) as the call arrives and does not validate its input itself, so
// the record shows every call that reached the backend.
func addTyped(s *server.MCPServer, r *recorder) {
	schema := `{"type": "object", "required": ["items"], "properties": {"items": {"type": "array",
		"items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}}`
	s.AddTool(mcp.NewToolWithRawSchema("create_tickets", "Create one ticket per item", []byte(schema)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			items, _ := req.GetArguments()["items"].([]any)
			r.add(fmt.Sprintf("call create_tickets %d", len(items)))
			return mcp.NewToolResultStructuredOnly(map[string]any{"created": len(items)}), nil
		})
}

// addStamp adds stamp: it records "stamp LABEL UNIXNANO", the time the
// call arrived in nanoseconds since 1970, and returns the label.
func addStamp(s *server.MCPServer, r *recorder) {
	s.AddTool(mcp.NewTool("stamp",
		mcp.WithDescription("Record the time the call arrived, return the label"),
		mcp.WithString("label", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		label := req.GetString("label", "")
		r.add(fmt.Sprintf("stamp %s %d", label, time.Now().UnixNano()))
		return mcp.NewToolResultStructuredOnly(map[string]any{"label": label}), nil
	})
}

func gatedHandler(r *recorder) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		label := req.GetString("label", "")
		r.add("call " + label)
		if gate := req.GetString("gate", ""); gate != "" {
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				if _, err := os.Stat(gate); err == nil {
					break
				}
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-tick.C:
				}
			}
		}
		return mcp.NewToolResultStructuredOnly(map[string]any{"label": label}), nil
	}
}

// recordAuthorization records each request's Authorization header ("-"
// for none) before serving it.
func recordAuthorization(r *recorder, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		a := req.Header.Get("Authorization")
		if a == "" {
			a = "-"
		}
		r.add(req.Method + " " + a)
		next.ServeHTTP(w, req)
	})
}

type recorder struct {
	mu   sync.Mutex
	path string
}

func (r *recorder) add(line string) {
	if r.path == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.OpenFile(r.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbackend: record:", err)
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

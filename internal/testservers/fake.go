package testservers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Environment variables read by Main.
const (
	// EnvServe selects the server: "fake" serves NewFake on stdio,
	// "asker" NewAsker.
	EnvServe = "VMCP_TESTSERVER"
	// EnvExitAtStart makes the server write this text to stderr and exit
	// with status 3 before reading anything.
	EnvExitAtStart = "VMCP_FAKE_EXIT_AT_START"
	// EnvHangInit makes the server read stdin and never answer.
	EnvHangInit = "VMCP_FAKE_HANG_INIT"
	// EnvFaults adds the tools big and stop_reading (see Fake).
	EnvFaults = "VMCP_FAKE_FAULTS"
	// EnvExtraTools adds that many tools (tool_000, ...) so that tools/list
	// needs several pages (the page size is PageSize).
	EnvExtraTools = "VMCP_FAKE_EXTRA_TOOLS"
)

// PageSize is the fake server's tools/list page size.
const PageSize = 10

// CrashStatus is the exit status of the crash tool.
const CrashStatus = 7

// Fake is an MCP server with tools for failure tests:
//
//	echo {message}      text: the message
//	args {...}          structured {raw: the arguments exactly as received (JSON text)}
//	sleep {ms}          waits ms milliseconds; a cancelled sleep is counted
//	stats               structured {cancelled, started, finished}
//	pid                 structured {pid}
//	crash               writes to stderr and exits with CrashStatus
//	exit_later {ms}     answers, then exits with CrashStatus after ms
//	add_tool {name}     adds a tool that echoes its name (tools/list_changed)
//	structured          structured {total: 3, items: [a, b, c]} plus text
//	fail                an isError result "disk on fire"
//	mixed               a text item and an image item
//
// With EnvFaults set, Main also serves:
//
//	big {bytes}         a text item of that many bytes
//	stop_reading        answers, then the server never reads stdin again
type Fake struct {
	srv *server.MCPServer

	mu        sync.Mutex
	started   int
	finished  int
	cancelled int
}

// addFaults adds the tools of EnvFaults; stop_reading closes stdin.
func (f *Fake) addFaults(stdin *Gate) {
	f.srv.AddTool(mcp.NewTool("big", mcp.WithDescription("A text result of the given size."), mcp.WithNumber("bytes", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strings.Repeat("x", int(req.GetFloat("bytes", 0)))), nil
		})
	f.srv.AddTool(mcp.NewTool("stop_reading", mcp.WithDescription("Answer, then never read stdin again.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			stdin.Close()
			return mcp.NewToolResultText("stopped reading"), nil
		})
}

// NewFake returns the fake server with extra generated tools.
func NewFake(extraTools int) *Fake {
	f := &Fake{srv: server.NewMCPServer("vmcp-fake", "1.0.0", server.WithToolCapabilities(true), server.WithPaginationLimit(PageSize))}
	s := f.srv
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the message."), mcp.WithString("message", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("message", "")), nil
		})
	s.AddTool(mcp.NewTool("args", mcp.WithDescription("Return the raw arguments.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			raw := req.GetRawArguments()
			var text string
			switch r := raw.(type) {
			case json.RawMessage:
				text = string(r)
			default:
				b, _ := json.Marshal(r)
				text = string(b)
			}
			return mcp.NewToolResultStructured(map[string]any{"raw": text}, text), nil
		})
	s.AddTool(mcp.NewTool("sleep", mcp.WithDescription("Sleep for ms milliseconds."), mcp.WithNumber("ms", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ms := req.GetFloat("ms", 0)
			f.mu.Lock()
			f.started++
			f.mu.Unlock()
			select {
			case <-time.After(time.Duration(ms * float64(time.Millisecond))):
				f.mu.Lock()
				f.finished++
				f.mu.Unlock()
				return mcp.NewToolResultText(fmt.Sprintf("slept %vms", ms)), nil
			case <-ctx.Done():
				f.mu.Lock()
				f.cancelled++
				f.mu.Unlock()
				return nil, ctx.Err()
			}
		})
	s.AddTool(mcp.NewTool("stats", mcp.WithDescription("Counts of sleep calls.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			return mcp.NewToolResultStructuredOnly(map[string]any{"started": f.started, "finished": f.finished, "cancelled": f.cancelled}), nil
		})
	s.AddTool(mcp.NewTool("pid", mcp.WithDescription("The server's process id.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructuredOnly(map[string]any{"pid": os.Getpid()}), nil
		})
	s.AddTool(mcp.NewTool("crash", mcp.WithDescription("Exit the process.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "fake: crashing on purpose")
			os.Exit(CrashStatus)
			return nil, nil
		})
	s.AddTool(mcp.NewTool("exit_later", mcp.WithDescription("Answer, then exit after ms milliseconds."), mcp.WithNumber("ms", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ms := req.GetFloat("ms", 0)
			time.AfterFunc(time.Duration(ms*float64(time.Millisecond)), func() {
				fmt.Fprintln(os.Stderr, "fake: exiting while idle")
				os.Exit(CrashStatus)
			})
			return mcp.NewToolResultText("bye"), nil
		})
	s.AddTool(mcp.NewTool("add_tool", mcp.WithDescription("Add a tool."), mcp.WithString("name", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := req.GetString("name", "")
			s.AddTool(mcp.NewTool(name, mcp.WithDescription("Added at run time.")),
				func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText(name), nil
				})
			return mcp.NewToolResultText("added " + name), nil
		})
	s.AddTool(mcp.NewTool("structured", mcp.WithDescription("Structured content.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"total": 3, "items": []any{"a", "b", "c"}}, `{"total":3}`), nil
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("A tool error.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("disk on fire"), nil
		})
	s.AddTool(mcp.NewTool("mixed", mcp.WithDescription("Text and an image.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewTextContent("first"),
				mcp.NewImageContent("aGVsbG8=", "image/png"),
				mcp.NewTextContent("second"),
			}}, nil
		})
	for i := range extraTools {
		name := fmt.Sprintf("tool_%03d", i)
		s.AddTool(mcp.NewTool(name, mcp.WithDescription("Generated tool "+strconv.Itoa(i)+"."), mcp.WithString("x")),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(name), nil
			})
	}
	return f
}

// Server returns the MCP server, for serving over HTTP in-process.
func (f *Fake) Server() *server.MCPServer { return f.srv }

// Main runs a test server on stdio when EnvServe asks for one, and exits;
// otherwise it returns at once. Call it first thing in TestMain.
func Main() {
	switch os.Getenv(EnvServe) {
	case "fake":
	case "asker":
		if err := server.ServeStdio(NewAsker()); err != nil {
			fmt.Fprintln(os.Stderr, "asker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	default:
		return
	}
	if msg := os.Getenv(EnvExitAtStart); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(3)
	}
	if os.Getenv(EnvHangInit) != "" {
		buf := make([]byte, 4096)
		for {
			if _, err := os.Stdin.Read(buf); err != nil {
				os.Exit(0)
			}
		}
	}
	extra, _ := strconv.Atoi(os.Getenv(EnvExtraTools))
	f := NewFake(extra)
	serve := func() error { return server.ServeStdio(f.Server()) }
	if os.Getenv(EnvFaults) != "" {
		stdin := NewGate(os.Stdin)
		f.addFaults(stdin)
		serve = func() error { return server.NewStdioServer(f.Server()).Listen(context.Background(), stdin, os.Stdout) }
	}
	if err := serve(); err != nil {
		fmt.Fprintln(os.Stderr, "fake:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

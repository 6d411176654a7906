package mcpserver

// Changing the served tools while the server runs. PublishWorkflows makes
// a new list of workflows the served workflow tools: tools of workflows
// that left the list are deleted, new and changed ones (another
// *ir.Workflow, such as a new version) are added, and mcp-go sends
// notifications/tools/list_changed to every session for each change when
// Options.ListChanged declared the capability. A call in flight keeps the
// workflow it started with.

import (
	"context"
	"fmt"
	"sort"

	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/ir"
)

// PublishWorkflows serves exactly wfs as workflow tools. It fails, and
// changes nothing, when a workflow would take the name of another tool (an
// exposed backend tool or an extra tool) or two share a name.
func (s *Server) PublishWorkflows(wfs []*ir.Workflow) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[string]*ir.Workflow, len(wfs))
	for _, wf := range wfs {
		if s.others[wf.Name] {
			return fmt.Errorf("server: workflow %q would take the name of another tool", wf.Name)
		}
		if next[wf.Name] != nil {
			return fmt.Errorf("server: two workflows are named %q", wf.Name)
		}
		next[wf.Name] = wf
	}
	var gone []string
	for name := range s.workflows {
		if next[name] == nil {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	var add []mcpgo.ServerTool
	for _, wf := range wfs {
		if s.workflows[wf.Name] == wf {
			continue
		}
		t, err := s.workflowServerTool(wf)
		if err != nil {
			return err
		}
		add = append(add, t)
	}
	if len(gone) > 0 {
		s.mcp.DeleteTools(gone...)
	}
	if len(add) > 0 {
		s.mcp.AddTools(add...)
	}
	s.workflows = next
	return nil
}

// AwaitNotifications waits, in a tool handler, until the notifications
// queued for the caller's session (the list_changed of a
// PublishWorkflows during the call) have left, plus Options.NotifyFlush,
// at most a second: over streamable HTTP the call's own response stream
// may carry them, and what it still holds when the handler returns is
// lost (see progress.go).
func (s *Server) AwaitNotifications(ctx context.Context) { s.awaitForwarder(ctx) }

// AddTools serves more tools that are not workflows (the run tools, the
// authoring tools). It fails when a name is taken.
func (s *Server) AddTools(tools ...mcpgo.ServerTool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, t := range tools {
		name := t.Tool.Name
		if s.workflows[name] != nil || s.others[name] || seen[name] {
			return fmt.Errorf("server: two tools are named %q", name)
		}
		seen[name] = true
	}
	for name := range seen {
		s.others[name] = true
	}
	s.mcp.AddTools(tools...)
	return nil
}

// Workflow returns the served workflow tool of that name.
func (s *Server) Workflow(name string) (*ir.Workflow, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	wf, ok := s.workflows[name]
	return wf, ok
}

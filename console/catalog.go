package console

import (
	"context"
	"time"
)

// Catalog is what the console needs from the authoring service
// (authoring.Service with its Store; cmd/vmcp adapts it): the served
// workflows with their versions, and the history of an authored one.
type Catalog interface {
	// List returns every served workflow, sorted by name.
	List() []WorkflowInfo
	// Versions returns every stored version of an authored workflow,
	// oldest first, with its source.
	Versions(ctx context.Context, name string) ([]VersionInfo, error)
}

// Workflow origins.
const (
	OriginFiles    = "files"
	OriginAuthored = "authored"
)

// WorkflowInfo is how one workflow is served.
type WorkflowInfo struct {
	Name string
	// Version is the served version: the number of an authored workflow,
	// the content hash of one from files.
	Version string
	Origin  string // OriginFiles or OriginAuthored
	SavedAt time.Time
}

// VersionInfo is one stored version of an authored workflow.
type VersionInfo struct {
	Version int
	SavedAt time.Time
	Deleted bool
	Source  string
}

// workflowInfos returns how each served workflow is served, by name:
// from the catalog, or, without one, every workflow of the engine from
// files with the version the plan gives it.
func (c *Console) workflowInfos() map[string]WorkflowInfo {
	out := map[string]WorkflowInfo{}
	if c.opts.Catalog != nil {
		for _, w := range c.opts.Catalog.List() {
			out[w.Name] = w
		}
		return out
	}
	for _, wf := range c.opts.Engine.Workflows() {
		out[wf.Name] = WorkflowInfo{Name: wf.Name, Version: wf.Version, Origin: OriginFiles}
	}
	return out
}

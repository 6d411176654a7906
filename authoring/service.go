package authoring

// The service behind the tools and the CLI: it checks drafts, stores
// versions and serves them. Saves and deletes are serialised by one mutex,
// so the served set always follows the store's order; the store itself is
// safe for concurrent use as well (a CLI on the same files, or tests).
// Serving means, in this order: the engine gets the whole new workflow
// set (files plus authored), then the MCP server the new tools, which
// sends notifications/tools/list_changed.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
)

// Engine is what the service needs of runtime.Engine.
type Engine interface {
	SetWorkflows(plan *ir.Plan) error
}

// Publisher is what the service needs of the MCP server (server.Server).
type Publisher interface {
	PublishWorkflows(wfs []*ir.Workflow) error
	ToolNames() []string
}

// Options configure a Service.
type Options struct {
	Store    Store
	Compiler *Compiler
	// Files are the workflows that came from files; their Version is set
	// (FileVersions) and authored workflows may not take their names.
	Files []*ir.Workflow
	// Engine and Server, when set, serve every saved version at once; the
	// CLI working on the store directly leaves them nil.
	Engine Engine
	Server Publisher
	Logger *slog.Logger
	// Limits bound the store; zero fields take DefaultLimits'.
	Limits Limits
}

// Limits bound what authored workflows may take of a store
// (authoring.limits in vmcp.yaml).
type Limits struct {
	// Workflows is how many authored workflows may be served at once.
	Workflows int
	// Versions is how many versions of each name are kept: a save removes
	// the oldest past it.
	Versions int
	// Bytes bounds the sources the store keeps, every kept version of
	// every name (deleted ones too) together.
	Bytes int64
}

// DefaultLimits are authoring.limits' defaults.
var DefaultLimits = Limits{Workflows: 100, Versions: 20, Bytes: 16 << 20}

// withDefaults fills the zero fields of l from DefaultLimits.
func (l Limits) withDefaults() Limits {
	if l.Workflows <= 0 {
		l.Workflows = DefaultLimits.Workflows
	}
	if l.Versions <= 0 {
		l.Versions = DefaultLimits.Versions
	}
	if l.Bytes <= 0 {
		l.Bytes = DefaultLimits.Bytes
	}
	return l
}

// Service checks, stores and serves authored workflows.
type Service struct {
	opts   Options
	log    *slog.Logger
	limits Limits
	files  map[string]*ir.Workflow

	mu       sync.Mutex
	authored map[string]*ir.Workflow // served authored workflows, by name
	saved    map[string]Version      // their stored versions (without source)
}

// NewService returns a service; call Load to serve what the store holds.
func NewService(opts Options) *Service {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{opts: opts, log: log, limits: opts.Limits.withDefaults(), files: map[string]*ir.Workflow{},
		authored: map[string]*ir.Workflow{}, saved: map[string]Version{}}
	for _, wf := range opts.Files {
		s.files[wf.Name] = wf
	}
	return s
}

// FileVersions gives every workflow of plan without a version one: a
// hash of its compiled form, "sha256:" and 12 hex digits, which changes
// whenever the workflow does.
func FileVersions(plan *ir.Plan) {
	if plan == nil {
		return
	}
	for _, wf := range plan.Workflows {
		if wf.Version != "" {
			continue
		}
		b, err := json.Marshal(wf)
		if err != nil {
			continue // an IR that does not encode fails elsewhere, loudly
		}
		sum := sha256.Sum256(b)
		wf.Version = "sha256:" + hex.EncodeToString(sum[:6])
	}
}

// Store is the service's store.
func (s *Service) Store() Store { return s.opts.Store }

// Load compiles the current version of every stored workflow and serves
// them. A version that no longer compiles (a backend tool changed, say)
// is not served; its diagnostics are logged and returned in problems, and
// the others are served anyway.
func (s *Service) Load(ctx context.Context) (problems map[string]diag.List, err error) {
	list, err := s.opts.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	problems = map[string]diag.List{}
	// Authored workflows may call each other: compile in rounds until no
	// more compile, so the order of names does not matter.
	pending := list
	for len(pending) > 0 {
		var next []Version
		for _, v := range pending {
			ch := s.check(fmt.Sprintf("%s.v%d.yaml", v.Name, v.Version), v.Source)
			ch.checkName(s.files, nil)
			if !ch.OK() || ch.Name != v.Name {
				next = append(next, v)
				problems[v.Name] = ch.Diagnostics
				continue
			}
			delete(problems, v.Name)
			s.serveVersion(ch.Workflow, v)
		}
		if len(next) == len(pending) {
			break
		}
		pending = next
	}
	for name, d := range problems {
		s.log.Warn("authored workflow not served: it does not compile against the backends now", "workflow", name, "errors", d.Errors().Sorted())
	}
	return problems, s.publish()
}

func (s *Service) serveVersion(wf *ir.Workflow, v Version) {
	wf.Version = strconv.Itoa(v.Version)
	s.authored[v.Name] = wf
	v.Source = ""
	s.saved[v.Name] = v
}

// served are the workflows a draft's workflow steps may call. Called
// with mu held.
func (s *Service) served() []*ir.Workflow {
	out := append([]*ir.Workflow(nil), s.opts.Files...)
	for _, name := range sortedKeys(s.authored) {
		out = append(out, s.authored[name])
	}
	return out
}

func (s *Service) check(file, source string) *Checked {
	return s.opts.Compiler.Check(file, source, s.served())
}

// Check compiles a draft against the live catalog; nothing is stored.
func (s *Service) Check(source string) *Checked {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.check("", source)
}

// ErrInvalid is returned by Save for a draft with errors; the Checked
// result holds them.
var ErrInvalid = errors.New("the draft has errors")

// Save checks source and, when it compiles, stores it as the next version
// and serves it. A draft with errors returns ErrInvalid and its
// diagnostics; nothing is stored.
func (s *Service) Save(ctx context.Context, source string, replace bool) (Version, *Checked, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.check("", source)
	ch.checkName(s.files, s.takenByOtherTool)
	if !ch.OK() {
		return Version{}, ch, ErrInvalid
	}
	if err := s.withinLimits(ctx, ch.Name, source); err != nil {
		return Version{}, ch, err
	}
	v, err := s.opts.Store.Save(ctx, ch.Name, source, replace)
	if err != nil {
		return Version{}, ch, err
	}
	if err := s.opts.Store.Prune(ctx, v.Name, s.limits.Versions); err != nil {
		s.log.Warn("old versions of an authored workflow could not be removed", "workflow", v.Name, "err", err)
	}
	prevWF, prevV, had := s.authored[v.Name], s.saved[v.Name], s.authored[v.Name] != nil
	s.serveVersion(ch.Workflow, v)
	if err := s.publish(); err != nil {
		if had {
			s.authored[v.Name], s.saved[v.Name] = prevWF, prevV
		} else {
			delete(s.authored, v.Name)
			delete(s.saved, v.Name)
		}
		return v, ch, fmt.Errorf("version %d of %q is stored but could not be served: %w", v.Version, v.Name, err)
	}
	s.log.Info("authored workflow saved", "workflow", v.Name, "version", v.Version)
	return v, ch, nil
}

// Reload serves what the store holds now for name, which another process
// sharing the store (a replica on state.store: postgres) saved or deleted:
// the new current version when it compiles, nothing once it is deleted.
// A version this service serves already changes nothing, so a process
// hearing of its own save does nothing. name "" reloads every workflow.
func (s *Service) Reload(ctx context.Context, name string) error {
	if name == "" {
		list, err := s.opts.Store.List(ctx)
		if err != nil {
			return err
		}
		for _, v := range list {
			if err := s.Reload(ctx, v.Name); err != nil {
				return err
			}
		}
		s.mu.Lock()
		var gone []string
		for n := range s.authored {
			if !slices.ContainsFunc(list, func(v Version) bool { return v.Name == n }) {
				gone = append(gone, n)
			}
		}
		s.mu.Unlock()
		for _, n := range gone {
			if err := s.Reload(ctx, n); err != nil {
				return err
			}
		}
		return nil
	}
	v, err := s.opts.Store.Get(ctx, name, 0)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[name]; ok {
		return nil
	}
	if errors.Is(err, ErrNotFound) {
		if _, ok := s.authored[name]; !ok {
			return nil
		}
		delete(s.authored, name)
		delete(s.saved, name)
		s.log.Info("authored workflow deleted by another vmcp on the store", "workflow", name)
		return s.publish()
	}
	if err != nil {
		return err
	}
	if cur, ok := s.saved[name]; ok && cur.Version == v.Version {
		return nil
	}
	ch := s.check(fmt.Sprintf("%s.v%d.yaml", v.Name, v.Version), v.Source)
	ch.checkName(s.files, nil)
	if !ch.OK() || ch.Name != v.Name {
		s.log.Warn("authored workflow saved by another vmcp not served: it does not compile here", "workflow", name,
			"version", v.Version, "errors", ch.Diagnostics.Errors().Sorted())
		return nil
	}
	s.serveVersion(ch.Workflow, v)
	s.log.Info("authored workflow saved by another vmcp on the store now served", "workflow", name, "version", v.Version)
	return s.publish()
}

// ErrLimit is wrapped by the errors of saves past authoring.limits.
var ErrLimit = errors.New("authoring limit reached")

// withinLimits refuses a save of source as name past the workflow count or
// the stored bytes. The bytes count what is kept before this save prunes,
// so a store at its limit refuses even a save that would free a version.
// Called with mu held.
func (s *Service) withinLimits(ctx context.Context, name, source string) error {
	if s.authored[name] == nil && len(s.authored) >= s.limits.Workflows {
		return fmt.Errorf("%w: %d authored workflows are served, the most authoring.limits.workflows allows: delete one (vmcp_workflow_delete) or ask the operator to raise the limit",
			ErrLimit, len(s.authored))
	}
	used, err := s.opts.Store.Usage(ctx)
	if err != nil {
		return err
	}
	if used+int64(len(source)) > s.limits.Bytes {
		return fmt.Errorf("%w: the store keeps %d bytes of authored sources and this one has %d, past authoring.limits.bytes (%d): ask the operator to raise it or to remove old versions",
			ErrLimit, used, len(source), s.limits.Bytes)
	}
	return nil
}

// takenByOtherTool reports a name another tool of the server has (an
// exposed backend tool, say). Called with mu held.
func (s *Service) takenByOtherTool(name string) bool {
	if s.opts.Server == nil || s.authored[name] != nil {
		return false
	}
	for _, t := range s.opts.Server.ToolNames() {
		if t == name {
			return true
		}
	}
	return false
}

// Delete stops serving name and marks it deleted in the store. A workflow
// from files cannot be deleted, nor one another authored workflow calls.
func (s *Service) Delete(ctx context.Context, name string) (Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if wf, ok := s.files[name]; ok {
		return Version{}, fmt.Errorf("workflow %q comes from files (%s): remove it there and restart vmcp", name, wf.Pos)
	}
	if callers := s.callersOf(name); len(callers) > 0 {
		return Version{}, fmt.Errorf("workflow %q is called by %v: change or delete those first", name, callers)
	}
	v, err := s.opts.Store.Delete(ctx, name)
	if err != nil {
		return Version{}, err
	}
	delete(s.authored, name)
	delete(s.saved, name)
	if err := s.publish(); err != nil {
		return v, fmt.Errorf("%q is deleted but is still served: %w", name, err)
	}
	s.log.Info("authored workflow deleted", "workflow", name, "version", v.Version)
	return v, nil
}

// callersOf lists the authored workflows with a workflow step that runs
// name. Called with mu held.
func (s *Service) callersOf(name string) []string {
	var out []string
	for _, n := range sortedKeys(s.authored) {
		wf := s.authored[n]
		calls := false
		ir.EachStep(append(append([]*ir.Step(nil), wf.Steps...), wf.Finally...), func(st *ir.Step) {
			if st.Workflow != nil && st.Workflow.Name == name {
				calls = true
			}
		})
		if calls && n != name {
			out = append(out, n)
		}
	}
	return out
}

// publish hands the served set to the engine, then to the server. Called
// with mu held.
func (s *Service) publish() error {
	wfs := s.served()
	if s.opts.Engine != nil {
		if err := s.opts.Engine.SetWorkflows(&ir.Plan{Version: ir.Version, Workflows: wfs}); err != nil {
			return err
		}
	}
	if s.opts.Server != nil {
		return s.opts.Server.PublishWorkflows(wfs)
	}
	return nil
}

// Get returns a stored version's source (version 0: the current one).
func (s *Service) Get(ctx context.Context, name string, version int) (Version, error) {
	if wf, ok := s.files[name]; ok {
		return Version{}, fmt.Errorf("workflow %q comes from files (%s), version %s; it is not stored by vmcp", name, wf.Pos, wf.Version)
	}
	return s.opts.Store.Get(ctx, name, version)
}

// Entry is one workflow in a listing.
type Entry struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Version is the served version: the number of an authored workflow,
	// the content hash of one from files.
	Version string `json:"version"`
	// Origin is "authored" or "files".
	Origin string `json:"origin"`
	// File is where a workflow from files is defined.
	File string `json:"file,omitempty"`
	// SavedAt is when the served version of an authored workflow was saved.
	SavedAt *time.Time `json:"savedAt,omitempty"`
}

// List returns every served workflow, from files and authored, sorted by
// name.
func (s *Service) List() []Entry {
	var out []Entry
	for _, wf := range s.opts.Files {
		out = append(out, Entry{Name: wf.Name, Description: wf.Description, Version: wf.Version, Origin: "files", File: wf.Pos.File})
	}
	s.mu.Lock()
	for _, name := range sortedKeys(s.authored) {
		v := s.saved[name]
		at := v.CreatedAt
		out = append(out, Entry{Name: name, Description: s.authored[name].Description, Version: strconv.Itoa(v.Version), Origin: "authored", SavedAt: &at})
	}
	s.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

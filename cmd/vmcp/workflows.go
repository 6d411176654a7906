package main

// vmcp workflows list|get|save|delete: the authoring tools for people.
// With --url the commands call a running server's vmcp_workflow_* tools
// over streamable HTTP (token from --token or VMCP_TOKEN), so the outputs
// and errors are the server's own; with --config they work on the store
// the config names (authoring.dir, or the SQLite state file), which save
// and delete may only do while no vmcp runs on it. save compiles against
// the live backends either way: with --config it connects them, as
// `vmcp run` does.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/spf13/cobra"

	"github.com/vmcp-dev/vmcp/authoring"
	"github.com/vmcp-dev/vmcp/authoring/guide"
	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/store/postgres"
	"github.com/vmcp-dev/vmcp/store/sqlite"
)

type workflowsFlags struct {
	url, token, config string
	jsonOut            bool
}

// workflowSource is a server (--url) or a store (--config).
type workflowSource interface {
	list(ctx context.Context) ([]authoring.Entry, error)
	get(ctx context.Context, name string, version int) (authoring.Version, error)
	// save returns the diagnostics of a refused draft with errSaveRefused.
	save(ctx context.Context, source string, replace bool) (authoring.SaveResult, []authoring.Diagnostic, error)
	delete(ctx context.Context, name string) (authoring.Version, error)
	Close() error
}

var errSaveRefused = errors.New("the draft has errors; nothing was saved")

func newWorkflowsCmd(io streams) *cobra.Command {
	var wf workflowsFlags
	cmd := &cobra.Command{
		Use:   "workflows",
		Short: "List, read, save and delete authored workflows",
		Long: `Manage the workflows agents author: through a running vmcp's authoring
tools (--url, with --token or VMCP_TOKEN; the token needs the author
scope), or directly on the store of a config (--config: authoring.dir, or
the SQLite state file; save and delete only while no vmcp runs on it).`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&wf.url, "url", "", "base URL of a running vmcp's HTTP listener (e.g. http://127.0.0.1:8080)")
	pf.StringVar(&wf.token, "token", "", "bearer token (default $VMCP_TOKEN)")
	pf.StringVar(&wf.config, "config", "", "work on the store of this config instead of a server")
	pf.BoolVar(&wf.jsonOut, "json", false, "print JSON instead of text")

	list := &cobra.Command{
		Use: "list", Short: "List the workflows with their versions", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return wf.with(cmd.Context(), storeRead, func(src workflowSource) error {
				entries, err := src.list(cmd.Context())
				if err != nil {
					return failuref("%v", err)
				}
				if wf.jsonOut {
					return printJSON(io.out, map[string]any{"workflows": entries})
				}
				printWorkflowList(io.out, entries)
				return nil
			})
		},
	}
	var version int
	get := &cobra.Command{
		Use: "get NAME [--version N]", Short: "Print an authored workflow's source", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if version < 0 {
				return usageErrorf("--version must be 1 or more")
			}
			return wf.with(cmd.Context(), storeRead, func(src workflowSource) error {
				v, err := src.get(cmd.Context(), args[0], version)
				if err != nil {
					return failuref("%v", err)
				}
				if wf.jsonOut {
					return printJSON(io.out, v)
				}
				_, err = fmt.Fprint(io.out, v.Source)
				return err
			})
		},
	}
	get.Flags().IntVar(&version, "version", 0, "the version to print (default: the current one)")
	var replace bool
	save := &cobra.Command{
		Use: "save FILE [--replace]", Short: "Check a workflow file and save it as a new version", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := os.ReadFile(args[0])
			if err != nil {
				return failuref("%v", err)
			}
			return wf.with(cmd.Context(), storeNone, func(s workflowSource) error {
				res, diags, err := s.save(cmd.Context(), string(src), replace)
				printDiagnostics(io.err, args[0], diags)
				if err != nil {
					return failuref("%v", err)
				}
				if wf.jsonOut {
					return printJSON(io.out, res)
				}
				fmt.Fprintf(io.out, "saved %s version %d\n", res.Name, res.Version)
				return nil
			})
		},
	}
	save.Flags().BoolVar(&replace, "replace", false, "save a new version of a workflow that exists")
	del := &cobra.Command{
		Use: "delete NAME", Short: "Stop serving an authored workflow (its versions are kept)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return wf.with(cmd.Context(), storeWrite, func(src workflowSource) error {
				v, err := src.delete(cmd.Context(), args[0])
				if err != nil {
					return failuref("%v", err)
				}
				if wf.jsonOut {
					return printJSON(io.out, map[string]any{"name": v.Name, "version": v.Version, "deleted": true})
				}
				fmt.Fprintf(io.out, "deleted %s (version %d; its versions are kept)\n", v.Name, v.Version)
				return nil
			})
		},
	}
	cmd.AddCommand(list, get, save, del)
	return cmd
}

// Store access modes of with: read, write, or none (save opens the
// whole stack, and with it the store, itself).
const (
	storeRead = iota
	storeWrite
	storeNone
)

// with opens the source the flags name, runs fn and closes it. mode says
// how fn uses a config's store.
func (wf *workflowsFlags) with(ctx context.Context, mode int, fn func(workflowSource) error) error {
	var src workflowSource
	var err error
	switch {
	case (wf.url == "") == (wf.config == ""):
		return usageErrorf("give --url (a running vmcp) or --config (its store), one of them")
	case wf.url != "":
		token := wf.token
		if token == "" {
			token = os.Getenv("VMCP_TOKEN")
		}
		src, err = dialWorkflows(ctx, wf.url, token)
	default:
		src, err = openWorkflowStore(wf.config, mode)
	}
	if err != nil {
		return err
	}
	defer src.Close()
	return fn(src)
}

func printWorkflowList(w io.Writer, entries []authoring.Entry) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tORIGIN\tSAVED")
	for _, e := range entries {
		saved := e.File
		if e.SavedAt != nil {
			saved = e.SavedAt.UTC().Format(timeLayout)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Name, e.Version, e.Origin, saved)
	}
	tw.Flush()
}

// printDiagnostics prints a draft's diagnostics as the compiler does,
// file:line:col: severity: message (code), then the detail indented.
func printDiagnostics(w io.Writer, file string, diags []authoring.Diagnostic) {
	for _, d := range diags {
		fmt.Fprintf(w, "%s:%d:%d: %s: %s (%s)\n", file, d.Line, d.Col, d.Severity, d.Message, d.Code)
		for _, line := range strings.Split(d.Detail, "\n") {
			if line != "" {
				fmt.Fprintf(w, "    %s\n", line)
			}
		}
	}
}

// --- a running server ---

type remoteWorkflows struct{ c *client.Client }

func dialWorkflows(ctx context.Context, base, token string) (*remoteWorkflows, error) {
	url := strings.TrimSuffix(base, "/")
	if !strings.HasSuffix(url, "/mcp") {
		url += "/mcp"
	}
	var opts []transport.StreamableHTTPCOption
	if token != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	}
	tr, err := transport.NewStreamableHTTP(url, opts...)
	if err != nil {
		return nil, usageErrorf("--url %q: %v", base, err)
	}
	c := client.NewClient(tr)
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Start(ictx); err != nil {
		return nil, failuref("connecting to %s: %v", url, err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "vmcp workflows", Version: version}
	if _, err := c.Initialize(ictx, init); err != nil {
		c.Close()
		return nil, failuref("connecting to %s: %v", url, err)
	}
	return &remoteWorkflows{c: c}, nil
}

// call calls a tool and decodes its structured content into out; an
// isError result is an error with its text (and, for out, its structured
// content still decoded).
func (r *remoteWorkflows) call(ctx context.Context, tool string, args map[string]any, out any) error {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := r.c.CallTool(cctx, req)
	if err != nil {
		return err
	}
	if out != nil && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s: unexpected result: %v", tool, err)
		}
	}
	if res.IsError {
		msg := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(mcp.TextContent); ok {
				msg = tc.Text
			}
		}
		return errors.New(msg)
	}
	return nil
}

func (r *remoteWorkflows) list(ctx context.Context) ([]authoring.Entry, error) {
	var out struct {
		Workflows []authoring.Entry `json:"workflows"`
	}
	err := r.call(ctx, guide.ToolList, map[string]any{}, &out)
	return out.Workflows, err
}

func (r *remoteWorkflows) get(ctx context.Context, name string, version int) (authoring.Version, error) {
	args := map[string]any{"name": name}
	if version > 0 {
		args["version"] = version
	}
	var v authoring.Version
	err := r.call(ctx, guide.ToolGet, args, &v)
	return v, err
}

func (r *remoteWorkflows) save(ctx context.Context, source string, replace bool) (authoring.SaveResult, []authoring.Diagnostic, error) {
	var out struct {
		authoring.SaveResult
		OK *bool `json:"ok"`
	}
	err := r.call(ctx, guide.ToolSave, map[string]any{"source": source, "replace": replace}, &out)
	if err != nil && out.OK != nil { // a refused draft: its check result
		return authoring.SaveResult{}, out.Diagnostics, errSaveRefused
	}
	return out.SaveResult, out.Diagnostics, err
}

func (r *remoteWorkflows) delete(ctx context.Context, name string) (authoring.Version, error) {
	var v authoring.Version
	err := r.call(ctx, guide.ToolDelete, map[string]any{"name": name}, &v)
	return v, err
}

func (r *remoteWorkflows) Close() error { return r.c.Close() }

// --- the store of a config ---

type storeWorkflows struct {
	configPath string
	store      authoring.Store
	close      func() error
}

// openWorkflowStore opens the authoring store of the config. Reading a
// SQLite file does not lock it, so list and get work while vmcp runs.
func openWorkflowStore(configPath string, mode int) (*storeWorkflows, error) {
	cfg, err := config.Load(configPath, os.LookupEnv)
	if err != nil {
		return nil, failuref("%v", err)
	}
	s := &storeWorkflows{configPath: configPath, close: func() error { return nil }}
	write := mode == storeWrite
	switch {
	case mode == storeNone && (cfg.Authoring.Dir != "" || cfg.State.Store == "sqlite" || cfg.State.Store == "postgres"):
		return s, nil
	case cfg.Authoring.Dir != "":
		s.store, err = authoring.NewFileStore(cfg.Authoring.Dir)
	case cfg.State.Store == "sqlite" && write:
		var db *sqlite.Store
		db, err = sqlite.Open(cfg.State.Path, sqlite.Options{})
		if errors.Is(err, sqlite.ErrLocked) {
			return nil, failuref("%v: a vmcp is running on it; use --url to save through it", err)
		}
		if err == nil {
			s.store, s.close = authoring.NewSQLiteStore(db), db.Close
		}
	case cfg.State.Store == "sqlite":
		var db *sqlite.Store
		db, err = sqlite.OpenReadOnly(cfg.State.Path)
		if err == nil {
			s.store, s.close = authoring.NewSQLiteStore(db), db.Close
		}
	case cfg.State.Store == "postgres":
		// The database is shared with the running replicas, which serve
		// a save at once (LISTEN/NOTIFY); this store claims no runs.
		var db *postgres.Store
		db, err = postgres.Open(context.Background(), cfg.State.URL, postgres.Options{})
		if err == nil {
			s.store, s.close = authoring.NewPostgresStore(db), db.Close
		}
	default:
		return nil, failuref("%s keeps authored workflows in memory (no authoring.dir, state.store is not sqlite): use --url with the running vmcp", configPath)
	}
	if err != nil {
		return nil, failuref("%v", err)
	}
	return s, nil
}

func (s *storeWorkflows) list(ctx context.Context) ([]authoring.Entry, error) {
	vs, err := s.store.List(ctx)
	if err != nil {
		return nil, err
	}
	out := []authoring.Entry{}
	for _, v := range vs {
		at := v.CreatedAt
		out = append(out, authoring.Entry{Name: v.Name, Version: fmt.Sprint(v.Version), Origin: "authored", SavedAt: &at})
	}
	return out, nil
}

func (s *storeWorkflows) get(ctx context.Context, name string, version int) (authoring.Version, error) {
	return s.store.Get(ctx, name, version)
}

// save connects the config's backends and compiles the files' workflows
// (as vmcp run does), so the draft is checked against the live catalog,
// then saves through the authoring service.
func (s *storeWorkflows) save(ctx context.Context, source string, replace bool) (authoring.SaveResult, []authoring.Diagnostic, error) {
	log := slog.New(slog.DiscardHandler)
	st, err := openStack(ctx, s.configPath, log, io.Discard)
	if err != nil {
		return authoring.SaveResult{}, nil, err
	}
	defer st.Close()
	store, err := authoringStore(st.cfg, st.ops.store, log)
	if err != nil {
		return authoring.SaveResult{}, nil, err
	}
	svc := authoring.NewService(authoring.Options{Store: store, Compiler: st.authoringCompiler(), Files: st.plan.Workflows, Limits: st.authoringLimits()})
	if _, err := svc.Load(ctx); err != nil {
		return authoring.SaveResult{}, nil, err
	}
	v, ch, err := svc.Save(ctx, source, replace)
	var diags []authoring.Diagnostic
	if ch != nil {
		diags = authoring.Diagnostics(ch.Diagnostics)
	}
	if errors.Is(err, authoring.ErrInvalid) {
		return authoring.SaveResult{}, diags, errSaveRefused
	}
	if err != nil {
		return authoring.SaveResult{}, diags, err
	}
	return authoring.SaveResult{Name: v.Name, Version: v.Version, Diagnostics: diags}, diags, nil
}

func (s *storeWorkflows) delete(ctx context.Context, name string) (authoring.Version, error) {
	return s.store.Delete(ctx, name)
}

// Close closes the store; a second Close does nothing.
func (s *storeWorkflows) Close() error {
	if s.store == nil {
		return nil
	}
	err := s.store.Close()
	if cerr := s.close(); err == nil {
		err = cerr
	}
	s.store = nil
	return err
}

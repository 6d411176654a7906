package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/plangraph"
)

type workflowRow struct {
	Name        string
	Description string
	Steps       int
	Levels      int
	Pos         string
	Info        WorkflowInfo
}

type workflowsData struct {
	Rows []workflowRow
}

func (c *Console) workflowsPage(w http.ResponseWriter, r *http.Request) {
	var d workflowsData
	infos := c.workflowInfos()
	for _, wf := range c.opts.Engine.Workflows() {
		info, ok := infos[wf.Name]
		if !ok {
			info = WorkflowInfo{Name: wf.Name, Version: wf.Version, Origin: OriginFiles}
		}
		row := workflowRow{Name: wf.Name, Description: wf.Description, Steps: wf.Stats.TotalSteps,
			Levels: wf.Stats.TotalLevels, Info: info}
		if info.Origin == OriginFiles {
			row.Pos = wf.Pos.String()
		}
		d.Rows = append(d.Rows, row)
	}
	sort.Slice(d.Rows, func(i, j int) bool { return d.Rows[i].Name < d.Rows[j].Name })
	c.full(w, r, http.StatusOK, "workflows.html", "Workflows", "workflows", d)
}

type paramRow struct {
	Name, Type, Description, Default string
	Required                         bool
}

type sourceLine struct {
	N    int
	Text string
	Here bool // the workflow's first line
}

type workflowData struct {
	WF       *ir.Workflow
	Info     WorkflowInfo
	Versions []VersionInfo // an authored workflow's, newest first
	Shown    int           // the version whose source is shown (?version=)
	Problem  string
	Pos      string
	Graph    template.HTML // the plan graph, trusted SVG markup
	GraphErr string
	Critical []string
	Params   []paramRow
	Source   []sourceLine
	File     string
}

func (c *Console) workflowPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	wf, ok := c.opts.Engine.Workflow(name)
	if !ok {
		var names []string
		for _, wf := range c.opts.Engine.Workflows() {
			names = append(names, wf.Name)
		}
		sort.Strings(names)
		c.errorPage(w, r, http.StatusNotFound, fmt.Sprintf("No workflow named %q is served; the workflows are: %s.", name, strings.Join(names, ", ")))
		return
	}
	d := workflowData{WF: wf, Pos: wf.Pos.String(), Params: paramsOf(wf.InputSchema), File: wf.Pos.File}
	d.Info, ok = c.workflowInfos()[name]
	if !ok {
		d.Info = WorkflowInfo{Name: name, Version: wf.Version, Origin: OriginFiles}
	}
	var svg bytes.Buffer
	if err := plangraph.SVG(&svg, wf, plangraph.Options{}); err != nil {
		d.GraphErr = "the plan graph cannot be drawn: " + err.Error()
	} else {
		// The drawing escapes every text it holds (plangraph's contract),
		// so it goes into the page as markup.
		d.Graph = template.HTML(svg.String())
	}
	for _, i := range wf.CriticalPath {
		if i >= 0 && i < len(wf.Steps) {
			d.Critical = append(d.Critical, wf.Steps[i].ID)
		}
	}
	src, here := c.opts.Sources[wf.Pos.File], wf.Pos.Line
	if d.Info.Origin == OriginAuthored {
		src, here = c.authoredSource(r, name, &d), 0
	}
	if src != nil {
		for i, line := range strings.Split(strings.TrimRight(string(src), "\n"), "\n") {
			d.Source = append(d.Source, sourceLine{N: i + 1, Text: line, Here: i+1 == here})
		}
	}
	c.full(w, r, http.StatusOK, "workflow.html", wf.Name, "workflows", d)
}

// planSVG serves the plan graph alone, as the file vmcpc plan --format svg
// writes.
func (c *Console) planSVG(w http.ResponseWriter, r *http.Request) {
	wf, ok := c.opts.Engine.Workflow(r.PathValue("name"))
	if !ok {
		http.Error(w, "no such workflow", http.StatusNotFound)
		return
	}
	var svg bytes.Buffer
	if err := plangraph.SVG(&svg, wf, plangraph.Options{}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Write(svg.Bytes())
}

// paramsOf lists the properties of a workflow's input schema by name.
func paramsOf(schema map[string]any) []paramRow {
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	switch rs := schema["required"].(type) {
	case []any:
		for _, x := range rs {
			if s, ok := x.(string); ok {
				required[s] = true
			}
		}
	case []string:
		for _, s := range rs {
			required[s] = true
		}
	}
	var out []paramRow
	for name, p := range props {
		m, _ := p.(map[string]any)
		row := paramRow{Name: name, Required: required[name]}
		row.Type, _ = m["type"].(string)
		row.Description, _ = m["description"].(string)
		if def, ok := m["default"]; ok {
			b, _ := json.Marshal(def)
			row.Default = string(b)
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// authoredSource lists an authored workflow's versions into d and returns
// the source of the one asked for (?version=N, default the newest).
func (c *Console) authoredSource(r *http.Request, name string, d *workflowData) []byte {
	versions, err := c.opts.Catalog.Versions(r.Context(), name)
	if err != nil {
		d.Problem = "The versions of this workflow cannot be read: " + err.Error()
		return nil
	}
	for i := len(versions) - 1; i >= 0; i-- {
		d.Versions = append(d.Versions, versions[i])
	}
	want := 0
	if v := r.URL.Query().Get("version"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			d.Problem = fmt.Sprintf("version must be a version number such as 2, not %q", v)
			return nil
		}
		want = n
	}
	for _, v := range d.Versions {
		if (want == 0 && !v.Deleted) || v.Version == want {
			d.Shown = v.Version
			d.File = fmt.Sprintf("version %d, saved %s UTC", v.Version, v.SavedAt.UTC().Format("2006-01-02 15:04:05"))
			return []byte(v.Source)
		}
	}
	if want != 0 {
		d.Problem = fmt.Sprintf("%s has no version %d (it has %d)", name, want, len(versions))
	}
	return nil
}

package console

// Answering a run's questions from its page (POST /ui/runs/{id}/answer):
// an elicitation the run waits on is shown as a form built from the
// requested schema, and the signed-in owner of the run (or an admin: the
// run page is visible to no one else) accepts, declines or cancels it, as
// an MCP client would. The form's fields follow the schema's properties,
// in name order: a string is a text field (a select with enum or oneOf
// consts), a number or integer a number field, a boolean a checkbox, an
// array of enum items a set of checkboxes. An accepted answer is checked
// against the schema here, each problem shown next to its field; the
// engine checks it again when the run goes on.

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Questions are the elicitations runs wait on (*runtime.Questions).
type Questions interface {
	Pending(runID string) []runtime.PendingQuestion
	Answer(runID, stepID string, res runtime.ElicitResult) error
}

// questionView is one pending question's form.
type questionView struct {
	StepID, Message, Backend, Tool string
	Fields                         []fieldView
	Error                          string // about the whole answer
}

// fieldView is one field of a question's form.
type fieldView struct {
	Name, Title, Description string
	Kind                     string // text, number, integer, boolean, enum, multi
	InputType                string // text's HTML input type (text, email, url, date)
	Required, Checked        bool
	Value                    string // as entered, or the default
	Min, Max, Step           string
	Options                  []optionView
	Error                    string
}

type optionView struct {
	Value, Label string
	Selected     bool
}

// asking names the steps of qs, space-separated (runView.Asking).
func asking(qs []questionView) string {
	ids := make([]string, len(qs))
	for i, q := range qs {
		ids[i] = q.StepID
	}
	return strings.Join(ids, " ")
}

// questionsOf is the forms of run's pending questions.
func (c *Console) questionsOf(runID string) []questionView {
	if c.opts.Questions == nil {
		return nil
	}
	var out []questionView
	for _, p := range c.opts.Questions.Pending(runID) {
		out = append(out, questionOf(p))
	}
	return out
}

func questionOf(p runtime.PendingQuestion) questionView {
	v := questionView{StepID: p.StepID, Message: p.Message, Backend: p.Backend, Tool: p.Tool}
	props, _ := p.Schema["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	required := map[string]bool{}
	if req, ok := p.Schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	} else if req, ok := p.Schema["required"].([]string); ok {
		for _, s := range req {
			required[s] = true
		}
	}
	for _, n := range names {
		prop, _ := props[n].(map[string]any)
		v.Fields = append(v.Fields, fieldOf(n, prop, required[n]))
	}
	return v
}

func fieldOf(name string, prop map[string]any, required bool) fieldView {
	f := fieldView{Name: name, Title: str(prop["title"]), Description: str(prop["description"]), Required: required, Kind: "text", InputType: "text"}
	if f.Title == "" {
		f.Title = name
	}
	def, hasDef := prop["default"]
	switch str(prop["type"]) {
	case "number", "integer":
		f.Kind = str(prop["type"])
		f.Min, f.Max = num(prop["minimum"]), num(prop["maximum"])
		f.Step = "any"
		if f.Kind == "integer" {
			f.Step = "1"
		}
	case "boolean":
		f.Kind = "boolean"
		f.Checked = def == true
	case "array":
		items, _ := prop["items"].(map[string]any)
		if opts := options(items); len(opts) > 0 {
			f.Kind, f.Options = "multi", opts
			if ds, ok := def.([]any); ok {
				for i := range f.Options {
					f.Options[i].Selected = slices.ContainsFunc(ds, func(d any) bool { return fmt.Sprint(d) == f.Options[i].Value })
				}
			}
		}
	default:
		if opts := options(prop); len(opts) > 0 {
			f.Kind, f.Options = "enum", opts
		} else if t := map[string]string{"email": "email", "uri": "url", "date": "date"}[str(prop["format"])]; t != "" {
			f.InputType = t
		}
	}
	if hasDef && f.Kind != "boolean" && f.Kind != "multi" {
		f.Value = fmt.Sprint(def)
	}
	for i := range f.Options {
		if f.Kind == "enum" && f.Options[i].Value == f.Value {
			f.Options[i].Selected = true
		}
	}
	return f
}

// options are a schema's choices: enum (with enumNames as labels), or
// oneOf/anyOf of {const, title}.
func options(s map[string]any) []optionView {
	var out []optionView
	if enum, ok := s["enum"].([]any); ok {
		names, _ := s["enumNames"].([]any)
		for i, e := range enum {
			o := optionView{Value: fmt.Sprint(e), Label: fmt.Sprint(e)}
			if i < len(names) {
				o.Label = fmt.Sprint(names[i])
			}
			out = append(out, o)
		}
		return out
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts, _ := s[key].([]any)
		for _, a := range alts {
			m, _ := a.(map[string]any)
			if c, ok := m["const"]; ok {
				o := optionView{Value: fmt.Sprint(c), Label: str(m["title"])}
				if o.Label == "" {
					o.Label = o.Value
				}
				out = append(out, o)
			}
		}
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) string {
	switch n := v.(type) {
	case float64:
		return strconv.FormatFloat(n, 'f', -1, 64)
	case int, int64, uint64:
		return fmt.Sprint(n)
	}
	return ""
}

// answer handles POST /ui/runs/{id}/answer: step, action (accept,
// decline, cancel) and the fields as f.NAME.
func (c *Console) answer(w http.ResponseWriter, r *http.Request) {
	run, ok := c.lookup(w, r) // the owner's or an admin's: others get 404
	if !ok {
		return
	}
	step, action := r.PostFormValue("step"), r.PostFormValue("action")
	var q *runtime.PendingQuestion
	if c.opts.Questions != nil {
		for _, p := range c.opts.Questions.Pending(run.ID) {
			if p.StepID == step {
				q = &p
				break
			}
		}
	}
	if q == nil {
		c.errorPage(w, r, http.StatusConflict, fmt.Sprintf("Run %s is not waiting for an answer at step %q: it was answered, timed out or ended meanwhile.", run.ID, step))
		return
	}
	res := runtime.ElicitResult{Action: action}
	switch action {
	case runtime.ElicitAccept:
		view := questionOf(*q)
		content, bad := parseAnswer(&view, r.PostForm)
		if bad {
			view.Error = "The answer does not match the question; see the fields marked."
			c.showRun(w, r, run, http.StatusUnprocessableEntity, view)
			return
		}
		res.Content = content
	case runtime.ElicitDecline, runtime.ElicitCancel:
	default:
		c.errorPage(w, r, http.StatusBadRequest, fmt.Sprintf("The action %q is not one of accept, decline, cancel.", action))
		return
	}
	who := httpsafe.Caller(r.Context()).Subject
	res.By = who
	if err := c.opts.Questions.Answer(run.ID, step, res); err != nil {
		c.errorPage(w, r, http.StatusConflict, fmt.Sprintf("Run %s is not waiting for an answer at step %q: it was answered, timed out or ended meanwhile.", run.ID, step))
		return
	}
	c.log.Info("elicitation answered from the console", "run_id", run.ID, "step", step, "action", action, "by", who)
	http.Redirect(w, r, "/ui/runs/"+url.PathEscape(run.ID), http.StatusSeeOther)
}

// parseAnswer reads the form's fields into an answer by the schema,
// marking each field's problem; bad reports whether there is one.
func parseAnswer(v *questionView, form url.Values) (map[string]any, bool) {
	out := map[string]any{}
	bad := false
	for i := range v.Fields {
		f := &v.Fields[i]
		vals := form["f."+f.Name]
		raw := strings.TrimSpace(strings.Join(vals, ""))
		f.Value = raw
		fail := func(format string, args ...any) {
			f.Error, bad = fmt.Sprintf(format, args...), true
		}
		switch f.Kind {
		case "boolean":
			f.Checked = raw == "on" || raw == "true"
			out[f.Name] = f.Checked
			continue
		case "multi":
			var picked []any
			for j := range f.Options {
				f.Options[j].Selected = slices.Contains(vals, f.Options[j].Value)
				if f.Options[j].Selected {
					picked = append(picked, f.Options[j].Value)
				}
			}
			for _, val := range vals {
				if !slices.ContainsFunc(f.Options, func(o optionView) bool { return o.Value == val }) {
					fail("%q is not one of the choices", val)
				}
			}
			if f.Required && len(picked) == 0 {
				fail("pick at least one")
			}
			if picked == nil {
				picked = []any{}
			}
			out[f.Name] = picked
			continue
		}
		if raw == "" {
			if f.Required {
				fail("required")
			}
			continue
		}
		switch f.Kind {
		case "number", "integer":
			n, err := strconv.ParseFloat(raw, 64)
			switch {
			case err != nil || math.IsInf(n, 0) || math.IsNaN(n):
				fail("%q is not a number", raw)
			case f.Kind == "integer" && n != math.Trunc(n):
				fail("%q is not a whole number", raw)
			case f.Min != "" && n < mustFloat(f.Min):
				fail("at least %s", f.Min)
			case f.Max != "" && n > mustFloat(f.Max):
				fail("at most %s", f.Max)
			default:
				if f.Kind == "integer" {
					out[f.Name] = int64(n)
				} else {
					out[f.Name] = n
				}
			}
		case "enum":
			for j := range f.Options {
				f.Options[j].Selected = f.Options[j].Value == raw
			}
			if !slices.ContainsFunc(f.Options, func(o optionView) bool { return o.Value == raw }) {
				fail("%q is not one of the choices", raw)
			} else {
				out[f.Name] = raw
			}
		default:
			if utf8.RuneCountInString(raw) > 10000 {
				fail("at most 10000 characters")
			} else {
				out[f.Name] = raw
			}
		}
	}
	return out, bad
}

func mustFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

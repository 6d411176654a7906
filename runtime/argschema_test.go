package runtime

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vmcp-dev/vmcp/ir"
)

// jiraSchemas declare jira.create's input: an array of objects that each
// need a string name, and a priority from 1 to 5.
var jiraSchemas = schemaMap{"jira.create": M{
	"type": "object",
	"properties": M{
		"items": M{"type": "array", "items": M{
			"type": "object", "properties": M{"name": M{"type": "string"}}, "required": A{"name"},
		}},
		"priority": M{"type": "integer", "minimum": 1, "maximum": 5},
	},
	"required": A{"items"},
}}

// listOf is a fake tool answering {"v": v}.
func listOf(v any) *fakeTool {
	return &fakeTool{Result: func(map[string]any) any { return map[string]any{"v": v} }}
}

// TestToolArgumentsCheckedAgainstInputSchema: a computed argument of the
// wrong shape fails the step before the backend is called, with an error
// that names the argument's path, the rule and the tool, and never the
// value. Arguments that match go through.
func TestToolArgumentsCheckedAgainstInputSchema(t *testing.T) {
	noCreate := func(t *testing.T, run *Run, fb *fakeBackend) {
		t.Helper()
		if calls := fb.CallsTo("create"); len(calls) != 0 {
			t.Errorf("backend got %d calls of jira.create; want none", len(calls))
		}
		if msg := run.Error.Error(); strings.Contains(msg, "secret-web") {
			t.Errorf("error %q shows an argument's value", msg)
		}
	}
	for _, c := range []runCase{
		{
			name: "array of arrays where objects are declared",
			wf: build("arrays",
				tool("list", "svc.list", nil),
				tool("create", "jira.create", M{"items": "{{.steps.list.output.v}}"}, "list")),
			tools:   map[string]*fakeTool{"svc.list": listOf([]any{[]any{}, []any{}})},
			schemas: jiraSchemas,
			status:  RunFailed,
			errHas: []string{`step "create"`, `argument "items[0]" must be object (got array)`,
				`argument "items[1]" must be object (got array)`, "(input schema of tool jira.create)"},
			check: noCreate,
		},
		{
			name: "a nested field of the wrong type, and one missing",
			wf: build("nested",
				tool("list", "svc.list", nil),
				tool("create", "jira.create", M{"items": "{{.steps.list.output.v}}", "priority": 9}, "list")),
			tools:   map[string]*fakeTool{"svc.list": listOf([]any{map[string]any{"name": "ok"}, map[string]any{"name": 7}, map[string]any{"id": "secret-web"}})},
			schemas: jiraSchemas,
			status:  RunFailed,
			errHas: []string{`argument "items[1].name" must be string (got number)`, `argument "items[2].name" is required`,
				`argument "priority" must be <= 5`},
			check: noCreate,
		},
		{
			name:    "a required argument left out",
			wf:      build("missing", tool("create", "jira.create", M{"priority": 2})),
			schemas: jiraSchemas,
			status:  RunFailed,
			errHas:  []string{`argument "items" is required (input schema of tool jira.create)`},
			check:   noCreate,
		},
		{
			name: "a forEach iteration names its iteration",
			wf: build("loop",
				tool("list", "svc.list", nil),
				forEach("create", "{{.steps.list.output.v}}", "it", tool("", "jira.create", M{"items": "{{.forEach.it.items}}"}), "list")),
			// The iteration is named by its item's name (item 10 of issue
			// 22); the argument's value itself is never shown.
			tools: map[string]*fakeTool{"svc.list": listOf([]any{
				map[string]any{"name": "batch-1", "items": []any{map[string]any{"name": "a"}}},
				map[string]any{"name": "batch-2", "items": []any{map[string]any{"id": "secret-web"}}}})},
			schemas: jiraSchemas,
			status:  RunFailed,
			errHas:  []string{`iteration 1 (name "batch-2")`, `argument "items[0].name" is required (input schema of tool jira.create)`},
			check: func(t *testing.T, run *Run, fb *fakeBackend) {
				for _, call := range fb.CallsTo("create") {
					if items := call.Arguments["items"].([]any); len(items) == 1 && items[0].(map[string]any)["id"] != nil {
						t.Errorf("backend was called with iteration 1's arguments")
					}
				}
				if strings.Contains(run.Error.Error(), "secret-web") {
					t.Errorf("error %q shows an argument's value", run.Error)
				}
			},
		},
		{
			name: "matching arguments go through",
			wf: build("ok",
				tool("list", "svc.list", nil),
				tool("create", "jira.create", M{"items": "{{.steps.list.output.v}}", "priority": "3"}, "list")),
			tools:   map[string]*fakeTool{"svc.list": listOf([]any{map[string]any{"name": "web-1"}})},
			schemas: jiraSchemas,
			status:  RunCompleted,
			wantOut: true,
			output:  M{"args": M{"items": A{M{"name": "web-1"}}, "priority": int64(3)}},
		},
		{
			name: "a schema that does not compile leaves the call to the backend",
			wf:   build("broken", tool("create", "jira.create", M{"name": "x"})),
			schemas: schemaMap{"jira.create": M{"type": "object", "properties": M{
				"name": M{"type": "string", "pattern": "("}}}},
			status:  RunCompleted,
			wantOut: true,
			output:  M{"args": M{"name": "x"}},
		},
	} {
		t.Run(c.name, c.run)
	}
}

// TestArgSchemaCache: a tool's schema is compiled once and reused while
// the source gives the same map; another map is compiled again; a schema
// that accepts every object has nothing to check.
func TestArgSchemaCache(t *testing.T) {
	var c argSchemas
	key := toolKey{"jira", "create"}
	s1 := jiraSchemas["jira.create"]
	a, err := c.get(key, s1)
	if err != nil || a.validator == nil {
		t.Fatalf("get(jira.create) = %+v, %v; want a validator", a, err)
	}
	if b, _ := c.get(key, s1); b != a {
		t.Errorf("get(jira.create) again compiled the schema again; want the cached one")
	}
	s2 := M{"type": "object", "properties": M{}}
	b, err := c.get(key, s2)
	if err != nil || b == a || b.validator != nil {
		t.Errorf("get(jira.create, new trivial schema) = %+v, %v; want a new entry with no validator", b, err)
	}
}

// countingSchemas is a schema source that counts how often it is asked.
type countingSchemas struct {
	m     schemaMap
	asked atomic.Int32
}

func (c *countingSchemas) InputSchema(backend, tool string) (map[string]any, bool) {
	c.asked.Add(1)
	return c.m.InputSchema(backend, tool)
}

// fixedCounting is countingSchemas marked as a FixedSchemaSource.
type fixedCounting struct{ *countingSchemas }

func (fixedCounting) SchemasFixed() {}

// TestFixedSchemaSourceIsAskedOncePerStep: the engine asks a
// FixedSchemaSource for a tool step's schema on the step's first call
// only, and other sources on every call; later calls still coerce their
// arguments to the schema it gave ("5" to 5) and still fail on arguments
// that do not match it.
func TestFixedSchemaSourceIsAskedOncePerStep(t *testing.T) {
	schemas := schemaMap{"svc.x": M{"type": "object", "properties": M{"v": M{"type": "integer"}}, "required": A{"v"}}}
	wfs := plan(
		build("ok", tool("a", "svc.x", M{"v": "5"}), tool("b", "svc.x", M{"v": 6})),
		build("bad", tool("c", "svc.x", M{"v": "x"})),
	)
	for _, c := range []struct {
		name  string
		fixed bool
		want  int32 // times asked in three runs of ok and two of bad
	}{{"fixed", true, 3}, {"live", false, 8}} {
		t.Run(c.name, func(t *testing.T) {
			cs := &countingSchemas{m: schemas}
			var src SchemaSource = cs
			if c.fixed {
				src = fixedCounting{cs}
			}
			e := mustEngine(t, wfs, Options{Backend: newFake(nil), Schemas: src})
			for range 3 {
				run, err := e.Run(context.Background(), "ok", nil, RunOptions{})
				if err != nil || run.Status != RunCompleted {
					t.Fatalf("Run(ok) = %v, %v", run, err)
				}
				if got := run.Steps[0].Output.(map[string]any)["args"].(map[string]any)["v"]; got != int64(5) {
					t.Errorf("step a called with v = %#v; want the coerced 5", got)
				}
			}
			for range 2 {
				run, err := e.Run(context.Background(), "bad", nil, RunOptions{})
				if err != nil || run.Status != RunFailed || !strings.Contains(run.Error.Error(), "input schema declares integer") {
					t.Fatalf("Run(bad) = %v, %v; want it failed by the input schema", run, err)
				}
			}
			if got := cs.asked.Load(); got != c.want {
				t.Errorf("the source was asked %d times; want %d", got, c.want)
			}
		})
	}
}

// checkToolArgs checks a call's arguments as evalArgs does once the fast
// check has not passed them: the tool's compiled schema, then its check.
func checkToolArgs(e *Engine, backend, tool string, schema, args map[string]any) string {
	return e.toolArgSchema(nil, backend, tool, schema).check(backend, tool, args)
}

// TestCheckToolArgsNonJSONTypes: a Go value the validator does not take
// (a []string) is checked in its JSON form, not reported as a problem.
func TestCheckToolArgsNonJSONTypes(t *testing.T) {
	e := mustEngine(t, plan(build("w", tool("a", "svc.x", nil))), Options{Backend: newFake(nil)})
	schema := M{"type": "object", "properties": M{"tags": M{"type": "array", "items": M{"type": "string"}}}}
	if msg := checkToolArgs(e, "svc", "tags", schema, map[string]any{"tags": []string{"a", "b"}}); msg != "" {
		t.Errorf("checkToolArgs([]string of strings) = %q; want no problem", msg)
	}
	if msg := checkToolArgs(e, "svc", "tags", schema, map[string]any{"tags": []int{1}}); !strings.Contains(msg, `argument "tags[0]" must be string (got number)`) {
		t.Errorf("checkToolArgs([]int) = %q; want the path and the rule", msg)
	}
}

// fastCaseSchemas are schemas of argfast.go's subset.
var fastCaseSchemas = []M{
	{"type": "object", "properties": M{"v": M{"type": "integer"}, "a": M{"type": "number", "minimum": 0, "maximum": 2.5}}, "required": A{"v"}},
	{"type": "object", "properties": M{"name": M{"type": "string", "minLength": 2, "maxLength": 3}, "kind": M{"enum": A{"pod", "node"}}}, "additionalProperties": false},
	{"type": "object", "properties": M{"items": M{"type": "array", "minItems": 1, "maxItems": 2, "items": M{"type": "object", "required": A{"name"}}}}},
	{"type": "object", "additionalProperties": M{"type": A{"string", "null"}}, "$schema": "http://json-schema.org/draft-07/schema#", "title": "t"},
	{"type": "object", "properties": M{"any": true, "b": M{"type": "boolean", "description": "d", "default": true}}},
	{"type": "object", "properties": M{"v": M{"type": "integer"}, "name": M{"type": "string"}}, "required": A{"name", "v"}},
	// A required name that is not declared: validObject looks it up on its own.
	{"type": "object", "properties": M{"v": M{"type": "integer"}}, "required": A{"v", "other"}},
}

// fastCaseValues are argument objects made from a pool of values under
// the keys the schemas above use.
func fastCaseValues() []map[string]any {
	pool := []any{nil, true, false, "", "a", "ab", "abc", "abcd", "üü", "pod", "node", "5", " 5 ", "1.5", "true", `{"name":"x"}`, `[{"name":"a"}]`, int64(0), int64(3), int64(-1), 1.0, 1.5, 2.5, 3.5,
		int64(1) << 60, M{}, M{"name": "x"}, M{"id": 1}, A{}, A{M{"name": "a"}}, A{M{"name": "a"}, M{"name": "b"}, M{"name": "c"}}, A{A{}}, A{"x"}}
	var out []map[string]any
	for _, k := range []string{"v", "a", "name", "kind", "items", "any", "b", "other"} {
		for _, v := range pool {
			out = append(out, map[string]any{k: v})
			out = append(out, map[string]any{"v": int64(1), k: v})
		}
	}
	return out
}

// TestFastArgCheckAgreesWithTheValidator: whenever argfast.go says the
// arguments surely match, the validator agrees and coercion would change
// nothing (evalArgs then skips both); and it does say so for matching
// arguments of each schema (else it would never save anything).
func TestFastArgCheckAgreesWithTheValidator(t *testing.T) {
	for i, schema := range fastCaseSchemas {
		fast, ok := prepareFast(schema, 0)
		if !ok {
			t.Fatalf("schema %d is not prepared for the fast check", i)
		}
		v, err := compileSchema(schema, "vmcp:///fast.json")
		if err != nil {
			t.Fatal(err)
		}
		sure := 0
		for _, args := range fastCaseValues() {
			if !fast.surelyValid(args) {
				continue
			}
			sure++
			if err := v.Validate(normalizeInstance(args)); err != nil {
				t.Errorf("schema %d: fast check passes %v, the validator says %v", i, args, err)
			}
			coerced := maps.Clone(args)
			if err := coerceArgs(coerced, schema); err != nil || !reflect.DeepEqual(coerced, args) {
				t.Errorf("schema %d: fast check passes %v, which coercion makes %v (%v)", i, args, coerced, err)
			}
		}
		if sure == 0 {
			t.Errorf("schema %d: the fast check passes no arguments at all", i)
		}
	}
	for _, outside := range []M{{"type": "string", "format": "email"}, {"$ref": "#/$defs/x"}, {"anyOf": A{M{}}}, {"type": "integer", "minimum": "1"}} {
		if _, ok := prepareFast(outside, 0); ok {
			t.Errorf("prepareFast(%v) = ok; want it left to the validator", outside)
		}
	}
}

// TestPlannedArgCheckAnswersAsTheFastCheck: a step's own check of its
// arguments (plannedCheck, made once for the step's argument plan) gives
// the fast check's answer for every argument object its plan can make:
// all of the plan's keys, in either order, or fewer (omitNullActions left
// one out). And it is usable, not a detour to the fast check, for the
// schemas whose rules allow the plan's keys.
func TestPlannedArgCheckAnswersAsTheFastCheck(t *testing.T) {
	usable := 0
	for i, schema := range fastCaseSchemas {
		fast, ok := prepareFast(schema, 0)
		if !ok {
			t.Fatalf("schema %d is not prepared for the fast check", i)
		}
		as := &argSchema{fast: fast}
		for _, args := range fastCaseValues() {
			keys := slices.Sorted(maps.Keys(args))
			plans := [][]string{keys, slices.Concat(keys, []string{"omitted"})}
			if len(keys) > 1 {
				plans = append(plans, []string{keys[1], keys[0]})
			}
			want := fast.surelyValid(args)
			for _, pk := range plans {
				plan := &valuePlan{kind: ir.KindObject, keys: pk}
				pc := newPlannedCheck(plan, as)
				if got := pc.surelyValid(plan, args); got != want {
					t.Errorf("schema %d, plan keys %v: planned check says %v for %v, the fast check %v", i, pk, got, args, want)
				}
				if pc.props != nil && len(pk) == len(args) {
					usable++
				}
			}
		}
	}
	if usable == 0 {
		t.Error("the planned check was never usable: every call went to the fast check")
	}
	// A plan that is not an object, and a schema outside the subset, leave
	// every call to the fast check.
	as := &argSchema{}
	if pc := newPlannedCheck(&valuePlan{kind: ir.KindObject, keys: []string{"v"}}, as); pc.props != nil || pc.surelyValid(nil, M{"v": 1}) {
		t.Error("a schema outside the fast subset got a usable planned check")
	}
	fast, _ := prepareFast(fastCaseSchemas[0], 0)
	if pc := newPlannedCheck(&valuePlan{kind: ir.KindTemplate}, &argSchema{fast: fast}); pc.props != nil {
		t.Error("a whole-arguments template got a usable planned check")
	}
}

// TestCheckToolArgsValidAllocatesNothing: arguments that match a schema
// of the fast subset are checked without a single allocation.
func TestCheckToolArgsValidAllocatesNothing(t *testing.T) {
	e := mustEngine(t, plan(build("w", tool("a", "svc.x", nil))), Options{Backend: newFake(nil)})
	schema := fastCaseSchemas[0]
	args := map[string]any{"v": int64(3), "a": 1.5}
	if msg := checkToolArgs(e, "svc", "x", schema, args); msg != "" {
		t.Fatalf("checkToolArgs = %q; want no problem", msg)
	}
	if n := testing.AllocsPerRun(100, func() { checkToolArgs(e, "svc", "x", schema, args) }); n != 0 {
		t.Errorf("checkToolArgs of matching arguments makes %v allocations; want 0", n)
	}
}

package runtime

// Argument validation: before a tool step calls its backend, its evaluated
// (and coerced, value.go) arguments are validated against the tool's input
// schema, so that a computed argument of the wrong shape (an array of
// arrays where the tool takes an array of objects) fails the step in the
// workflow's terms instead of reaching the backend.
//
// Cost. Schemas come from Options.Schemas (the live tool catalog). Each is
// compiled once, on its first call, and kept in the engine's cache keyed
// by backend and tool, and each tool step keeps the entry it used last
// (stepPlan.argSchema). The entry remembers the schema map it was compiled
// from: if the source later gives another map (a backend that listed its
// tools again), the entry is compiled again. A FixedSchemaSource is not
// asked again once a step has its entry. A trivial schema (one that
// accepts every object: {type: object}, with no properties) is cached as
// "nothing to check", and so is one that does not compile (the backend's
// schema is the backend's business: the call goes through and the
// backend judges, as before, and the engine logs the reason once). Most
// schemas are also prepared for a check that allocates nothing
// (argfast.go); the validator runs only when that check cannot say the
// arguments match. That check runs first, before coercion: arguments it
// passes need no coercion either (argSchema.surelyValid says why), so a
// matching call costs one pass over its arguments. The arguments are
// validated as the Go values they are, without a JSON round trip; only a
// value the validator does not know (a []string, say) makes them go
// through JSON once.
//
// Errors name the argument's path (items[1].name), the rule and the tool,
// never the value: arguments may be secrets. A forEach iteration's error
// is prefixed with the iteration by foreach.go, as every step error of an
// iteration is.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// toolKey names one backend tool.
type toolKey struct{ backend, tool string }

// argSchema is a compiled tool input schema; validator is nil when there
// is nothing to check, fast when the schema is not in argfast.go's
// subset. schema is the map it was compiled from.
type argSchema struct {
	schema    map[string]any
	validator *jsonschema.Schema
	fast      *fastSchema
}

// from reports whether as was compiled from schema: the same map, not an
// equal one (a source that lists a tool again gives a new map).
func (as *argSchema) from(schema map[string]any) bool {
	return reflect.ValueOf(as.schema).Pointer() == reflect.ValueOf(schema).Pointer()
}

// argSchemas caches the compiled input schemas of backend tools.
type argSchemas struct {
	m sync.Map // toolKey -> *argSchema
}

// get returns the compiled form of schema, the input schema of backend
// tool key, compiling it on first use. The second result is why the
// schema cannot be used when it was compiled just now and failed; the
// caller logs it.
func (c *argSchemas) get(key toolKey, schema map[string]any) (*argSchema, error) {
	if v, ok := c.m.Load(key); ok {
		if as := v.(*argSchema); as.from(schema) {
			return as, nil
		}
	}
	as := &argSchema{schema: schema}
	var err error
	if !anyObjectSchema(schema) {
		as.validator, err = compileSchemaWith(schema, "vmcp:///tools/"+key.backend+"/"+key.tool+"/input.json", noRemoteRefs{})
	}
	if as.validator != nil {
		as.fast, _ = prepareFast(schema, 0)
	}
	c.m.Store(key, as)
	return as, err
}

// noRemoteRefs refuses every $ref outside the schema: a backend's schema
// must not make vmcp read files or fetch URLs.
type noRemoteRefs struct{}

func (noRemoteRefs) Load(url string) (any, error) {
	return nil, fmt.Errorf("references outside the schema are not loaded (%s)", url)
}

// toolArgSchema returns the compiled input schema of backend tool, schema
// being what the source gives for it now. step, when set, is the calling
// step's own cache: the entry it found last, used while the source gives
// the same map, without the engine cache's lookup by name.
func (e *Engine) toolArgSchema(step *atomic.Pointer[argSchema], backend, tool string, schema map[string]any) *argSchema {
	if step != nil {
		if as := step.Load(); as != nil && as.from(schema) {
			return as
		}
	}
	as, err := e.argSchemas.get(toolKey{backend, tool}, schema)
	if err != nil {
		e.log.Warn("a tool's input schema does not compile; its arguments go to the backend unchecked",
			"backend", backend, "tool", tool, "error", err)
	}
	if step != nil {
		step.Store(as)
	}
	return as
}

// surelyValid reports whether args surely match the schema, by the
// allocation-free check (argfast.go) alone. When it says yes, coercion
// (value.go) would change nothing either: coercion changes only a string
// where the schema's type leaves strings out, and the fast check, which
// follows the same properties and items with the same type bits, finds
// no such string in arguments that match.
func (as *argSchema) surelyValid(args map[string]any) bool {
	return as.fast != nil && as.fast.surelyValid(args)
}

// check validates a tool call's arguments against the schema: the fast
// check first, then the validator, which writes the message. It returns
// "" when they match or when there is nothing to check, else the message
// of the step's error.
func (as *argSchema) check(backend, tool string, args map[string]any) string {
	if as.validator == nil || as.surelyValid(args) {
		return ""
	}
	var inst any = args
	verr := as.validator.Validate(inst)
	var ve *jsonschema.ValidationError
	if errors.As(verr, &ve) && hasInvalidJSONValue(ve) {
		// A Go type the validator does not take: validate its JSON form.
		var err error
		if inst, err = jsonForm(args); err != nil {
			return fmt.Sprintf("arguments cannot be encoded as JSON to check them against the input schema of tool %s.%s", backend, tool)
		}
		verr = as.validator.Validate(inst)
	}
	if verr == nil {
		return ""
	}
	if !errors.As(verr, &ve) {
		return fmt.Sprintf("arguments cannot be checked against the input schema of tool %s.%s", backend, tool)
	}
	problems := map[string]bool{}
	collectProblemsAt(ve, "argument", func(loc []string) string { return argPath(inst, loc) }, problems)
	return fmt.Sprintf("%s (input schema of tool %s.%s)",
		strings.Join(sortedProblems(problems, "arguments do not match"), "; "), backend, tool)
}

// hasInvalidJSONValue reports whether the error tree holds an
// InvalidJsonValue, the validator's word for a Go type it does not know.
func hasInvalidJSONValue(e *jsonschema.ValidationError) bool {
	if _, ok := e.ErrorKind.(*kind.InvalidJsonValue); ok {
		return true
	}
	for _, c := range e.Causes {
		if hasInvalidJSONValue(c) {
			return true
		}
	}
	return false
}

// jsonForm is v decoded from its JSON encoding, as the validator reads it.
func jsonForm(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

// argPath writes an instance location as a path into the arguments:
// object keys joined with dots, array indexes in brackets (items[1].name).
// Whether a segment is an index is read from the instance itself, so a key
// "1" of an object stays a key.
func argPath(inst any, loc []string) string {
	var b strings.Builder
	cur := inst
	for _, seg := range loc {
		switch x := cur.(type) {
		case []any:
			b.WriteString("[" + seg + "]")
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x) {
				cur = x[i]
			} else {
				cur = nil
			}
			continue
		case map[string]any:
			cur = x[seg]
		default:
			cur = nil
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

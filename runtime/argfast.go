package runtime

// A shortcut for argSchema.check (argschema.go).
//
// The validator (santhosh-tekuri/jsonschema) allocates as it walks: about
// fifteen allocations and a microsecond and a half for a four-property
// object, which would double the engine's own cost per call. Most tool
// input schemas use only a few keywords with simple rules, and most calls
// pass arguments that match. So each schema made only of those keywords
// is also prepared as a fastSchema, which answers one question without
// allocating: do these arguments surely match? When it says yes, the
// call goes ahead; when it says no (or cannot tell: a Go type it does not
// know, an integer too big for a float64), the validator decides and
// writes the message, so the errors and every edge case are the
// library's.
//
// The keywords, whose meaning is the same in every draft the library
// reads: type, properties, required, items (one schema), additionalProperties
// (a boolean or a schema), enum (of strings only), minimum and maximum,
// minLength and maxLength (in code points), minItems and maxItems, and the
// annotations title, description, default, examples and $schema. A
// schema with any other keyword (format, pattern, $ref, anyOf, ...) is
// not prepared, and its calls all go to the validator. The boolean
// schema true is the empty schema.
//
// A step's own shortcut (plannedCheck). A tool step whose arguments are an
// object in the workflow passes the same keys on every call: its plan's
// (less those omitNullActions leaves out). Which property schema checks
// each key, and whether the keys hold every required property, is found
// once per step and schema; a call then costs one lookup per argument
// instead of one per declared property. It answers as
// fastSchema.surelyValid does, and leaves every other call to it.

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/ir"
)

// Type bits of fastSchema.types.
const (
	fastNull = 1 << iota
	fastBoolean
	fastString
	fastInteger
	fastNumber
	fastObject
	fastArray
)

var fastTypeBits = map[string]uint8{"null": fastNull, "boolean": fastBoolean, "string": fastString,
	"integer": fastInteger, "number": fastNumber, "object": fastObject, "array": fastArray}

// fastSchema is a schema of the subset above, ready for surelyValid.
type fastSchema struct {
	types uint8 // 0: any type
	props map[string]*fastSchema
	// few lists props, sorted by name, when there are at most fewProps
	// of them (validObject); fewRequired says that every required name
	// is one of them, marked.
	few         []namedSchema
	fewRequired bool
	required    []string
	items       *fastSchema // nil: any items
	// addl is additionalProperties as a schema; noAddl is false.
	addl               *fastSchema
	noAddl             bool
	enum               []string // nil: no enum
	min, max           *float64
	minLen, maxLen     int // -1: no bound
	minItems, maxItems int // -1: no bound
}

// prepareFast returns the fastSchema of schema, or false when schema is
// not in the subset.
func prepareFast(schema any, d int) (*fastSchema, bool) {
	if d > maxArgumentDepth {
		return nil, false
	}
	if schema == true {
		return &fastSchema{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}, true
	}
	m, ok := schema.(map[string]any)
	if !ok {
		return nil, false
	}
	f := &fastSchema{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
	for k, v := range m {
		if !f.set(k, v, d) {
			return nil, false
		}
	}
	f.markRequired()
	return f, true
}

// markRequired marks the few properties that are required, once every
// keyword is read. A required name that is not declared, or named twice,
// leaves fewRequired false, and validObject looks the required names up
// on their own.
func (f *fastSchema) markRequired() {
	if f.few == nil {
		return
	}
	marked := 0
	for i := range f.few {
		if slices.Contains(f.required, f.few[i].name) {
			f.few[i].required = true
			marked++
		}
	}
	f.fewRequired = marked == len(f.required)
}

// set reads one keyword into f; false when it is outside the subset or
// its value is not what the keyword takes.
func (f *fastSchema) set(k string, v any, d int) bool {
	ok := true
	switch k {
	case "title", "description", "default", "examples", "$schema":
	case "type":
		f.types, ok = fastTypes(v)
	case "properties":
		props, isMap := v.(map[string]any)
		f.props = make(map[string]*fastSchema, len(props))
		for name, ps := range props {
			if f.props[name], ok = prepareFast(ps, d+1); !ok {
				return false
			}
		}
		if len(f.props) <= fewProps {
			for name, ps := range f.props {
				f.few = append(f.few, namedSchema{name: name, schema: ps})
			}
			slices.SortFunc(f.few, func(a, b namedSchema) int { return strings.Compare(a.name, b.name) })
		}
		ok = isMap
	case "required":
		f.required, ok = stringList(v)
	case "items":
		f.items, ok = prepareFast(v, d+1)
	case "additionalProperties":
		if b, isBool := v.(bool); isBool {
			f.noAddl = !b
		} else {
			f.addl, ok = prepareFast(v, d+1)
		}
	case "enum":
		f.enum, ok = stringList(v)
		ok = ok && len(f.enum) > 0
	case "minimum":
		f.min, ok = keywordNumber(v)
	case "maximum":
		f.max, ok = keywordNumber(v)
	case "minLength":
		f.minLen, ok = keywordCount(v)
	case "maxLength":
		f.maxLen, ok = keywordCount(v)
	case "minItems":
		f.minItems, ok = keywordCount(v)
	case "maxItems":
		f.maxItems, ok = keywordCount(v)
	default:
		return false
	}
	return ok
}

// fastTypes reads a type keyword: one name or a list of names.
func fastTypes(v any) (uint8, bool) {
	names, ok := stringList(v)
	if s, one := v.(string); one {
		names, ok = []string{s}, true
	}
	var bits uint8
	for _, n := range names {
		b, known := fastTypeBits[n]
		if !known {
			return 0, false
		}
		bits |= b
	}
	return bits, ok && bits != 0
}

// stringList reads a list of strings.
func stringList(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(list))
	for i, x := range list {
		if out[i], ok = x.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// keywordNumber reads a keyword's number.
func keywordNumber(v any) (*float64, bool) {
	f, ok := exactFloat(v)
	return &f, ok
}

// keywordCount reads a keyword's non-negative integer.
func keywordCount(v any) (int, bool) {
	f, ok := exactFloat(v)
	if !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

// exactFloat is v as a float64 when the conversion is exact.
func exactFloat(v any) (float64, bool) {
	const exact = 1 << 53
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case int64:
		return float64(x), x >= -exact && x <= exact
	case int:
		return float64(x), x >= -exact && x <= exact
	}
	return 0, false
}

// surelyValid reports whether v surely matches f; false means "ask the
// validator".
func (f *fastSchema) surelyValid(v any) bool {
	switch x := v.(type) {
	case nil:
		return f.allows(fastNull) && f.enum == nil
	case bool:
		return f.allows(fastBoolean) && f.enum == nil
	case string:
		return f.allows(fastString) && f.validString(x)
	case map[string]any:
		return f.allows(fastObject) && f.enum == nil && f.validObject(x)
	case []any:
		return f.allows(fastArray) && f.enum == nil && f.validArray(x)
	}
	n, ok := exactFloat(v)
	if !ok || f.enum != nil {
		return false
	}
	if !f.allows(fastNumber) && !(f.allows(fastInteger) && n == math.Trunc(n)) {
		return false
	}
	return (f.min == nil || n >= *f.min) && (f.max == nil || n <= *f.max)
}

// allows reports whether f's type keyword admits type bit t.
func (f *fastSchema) allows(t uint8) bool { return f.types == 0 || f.types&t != 0 }

func (f *fastSchema) validString(s string) bool {
	if f.minLen >= 0 || f.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if n < f.minLen || f.maxLen >= 0 && n > f.maxLen {
			return false
		}
	}
	if f.enum == nil {
		return true
	}
	for _, e := range f.enum {
		if e == s {
			return true
		}
	}
	return false
}

// namedSchema is one declared property.
type namedSchema struct {
	name     string
	schema   *fastSchema
	required bool
}

// fewProps is the most declared properties for which validObject looks
// each one up in the arguments rather than ranging over them: starting a
// range over a map costs about as much as a few lookups.
const fewProps = 8

func (f *fastSchema) validObject(m map[string]any) bool {
	if f.few != nil && len(m) <= len(f.few) {
		// One lookup per declared property: a missing one must not be
		// required, a found one is checked, and when all of m's keys were
		// found none is undeclared.
		if !f.fewRequired && !f.hasRequired(m) {
			return false
		}
		found := 0
		for _, p := range f.few {
			v, ok := m[p.name]
			switch {
			case !ok:
				if p.required {
					return false
				}
			case !p.schema.surelyValid(v):
				return false
			default:
				found++
			}
		}
		if found == len(m) {
			return true
		}
	}
	if !f.hasRequired(m) {
		return false
	}
	for k, v := range m {
		ps, allowed := f.property(k)
		if !allowed || ps != nil && !ps.surelyValid(v) {
			return false
		}
	}
	return true
}

// property is the schema that a property named k must surely match: its
// declared one, else additionalProperties' (nil: any value). allowed is
// false when additionalProperties is false and k is not declared.
func (f *fastSchema) property(k string) (ps *fastSchema, allowed bool) {
	if ps, declared := f.props[k]; declared {
		return ps, true
	}
	return f.addl, !f.noAddl
}

// hasRequired reports whether m has every required property.
func (f *fastSchema) hasRequired(m map[string]any) bool {
	for _, r := range f.required {
		if _, ok := m[r]; !ok {
			return false
		}
	}
	return true
}

func (f *fastSchema) validArray(a []any) bool {
	if len(a) < f.minItems || f.maxItems >= 0 && len(a) > f.maxItems {
		return false
	}
	if f.items == nil {
		return true
	}
	for _, v := range a {
		if !f.items.surelyValid(v) {
			return false
		}
	}
	return true
}

// plannedCheck is a tool step's fast check of its arguments' top level,
// made for the step's argument plan and one compiled schema.
type plannedCheck struct {
	schema *argSchema // the entry it was made for
	// props holds, per plan key, the schema its value must surely match
	// (nil: any value); nil when the check is not usable, when
	// schema.surelyValid decides every call.
	props []*fastSchema
}

// newPlannedCheck prepares the check of arguments made by plan against
// as. It is usable when the plan is an object, its keys hold every
// required property and each key is declared or allowed as an additional
// property: then arguments with all of the plan's keys match when each
// value matches its key's schema.
func newPlannedCheck(plan *valuePlan, as *argSchema) *plannedCheck {
	pc := &plannedCheck{schema: as}
	f := as.fast
	if f == nil || plan == nil || plan.kind != ir.KindObject || !f.allows(fastObject) || f.enum != nil {
		return pc
	}
	for _, r := range f.required {
		if !slices.Contains(plan.keys, r) {
			return pc
		}
	}
	props := make([]*fastSchema, len(plan.keys))
	for i, k := range plan.keys {
		ps, allowed := f.property(k)
		if !allowed {
			return pc
		}
		props[i] = ps
	}
	pc.props = props
	return pc
}

// surelyValid is pc.schema.surelyValid(args) for arguments made by plan.
// With as many arguments as the plan has keys, the arguments have each of
// them (they have no others), so only their values are left to check.
func (pc *plannedCheck) surelyValid(plan *valuePlan, args map[string]any) bool {
	if pc.props == nil || len(args) != len(pc.props) {
		return pc.schema.surelyValid(args)
	}
	for i, k := range plan.keys {
		if ps := pc.props[i]; ps != nil && !ps.surelyValid(args[k]) {
			return false
		}
	}
	return true
}

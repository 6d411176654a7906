package runtime

// Item labels: how an iteration's error names the item it ran for.
//
// "iteration 3: ..." makes the reader count items; the label names the
// item instead: `iteration 3 (name "web-2"): ...`. An object that has a
// non-empty string (or number) name, id or metadata.name, looked up in
// that order, is named by that field; any other item by the start of its
// compact JSON, `iteration 3 ({"a":1,"b":[...)`. Both are cut at
// maxLabelRunes runes (never inside a rune) and marked "..." when cut.
// The JSON prefix is written by a bounded walk (prefixWriter), object keys
// sorted, so labelling a large item costs about as much as its first
// maxLabelRunes runes, and the same item always gets the same label. The
// label shows only what the item holds, which the iteration's record
// (iterations[i].item) already holds whole.

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxLabelRunes bounds an item label's name or JSON prefix.
const maxLabelRunes = 40

// cutMark ends a label that was cut.
const cutMark = "..."

// labelFields are the fields that name an object item, in the order they
// are tried; metadata.name is a Kubernetes object's name.
var labelFields = [][]string{{"name"}, {"id"}, {"metadata", "name"}}

// IterationLabel is how messages name iteration i of a loop over item:
// "iteration i (LABEL)" with LABEL from ItemLabel.
func IterationLabel(i int, item any) string {
	return "iteration " + strconv.Itoa(i) + " (" + ItemLabel(item) + ")"
}

// ItemLabel names a loop item: `name "web-2"` (or id, or metadata.name)
// when it is an object with one of them, else the start of its JSON.
func ItemLabel(item any) string {
	if obj, ok := item.(map[string]any); ok {
		for _, path := range labelFields {
			if v, ok := namingValue(obj, path); ok {
				return strings.Join(path, ".") + " " + v
			}
		}
	}
	p := prefixWriter{max: maxLabelRunes}
	p.value(item)
	return p.text()
}

// namingValue is the field at path in obj, quoted when it is a string,
// when it is a non-empty string or a number.
func namingValue(obj map[string]any, path []string) (string, bool) {
	var v any = obj
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		v = m[k]
	}
	switch x := v.(type) {
	case string:
		if x == "" {
			return "", false
		}
		s, cut := cutRunes(x, maxLabelRunes)
		if cut {
			s += cutMark
		}
		return strconv.Quote(s), true
	case int, int64, float64, json.Number:
		b, err := json.Marshal(x)
		return string(b), err == nil
	}
	return "", false
}

// cutRunes returns the first n runes of s, and whether any were left out.
func cutRunes(s string, n int) (string, bool) {
	for i := range s {
		if n == 0 {
			return s[:i], true
		}
		n--
	}
	return s, false
}

// prefixWriter writes the compact JSON of a value until it holds more
// than max runes; text then cuts it at max.
type prefixWriter struct {
	b     strings.Builder
	runes int
	max   int
}

func (p *prefixWriter) full() bool { return p.runes > p.max }

func (p *prefixWriter) write(s string) {
	p.b.WriteString(s)
	p.runes += utf8.RuneCountInString(s)
}

// value writes v's JSON, or as much of it as fills the writer.
func (p *prefixWriter) value(v any) {
	if p.full() {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		p.object(x)
	case []any:
		p.write("[")
		for i, e := range x {
			if p.full() {
				return
			}
			if i > 0 {
				p.write(",")
			}
			p.value(e)
		}
		p.write("]")
	case string:
		p.str(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			p.write("?")
			return
		}
		p.write(string(b))
	}
}

func (p *prefixWriter) object(m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	p.write("{")
	for i, k := range keys {
		if p.full() {
			return
		}
		if i > 0 {
			p.write(",")
		}
		p.str(k)
		p.write(":")
		p.value(m[k])
	}
	p.write("}")
}

// str writes s as a JSON string, or enough of it to fill the writer.
func (p *prefixWriter) str(s string) {
	s, _ = cutRunes(s, p.max+1)
	p.write(jsonString(s))
}

// text is what was written, cut at max runes.
func (p *prefixWriter) text() string {
	s, cut := cutRunes(p.b.String(), p.max)
	if cut {
		s += cutMark
	}
	return s
}

// jsonString is s as a JSON string, with <, > and & as they are.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

package runtime

import (
	"strings"
	"testing"
)

// Named inputs are bound as $name for the whole expression, inside
// filters and projections too, and numbers in them compare as numbers.
func TestQueryNamedInputs(t *testing.T) {
	data := map[string]any{
		"steps": M{
			"bindings": M{"output": M{"items": A{
				M{"user": "ann", "role": "admin"},
				M{"user": "bob", "role": "viewer"},
				M{"user": "cy", "role": "ghost"},
			}}},
			"roles": M{"output": M{"items": A{
				M{"name": "admin", "level": int64(3)},
				M{"name": "viewer", "level": int64(1)},
			}}},
		},
	}
	checkValues(t, data, []valueCase{
		{"{{query \"items[?contains($roles[].name, role)].user\" .steps.bindings.output \"roles\" .steps.roles.output.items}}", A{"ann", "bob"}},
		{"{{query \"items[].{user: user, level: $levels[?name == 'admin'] | [0].level}\" .steps.bindings.output \"levels\" .steps.roles.output.items}}",
			A{M{"user": "ann", "level": int64(3)}, M{"user": "bob", "level": int64(3)}, M{"user": "cy", "level": int64(3)}}},
		{"{{query \"[$a, length($b)]\" 0 \"a\" 1 \"b\" .steps.roles.output.items}}", A{int64(1), int64(2)}},
		{"{{.steps.roles.output.items | query \"$r[?level > `2`].name\" .steps.bindings.output \"r\"}}", A{"admin"}},
	})
}

// A query with named inputs is evaluated with vmcp's function table
// (internal/jmes): contains compares the input's objects by content,
// where the library's own contains panics on them.
func TestQueryNamedInputsUseVmcpFunctions(t *testing.T) {
	data := map[string]any{"steps": M{
		"roles": M{"output": M{"items": A{M{"name": "admin", "level": int64(3)}}}},
		"want":  M{"output": M{"name": "admin", "level": int64(3)}},
	}}
	checkValues(t, data, []valueCase{
		{"{{query \"contains($roles, @)\" .steps.want.output \"roles\" .steps.roles.output.items}}", true},
		{"{{query \"contains($roles, {name: 'admin'})\" 0 \"roles\" .steps.roles.output.items}}", false},
	})
}

// A computed call that names its inputs wrongly fails with an error that
// says what to write and shows no value.
func TestQueryNamedInputErrors(t *testing.T) {
	data := map[string]any{"params": M{"secret": "s3cr3t", "name": "$x"}}
	for _, c := range []struct{ src, want string }{
		{"{{query \"$x\" 0 .params.name .params.secret}}", `argument 3 of query must name a JMESPath variable`},
		{"{{query \"$x\" 0 1 .params.secret}}", `argument 3 of query must name a JMESPath variable`},
		{"{{query \"$x\" 0 \"x\" .params.secret \"x\" 2}}", `query input "x" is given twice`},
		{"{{query \"$x\" 0 \"x\" .params.secret \"y\"}}", `the last name (argument 5) has no value`},
		{"{{query \"$y\" 0 \"x\" .params.secret}}", `reads a variable it does not define (at column 1 of the expression): variable $y is not defined here`},
	} {
		tp, err := parseTemplate(tpl(c.src), templateFuncs())
		if err != nil {
			t.Fatalf("parseTemplate(%q) = %v", c.src, err)
		}
		_, err = tp.value(data)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("value(%q) error = %v; want one saying %q without the value", c.src, err, c.want)
		}
	}
}

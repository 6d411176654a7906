package catalog

// Resolution of tool references that are not of the form backend.tool, as
// ToolHive resolves a composite step's tool against its aggregated tool
// list. A reference matches a backend tool when it is
//
//   - the tool's bare name ("echo"), or
//   - its aggregated name, the backend's name, '_' and the tool's name
//     ("everything_echo"), the name under which vmcp (exposeBackendTools)
//     and ToolHive's prefix strategy re-export a backend tool.
//
// Both forms are tried on every backend. Names may themselves contain '_'
// ("a_b_c" could be backend a's tool b_c or backend a_b's tool c), so the
// caller gets every match and decides: exactly one resolves the reference,
// several are an ambiguity to report with the candidates listed.

import "strings"

// Match is one backend tool that a reference may mean.
type Match struct {
	Backend string
	Tool    string
}

func (m Match) String() string { return m.Backend + "." + m.Tool }

// Resolve returns every backend tool that ref names by its bare or its
// aggregated name, sorted by backend, then tool, without duplicates.
func (c *Catalog) Resolve(ref string) []Match {
	if c == nil || ref == "" {
		return nil
	}
	var out []Match
	for _, b := range c.BackendNames() {
		for _, t := range c.ToolNames(b) {
			if t == ref || (strings.HasPrefix(ref, b+"_") && ref[len(b)+1:] == t) {
				out = append(out, Match{Backend: b, Tool: t})
			}
		}
	}
	return out
}

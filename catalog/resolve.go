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

import (
	"sort"
	"strings"
)

// Match is one backend tool that a reference may mean.
type Match struct {
	Backend string
	Tool    string
}

func (m Match) String() string { return m.Backend + "." + m.Tool }

// Resolve returns every backend tool that ref names by its bare or its
// aggregated name, sorted by backend, then tool. It scans every tool once
// and sorts only the matches (rarely more than one).
func (c *Catalog) Resolve(ref string) []Match {
	if c == nil || ref == "" {
		return nil
	}
	var out []Match
	for name, b := range c.Backends {
		rest, prefixed := strings.CutPrefix(ref, name+"_")
		for _, t := range b.Tools {
			if t.Name == ref || (prefixed && t.Name == rest) {
				out = append(out, Match{Backend: name, Tool: t.Name})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Backend != out[j].Backend {
			return out[i].Backend < out[j].Backend
		}
		return out[i].Tool < out[j].Tool
	})
	return out
}

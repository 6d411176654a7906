package config

// The authoring: section: whether the vmcp_* authoring tools are served,
// where authored workflows are kept (authoring.dir), and which backends
// authored workflows may call (authoring.backends, each of which must be
// a configured backend), and what they may take of the store
// (authoring.limits).

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"

	"github.com/vmcp-dev/vmcp/internal/spell"
)

func (l *loader) authoring(n ast.Node) {
	a := &l.cfg.Authoring
	l.fields(n, "authoring", []string{"enabled", "dir", "backends", "limits"}, func(key string, k, v ast.Node) {
		p := "authoring." + key
		switch key {
		case "enabled":
			a.Enabled = l.boolean(v, p, p)
		case "dir":
			if d, ok := l.str(v, p, p); ok && d != "" {
				a.Dir = l.resolve(d)
			}
		case "backends":
			a.Backends = l.strList(v, p, p)
			l.authoringBackends = v
		case "limits":
			l.authoringLimits(v)
		}
	})
}

// authoringLimits reads authoring.limits: {workflows, versions, bytes}.
func (l *loader) authoringLimits(n ast.Node) {
	a := &l.cfg.Authoring
	l.fields(n, "authoring.limits", []string{"workflows", "versions", "bytes"}, func(key string, k, v ast.Node) {
		p := "authoring.limits." + key
		switch key {
		case "workflows":
			a.MaxWorkflows = l.integer(v, p, p, 1)
		case "versions":
			a.MaxVersions = l.integer(v, p, p, 1)
		case "bytes":
			a.MaxBytes = int64(l.integer(v, p, p, 1024))
		}
	})
}

// checkAuthoringBackends reports authoring.backends entries that name no
// configured backend, once every backend is known.
func (l *loader) checkAuthoringBackends() {
	seq, ok := unwrap(l.authoringBackends).(*ast.SequenceNode)
	if !ok {
		return
	}
	names := make([]string, 0, len(l.cfg.Backends))
	for name := range l.cfg.Backends {
		names = append(names, name)
	}
	for i, v := range seq.Values {
		name, isStr := scalarString(unwrap(v))
		if !isStr || l.cfg.Backends[name] != nil {
			continue
		}
		p := fmt.Sprintf("authoring.backends[%d]", i)
		msg := fmt.Sprintf("%s: no backend is named %q", p, name)
		if hint := spell.DidYouMean(name, names); hint != "" {
			msg += hint
		} else {
			msg += "; list names from backends:"
		}
		l.errorf(v, p, CodeUnknownBackend, "%s", msg)
	}
}

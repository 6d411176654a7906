package config

// Resolving `workflows:` entries. Each entry is a file, a directory or a
// glob (path.Match syntax, no "**"), relative to the config file's
// directory. A directory contributes the .yaml, .yml and .json files directly
// inside it. An entry that names nothing is an error: a typo in a path
// would otherwise serve fewer tools without a word. The result is sorted
// and deduplicated, and never includes the config file itself (Sources adds
// it when it holds compositeTools).

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

func (l *loader) workflows(n ast.Node) {
	n = unwrap(n)
	var entries []ast.Node
	switch t := n.(type) {
	case *ast.NullNode:
		return
	case *ast.SequenceNode:
		entries = t.Values
	default:
		entries = []ast.Node{n}
	}
	self, _ := filepath.Abs(l.cfg.Path)
	seen := map[string]bool{}
	for i, e := range entries {
		path := fmt.Sprintf("workflows[%d]", i)
		pattern, ok := l.str(e, path, path)
		if !ok {
			continue
		}
		if pattern == "" {
			l.errorf(e, path, CodeBadValue, "%s is empty", path)
			continue
		}
		files, err := l.expandWorkflowEntry(pattern)
		if err != "" {
			l.errorf(e, path, CodeWorkflowNotFound, "%s: %s", path, err)
			continue
		}
		for _, f := range files {
			if abs, _ := filepath.Abs(f); abs == self || seen[f] {
				continue
			}
			seen[f] = true
			l.cfg.Workflows = append(l.cfg.Workflows, f)
		}
	}
	sort.Strings(l.cfg.Workflows)
}

// expandWorkflowEntry returns the files one entry names, or a reason why it
// names none.
func (l *loader) expandWorkflowEntry(pattern string) ([]string, string) {
	full := l.resolve(pattern)
	if strings.ContainsAny(pattern, "*?[") {
		matches, err := filepath.Glob(full)
		if err != nil {
			return nil, fmt.Sprintf("bad glob %q: %v", pattern, err)
		}
		var files []string
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() {
				files = append(files, m)
			}
		}
		if len(files) == 0 {
			return nil, fmt.Sprintf("%q matches no files (relative to %s)", pattern, l.dirName())
		}
		return files, ""
	}
	st, err := os.Stat(full)
	if err != nil {
		return nil, fmt.Sprintf("%q does not exist (relative to %s)", pattern, l.dirName())
	}
	if !st.IsDir() {
		return []string{full}, ""
	}
	ents, err := os.ReadDir(full)
	if err != nil {
		return nil, fmt.Sprintf("reading directory %q: %v", pattern, err)
	}
	var files []string
	for _, e := range ents {
		if e.Type().IsRegular() && isWorkflowExt(e.Name()) {
			files = append(files, filepath.Join(full, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Sprintf("directory %q has no .yaml, .yml or .json files", pattern)
	}
	return files, ""
}

func (l *loader) dirName() string {
	if l.cfg.Dir == "." || l.cfg.Dir == "" {
		return "the current directory"
	}
	return filepath.ToSlash(l.cfg.Dir)
}

func isWorkflowExt(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

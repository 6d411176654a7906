package compiler

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Load reads the files that paths name, in order, without duplicates:
//   - a file is read whatever its extension;
//   - a directory is searched recursively for *.yaml, *.yml and *.json
//     files, in sorted order, skipping directories whose names start with
//     a dot (.git, .cache) and node_modules;
//   - a pattern with *, ? or [ is expanded with filepath.Glob (sorted); a
//     pattern that matches nothing is an error, as is a missing path.
//
// Source names are forward-slash paths relative to the working directory
// (or absolute when the file lies outside it and was named absolutely).
func Load(paths []string) ([]Source, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	var files []string
	for _, p := range paths {
		found, err := expand(p)
		if err != nil {
			return nil, err
		}
		files = append(files, found...)
	}
	seen := map[string]bool{}
	var out []Source
	for _, f := range files {
		name := displayName(cwd, f)
		if seen[name] {
			continue
		}
		seen[name] = true
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", name, unwrapPathError(err))
		}
		out = append(out, Source{Name: name, Src: src})
	}
	return out, nil
}

// expand turns one argument into file paths.
func expand(p string) ([]string, error) {
	if strings.ContainsAny(p, "*?[") {
		matches, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("bad pattern %q: %w", p, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("%s: no files match", p)
		}
		sort.Strings(matches)
		var out []string
		for _, m := range matches {
			found, err := expand(m)
			if err != nil {
				return nil, err
			}
			out = append(out, found...)
		}
		return out, nil
	}
	info, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file or directory", filepath.ToSlash(p))
		}
		return nil, fmt.Errorf("%s: %w", filepath.ToSlash(p), unwrapPathError(err))
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var out []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != p && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if isSourceFile(d.Name()) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules"
}

func isSourceFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// displayName makes a path relative to cwd when it lies inside it.
func displayName(cwd, p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	rel, err := filepath.Rel(cwd, abs)
	if err != nil || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || rel == ".." {
		if filepath.IsAbs(p) {
			return filepath.ToSlash(abs)
		}
		return filepath.ToSlash(filepath.Clean(p))
	}
	return filepath.ToSlash(rel)
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

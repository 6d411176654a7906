package fuzzkit

// Seeds from workflow files.
//
// Why small: when the fuzzer finds an input that reaches new code, it
// minimizes that input before fuzzing on, and Go's minimizer tries
// removing every subset of bytes, which costs a number of calls
// quadratic in the input's length (for a 10 KB input, more than the 60
// seconds -fuzzminimizetime allows by default). Mutations of a large seed
// are large, so with the example files as seeds a fuzz worker spent
// nearly all its time minimizing and the fuzzer reported 0 executions a
// second. Each call on a large input is slower too.
//
// How: Split cuts a file into one seed per workflow. The workflows of a
// file are the items of its first list whose first item starts with
// "- name:" (compositeTools: or a resource's spec.compositeTools:); each
// seed is the file's text before that list's first item (the keys that
// lead to the list, such as apiVersion, kind and spec:) followed by one
// item. A file without such a list is one seed. Lines that hold only a
// comment are left out (the example files open with long ones), and every
// seed is then cut at a line boundary to at most MaxSize bytes.

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// MaxSize is the largest seed Split returns, in bytes.
const MaxSize = 2048

// MaxInput is the longest input the fuzz targets run; they return at once
// on a longer one, so the mutator's growing inputs neither slow every call
// nor make minimizing hopeless. Large documents have tests of their own
// (the parser's node and depth limits).
const MaxInput = 4 * MaxSize

// Split cuts src into seeds (see the package comment).
func Split(src []byte) [][]byte {
	lines := withoutComments(bytes.SplitAfter(src, []byte("\n")))
	first, indent := firstItem(lines)
	if first < 0 {
		return [][]byte{cut(src)}
	}
	header := bytes.Join(lines[:first], nil)
	var seeds [][]byte
	start := first
	for i := first + 1; i <= len(lines); i++ {
		if i < len(lines) && !isItem(lines[i], indent) {
			continue
		}
		item := bytes.Join(lines[start:i], nil)
		seeds = append(seeds, cut(append(append([]byte(nil), header...), item...)))
		start = i
	}
	return seeds
}

// withoutComments drops the lines that hold only a comment.
func withoutComments(lines [][]byte) [][]byte {
	out := lines[:0:0]
	for _, l := range lines {
		if !bytes.HasPrefix(bytes.TrimLeft(l, " \t"), []byte("#")) {
			out = append(out, l)
		}
	}
	return out
}

// firstItem finds the first line that starts a list item with "- name:"
// and returns its index and indentation, or -1.
func firstItem(lines [][]byte) (int, int) {
	for i, l := range lines {
		trimmed := bytes.TrimLeft(l, " ")
		if bytes.HasPrefix(trimmed, []byte("- name:")) {
			return i, len(l) - len(trimmed)
		}
	}
	return -1, 0
}

// isItem reports whether line starts an item of the list at indent.
func isItem(line []byte, indent int) bool {
	trimmed := bytes.TrimLeft(line, " ")
	return len(line)-len(trimmed) == indent && bytes.HasPrefix(trimmed, []byte("- "))
}

// cut shortens src to at most MaxSize bytes, at the end of a line when it
// has one in that span.
func cut(src []byte) []byte {
	if len(src) <= MaxSize {
		return src
	}
	head := src[:MaxSize]
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		return head[:i+1]
	}
	return head
}

// Files reads the files that match patterns (filepath.Glob, in order) and
// returns their seeds, skipping files whose names contain one of skip.
func Files(tb testing.TB, patterns []string, skip ...string) [][]byte {
	tb.Helper()
	var seeds [][]byte
	for _, pattern := range patterns {
		files, err := filepath.Glob(pattern)
		if err != nil {
			tb.Fatal(err)
		}
	files:
		for _, file := range files {
			for _, s := range skip {
				if bytes.Contains([]byte(file), []byte(s)) {
					continue files
				}
			}
			src, err := os.ReadFile(file)
			if err != nil {
				tb.Fatal(err)
			}
			seeds = append(seeds, Split(src)...)
		}
	}
	return seeds
}

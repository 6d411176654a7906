package demo

// The README's five-minute tour, run from the README's own text.
//
// readTour cuts the section "## A five-minute tour" out of README.md and
// turns each fenced block into steps, in order:
//
//   - a yaml block whose first line is "# PATH" is a file to save at PATH;
//   - a json block must be valid JSON (it is a settings file to paste);
//   - an sh block is shell commands, one a line. When a line starts with
//     "$ ", the block is a transcript: the lines after it, up to the next
//     "$ " line, are what the command prints (stdout and stderr together),
//     where a line "..." stands for any number of lines. A command without
//     output lines only has to succeed.
//
// Any other block is an error: every block of the tour must be one the
// test can run. The test then copies the repository's files (what a fresh
// clone holds) into a temporary directory, links node_modules to the
// shared npm install (standing in for `npm install`, which the tour names
// but does not run), and runs every step there with bash, in order,
// failing at the first command that exits non-zero or prints something
// other than the README shows.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const tourHeading = "## A five-minute tour"

// tourStep is one thing the tour does. Exactly one of file, json and
// command is set.
type tourStep struct {
	line    int    // README line of the block or the command
	file    string // save body here
	json    bool   // body must be valid JSON
	command string
	body    string
	want    []string // the command's output; nil when the README shows none
}

// readTour parses the tour section of a README.
func readTour(readme string) ([]tourStep, error) {
	return readSection("README.md", readme, tourHeading)
}

// readSection parses the section of the markdown page file (named in
// errors) under heading (a whole heading line, such as "## A five-minute
// tour"), up to the next heading of the same level or above, as the tour
// is parsed.
func readSection(file, text, heading string) ([]tourStep, error) {
	lines := strings.Split(text, "\n")
	level := headingLevel(heading)
	start := -1
	for i, l := range lines {
		if l == heading {
			start = i
			break
		}
	}
	if level == 0 || start < 0 {
		return nil, fmt.Errorf("%s has no %q section", file, heading)
	}
	var steps []tourStep
	for i := start + 1; i < len(lines); i++ {
		l := lines[i]
		if n := headingLevel(l); n > 0 && n <= level {
			break
		}
		if !strings.HasPrefix(l, "```") {
			continue
		}
		lang, open := strings.TrimPrefix(l, "```"), i+1
		end := open
		for end < len(lines) && lines[end] != "```" {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s:%d: the block is never closed", file, i+1)
		}
		block := lines[open:end]
		i = end
		switch lang {
		case "yaml":
			path, ok := strings.CutPrefix(block[0], "# ")
			if !ok || strings.ContainsAny(path, " \t") {
				return nil, fmt.Errorf("%s:%d: a yaml block of the tour starts with \"# PATH\", the file to save it as", file, open)
			}
			steps = append(steps, tourStep{line: open + 1, file: path, body: strings.Join(block, "\n") + "\n"})
		case "json":
			steps = append(steps, tourStep{line: open + 1, json: true, body: strings.Join(block, "\n")})
		case "sh":
			steps = append(steps, shellSteps(block, open+1)...)
		default:
			return nil, fmt.Errorf("%s:%d: a %q block that the tour test cannot run; use sh (commands, or a $ transcript), yaml (a file) or json", file, i+1, lang)
		}
	}
	return steps, nil
}

// headingLevel is the level of a markdown ATX heading line ("## x" is 2),
// or 0 when l is not a heading.
func headingLevel(l string) int {
	n := len(l) - len(strings.TrimLeft(l, "#"))
	if n == 0 || n > 6 || !strings.HasPrefix(l[n:], " ") {
		return 0
	}
	return n
}

// shellSteps reads an sh block whose first line is line first of its page.
func shellSteps(block []string, first int) []tourStep {
	transcript := false
	for _, l := range block {
		if strings.HasPrefix(l, "$ ") {
			transcript = true
		}
	}
	var steps []tourStep
	for j, l := range block {
		switch {
		case !transcript:
			if strings.TrimSpace(l) != "" {
				steps = append(steps, tourStep{line: first + j, command: l})
			}
		case strings.HasPrefix(l, "$ "):
			steps = append(steps, tourStep{line: first + j, command: strings.TrimPrefix(l, "$ "), want: []string{}})
		case len(steps) > 0:
			s := &steps[len(steps)-1]
			s.want = append(s.want, l)
		}
	}
	return steps
}

// matchOutput reports whether got's lines are want's, where a want line
// "..." matches any number of lines.
func matchOutput(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for k := 0; k <= len(got); k++ {
			if matchOutput(want[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && got[0] == want[0] && matchOutput(want[1:], got[1:])
}

func outputLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return []string{}
	}
	return strings.Split(s, "\n")
}

func TestReadTour(t *testing.T) {
	readme := "# x\n\n" + tourHeading + "\n\ntext\n\n```sh\nmake build   # comment\n\necho hi\n```\n\n" +
		"```yaml\n# dir/f.yaml\na: 1\n```\n\n### A subsection\n\n```sh\n$ echo a\na\n$ true\n```\n\n```json\n{}\n```\n\n## Next\n\n```text\nnot the tour\n```\n"
	got, err := readTour(readme)
	if err != nil {
		t.Fatal(err)
	}
	want := []tourStep{
		{line: 8, command: "make build   # comment"},
		{line: 10, command: "echo hi"},
		{line: 14, file: "dir/f.yaml", body: "# dir/f.yaml\na: 1\n"},
		{line: 21, command: "echo a", want: []string{"a"}},
		{line: 23, command: "true", want: []string{}},
		{line: 27, json: true, body: "{}"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(tourStep{})); diff != "" {
		t.Errorf("readTour mismatch (-want +got):\n%s", diff)
	}
	// A page's title section runs to the end of the page, over its subsections.
	page := "# Page\n\n```sh\necho one\n```\n\n## Part\n\n```sh\necho two\n```\n"
	if got, err := readSection("page.md", page, "# Page"); err != nil || len(got) != 2 {
		t.Errorf("readSection(# Page) = %d steps, %v; want both blocks", len(got), err)
	}
	if got, err := readSection("page.md", page, "## Part"); err != nil || len(got) != 1 || got[0].command != "echo two" {
		t.Errorf("readSection(## Part) = %+v, %v; want the second block", got, err)
	}
	for _, bad := range []string{
		tourHeading + "\n```\nuntagged\n```\n",
		tourHeading + "\n```yaml\na: 1\n```\n",
		tourHeading + "\n```sh\nopen\n",
		"no tour here\n",
	} {
		if _, err := readTour(bad); err == nil {
			t.Errorf("readTour(%q) = nil error; want one", bad)
		}
	}
	for _, tc := range []struct {
		want, got string
		ok        bool
	}{
		{"a\nb", "a\nb", true},
		{"a\n...\nd", "a\nb\nc\nd", true},
		{"...\nd", "d", true},
		{"a\n...", "a", true},
		{"a\nb", "a\nc", false},
		{"a\n...\nd", "a\nb", false},
	} {
		if got := matchOutput(outputLines(tc.want), outputLines(tc.got)); got != tc.ok {
			t.Errorf("matchOutput(%q, %q) = %v; want %v", tc.want, tc.got, got, tc.ok)
		}
	}
}

// TestTour runs the README's tour in a copy of the repository.
func TestTour(t *testing.T) {
	root := testenv.RepoRoot()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := readTour(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	clone := freshClone(t, root)
	for _, s := range steps {
		switch {
		case s.file != "":
			path := filepath.Join(clone, filepath.FromSlash(s.file))
			if _, err := os.Stat(path); err == nil {
				t.Fatalf("README.md:%d: the tour saves %s, but a fresh clone already has that file", s.line, s.file)
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(s.body), 0o644); err != nil {
				t.Fatal(err)
			}
		case s.json:
			if !json.Valid([]byte(s.body)) {
				t.Errorf("README.md:%d: the json block is not valid JSON:\n%s", s.line, s.body)
			}
		default:
			out, err := runTourCommand(clone, s.command)
			if err != nil {
				t.Fatalf("README.md:%d: %s: %v\n%s", s.line, s.command, err, out)
			}
			if s.want != nil && !matchOutput(s.want, outputLines(out)) {
				t.Errorf("README.md:%d: %s printed what the README does not show (-README +printed):\n%s",
					s.line, s.command, cmp.Diff(s.want, outputLines(out)))
			}
		}
	}
}

// runTourCommand runs one line of the tour with bash in dir, stdin empty,
// and returns what it printed on stdout and stderr together.
func runTourCommand(dir, line string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after 5 minutes: %w", err)
	}
	return out.String(), err
}

// freshClone copies what a clone of the repository holds (the files git
// tracks, and new ones it would add) into a temporary directory, and links
// node_modules to the repository's npm install.
func freshClone(t *testing.T, root string) string {
	t.Helper()
	ls := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Dir = root
	list, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	clone := t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		if err := copyFile(filepath.Join(root, name), filepath.Join(clone, name)); err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet in the index
			}
			t.Fatal(err)
		}
	}
	modules, err := filepath.EvalSymlinks(filepath.Join(root, "node_modules"))
	if err != nil {
		t.Fatalf("node_modules: %v (run npm install)", err)
	}
	if err := os.Symlink(modules, filepath.Join(clone, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return clone
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	if info.IsDir() {
		return nil // a submodule or a nested repository
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

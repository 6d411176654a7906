package demo

// The documentation's relative links, checked: every link and image in
// README.md and docs/*.md that is not a URL must name a file or directory
// that a clone holds (git ls-files, as freshClone copies), and its
// #fragment a heading of the markdown file it names, spelt as GitHub makes
// anchors of headings (githubAnchors). Links are read as GitHub reads
// them: not inside fenced blocks or code spans, and the text of a link may
// run over a line break.

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// docLink is one link of a page: its target as written and its line.
type docLink struct {
	line   int
	target string
}

// linkPattern matches an inline link or image, [text](target) or
// [text](target "title"), once code is blanked out.
var linkPattern = regexp.MustCompile(`\[[^\]]*\]\(([^()\s]*)(?:\s+"[^"]*")?\)`)

// blankCode replaces fenced blocks and code spans with spaces, keeping
// newlines, so that what they hold is neither a link nor a heading and
// offsets keep their line numbers.
func blankCode(text string) string {
	b := []byte(text)
	blank := func(from, to int) {
		for k := from; k < to; k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
	}
	// Fenced blocks: from a line whose text starts with ``` to the next one.
	off, fence := 0, -1
	for _, l := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "```") {
			if fence < 0 {
				fence = off
			} else {
				blank(fence, off+len(l))
				fence = -1
			}
		}
		off += len(l)
	}
	if fence >= 0 {
		blank(fence, len(b))
	}
	// Code spans: a run of n backticks up to the next run of exactly n.
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		closed := -1
		for j := i + n; j < len(b); {
			if b[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(b) && b[j+m] == '`' {
				m++
			}
			if m == n {
				closed = j + m
				break
			}
			j += m
		}
		if closed < 0 {
			i += n
			continue
		}
		blank(i, closed)
		i = closed
	}
	return string(b)
}

// pageLinks lists the links of a markdown page, in order.
func pageLinks(text string) []docLink {
	code := blankCode(text)
	var links []docLink
	for _, m := range linkPattern.FindAllStringSubmatchIndex(code, -1) {
		links = append(links, docLink{
			line:   strings.Count(code[:m[0]], "\n") + 1,
			target: code[m[2]:m[3]],
		})
	}
	return links
}

// githubAnchors lists the anchors GitHub gives the headings of a markdown
// page, in order: the heading's text as rendered (code spans keep their
// text, links their text), lower-cased, without what is not a letter, a
// digit, a mark, "_", "-" or a space, each space a "-"; a second heading
// with the same anchor gets "-1", a third "-2", and so on.
func githubAnchors(text string) []string {
	code := blankCode(text)
	raw := strings.Split(text, "\n")
	seen := map[string]int{}
	var anchors []string
	for i, l := range strings.Split(code, "\n") {
		n := headingLevel(l)
		if n == 0 {
			continue
		}
		title := strings.TrimSpace(raw[i][n:])
		title = strings.TrimSpace(strings.TrimRight(title, "#")) // a closing run of #
		title = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(title, "$1")
		var slug strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				slug.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
				slug.WriteRune(r)
			}
		}
		a := slug.String()
		if k := seen[a]; k > 0 {
			seen[a] = k + 1
			a = fmt.Sprintf("%s-%d", a, k)
		} else {
			seen[a] = 1
		}
		anchors = append(anchors, a)
	}
	return anchors
}

func TestLinkParsing(t *testing.T) {
	page := "# Title\n\nSee [the `x`\nsection](other.md#part) and ![a picture](img/a.png \"A\").\n" +
		"Not links: `[a](b.md)`, `` `[c](d.md)` ``.\n\n```md\n[e](f.md)\n## Not a heading\n```\n\n" +
		"## Config (vmcp.yaml)\n## The plan as a picture: `--format svg`\n## Temporal's cost\n" +
		"## 0. Build\n## Scopes, and `vmcp workflows` for people\n## Config (vmcp.yaml)\n" +
		"### A [linked](x.md) heading ##\n#no-heading\n"
	wantLinks := []docLink{{3, "other.md#part"}, {4, "img/a.png"}, {18, "x.md"}}
	if diff := cmp.Diff(wantLinks, pageLinks(page), cmp.AllowUnexported(docLink{})); diff != "" {
		t.Errorf("pageLinks (-want +got):\n%s", diff)
	}
	wantAnchors := []string{
		"title", "config-vmcpyaml", "the-plan-as-a-picture---format-svg", "temporals-cost",
		"0-build", "scopes-and-vmcp-workflows-for-people", "config-vmcpyaml-1", "a-linked-heading",
	}
	if diff := cmp.Diff(wantAnchors, githubAnchors(page)); diff != "" {
		t.Errorf("githubAnchors (-want +got):\n%s", diff)
	}
}

// TestDocLinks checks every relative link of README.md and docs/*.md.
func TestDocLinks(t *testing.T) {
	root := testenv.RepoRoot()
	ls := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard")
	ls.Dir = root
	list, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files, dirs := map[string]bool{}, map[string]bool{}
	for _, name := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			continue // deleted in the work tree, not yet in the index
		}
		files[name] = true
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	pages := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		pages = append(pages, "docs/"+filepath.Base(d))
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(name string) (map[string]bool, error) {
		if a, ok := anchors[name]; ok {
			return a, nil
		}
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		a := map[string]bool{}
		for _, s := range githubAnchors(string(text)) {
			a[s] = true
		}
		anchors[name] = a
		return a, nil
	}
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range pageLinks(string(text)) {
			if regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`).MatchString(l.target) {
				continue // a URL: https:, mailto:
			}
			checked++
			target, fragment, _ := strings.Cut(l.target, "#")
			name := page
			if target != "" {
				name = path.Clean(path.Join(path.Dir(page), target))
			}
			switch {
			case strings.HasPrefix(name, "../") || name == ".." || strings.HasPrefix(target, "/"):
				t.Errorf("%s:%d: %s points outside the repository", page, l.line, l.target)
				continue
			case files[name]:
			case dirs[name] && fragment == "":
			default:
				t.Errorf("%s:%d: %s: a clone has no %s", page, l.line, l.target, name)
				continue
			}
			if fragment == "" {
				continue
			}
			if !strings.HasSuffix(name, ".md") {
				t.Errorf("%s:%d: %s: a fragment on a file that is not markdown", page, l.line, l.target)
				continue
			}
			a, err := anchorsOf(name)
			if err != nil {
				t.Fatal(err)
			}
			if !a[fragment] {
				t.Errorf("%s:%d: %s: %s has no heading with the anchor #%s", page, l.line, l.target, name, fragment)
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d relative links in %d pages; the documentation has more", checked, len(pages))
	}
}

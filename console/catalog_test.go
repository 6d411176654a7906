package console

import (
	"context"
	"strings"
	"testing"
	"time"
)

// fakeCatalog says "other" is authored, in two versions.
type fakeCatalog struct{}

var saved = time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC)

func (fakeCatalog) List() []WorkflowInfo {
	return []WorkflowInfo{
		{Name: "other", Version: "2", Origin: OriginAuthored, SavedAt: saved},
		{Name: "quick", Version: "sha256:0123456789abcdef", Origin: OriginFiles},
	}
}

func (fakeCatalog) Versions(_ context.Context, name string) ([]VersionInfo, error) {
	if name != "other" {
		return nil, nil
	}
	return []VersionInfo{
		{Version: 1, SavedAt: saved.Add(-time.Hour), Source: "name: other\n# the first draft\n"},
		{Version: 2, SavedAt: saved, Source: "name: other\n# the second\n"},
	}, nil
}

func TestWorkflowVersionsFromTheCatalog(t *testing.T) {
	f := newFixture(t)
	f.c.opts.Catalog = fakeCatalog{}
	list := body(t, f.get(t, "/ui/workflows"))
	if !strings.Contains(list, `authored, saved <time>2026-11-30 09:15</time></td><td class="mono" data-version="2">v2</td>`) {
		t.Errorf("the list does not show other as authored version 2:\n%s", list)
	}
	if !strings.Contains(list, `data-version="sha256:0123456789abcdef">sha256:0123456789abcdef</td>`) {
		t.Errorf("the list does not show quick's hash version")
	}
	page := body(t, f.get(t, "/ui/workflows/other"))
	for _, want := range []string{`<tr data-version="2"><td><strong>2</strong>`, `<a href="/ui/workflows/other?version=1">1</a>`, "# the second", "version 2, saved 2026-11-30 09:15:00 UTC"} {
		if !strings.Contains(page, want) {
			t.Errorf("the workflow page lacks %q", want)
		}
	}
	if strings.Contains(page, "the first draft") {
		t.Errorf("the page shows an older version's source by default")
	}
	if old := body(t, f.get(t, "/ui/workflows/other?version=1")); !strings.Contains(old, "# the first draft") {
		t.Errorf("?version=1 does not show version 1")
	}
	if bad := body(t, f.get(t, "/ui/workflows/other?version=9")); !strings.Contains(bad, "other has no version 9 (it has 2)") {
		t.Errorf("?version=9 does not say there is no such version")
	}
}

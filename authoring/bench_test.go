package authoring

import (
	"context"
	"testing"
)

// BenchmarkCheck is one vmcp_workflow_check of a small draft: parse,
// check against the catalog, plan.
func BenchmarkCheck(b *testing.B) {
	c := &Compiler{Catalog: testCatalog(), Allowed: []string{"a"}}
	src := draft("w", "a.echo")
	b.ReportAllocs()
	for b.Loop() {
		if ch := c.Check("", src, nil); !ch.OK() {
			b.Fatal(codes(ch))
		}
	}
}

// BenchmarkSave is one vmcp_workflow_save with replace into the memory
// store, serving included (a fake engine and server), with 20 other
// authored workflows served.
func BenchmarkSave(b *testing.B) {
	ctx := context.Background()
	svc := newTestService(NewMemoryStore(), &fakeServing{})
	for i := range 20 {
		if _, _, err := svc.Save(ctx, draft("other"+string(rune('a'+i)), "a.echo"), false); err != nil {
			b.Fatal(err)
		}
	}
	src := draft("w", "a.echo")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := svc.Save(ctx, src, true); err != nil {
			b.Fatal(err)
		}
	}
}

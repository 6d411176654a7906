package toolcall

import (
	"context"
	"testing"
)

func TestProgress(t *testing.T) {
	if fn := ProgressFrom(context.Background()); fn != nil {
		t.Fatalf("ProgressFrom(Background) is set")
	}
	var got []float64
	ctx := WithProgress(context.Background(), func(p, total float64, msg string) { got = append(got, p, total) })
	ProgressFrom(ctx)(1, 4, "a quarter")
	if len(got) != 2 || got[0] != 1 || got[1] != 4 {
		t.Fatalf("the receiver got %v; want [1 4]", got)
	}
}

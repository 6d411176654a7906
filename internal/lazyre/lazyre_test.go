package lazyre

import "testing"

func TestNewCompilesOnceOnFirstUse(t *testing.T) {
	re := New(`^a(b+)$`)
	first := re()
	if m := first.FindStringSubmatch("abb"); len(m) != 2 || m[1] != "bb" {
		t.Fatalf("FindStringSubmatch(abb) = %q, want the group bb", m)
	}
	if re() != first {
		t.Fatal("a second call compiled the expression again")
	}
}

func TestNewPanicsOnABadExpressionAtFirstUse(t *testing.T) {
	re := New(`a(`) // New itself must not compile it
	defer func() {
		if recover() == nil {
			t.Fatal("an invalid expression did not panic at its first use")
		}
	}()
	re()
}

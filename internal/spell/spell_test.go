package spell

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"timeout", "timeout", 0},
		{"timout", "timeout", 1},   // an insertion
		{"timeoutt", "timeout", 1}, // a deletion
		{"tineout", "timeout", 1},  // a substitution
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"maxParalel", "maxParallel", 1},
		{"naïve", "naive", 1}, // runes, not bytes
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d; want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d; want %d (it is symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestSnakeAndCamel(t *testing.T) {
	for _, c := range []struct{ camel, snake string }{
		{"maxRetries", "max_retries"},
		{"dependsOn", "depends_on"},
		{"id", "id"},
		{"onErrorAction", "on_error_action"},
	} {
		if got := Snake(c.camel); got != c.snake {
			t.Errorf("Snake(%q) = %q; want %q", c.camel, got, c.snake)
		}
		if got := Camel(c.snake); got != c.camel {
			t.Errorf("Camel(%q) = %q; want %q", c.snake, got, c.camel)
		}
	}
	// A leading capital takes no underscore; doubled and trailing ones
	// are dropped.
	if got := Snake("MaxRetries"); got != "max_retries" {
		t.Errorf("Snake(MaxRetries) = %q; want max_retries", got)
	}
	if got := Camel("max__retries_"); got != "maxRetries" {
		t.Errorf("Camel(max__retries_) = %q; want maxRetries", got)
	}
}

package main

import (
	"testing"
	"time"
)

func TestFormatElapsedClampsNegative(t *testing.T) {
	cases := map[time.Duration]string{
		-time.Microsecond:       "0.000s",
		-2 * time.Second:        "0.000s",
		0:                       "0.000s",
		1500 * time.Millisecond: "1.500s",
	}
	for d, want := range cases {
		if got := formatElapsed(d); got != want {
			t.Errorf("formatElapsed(%v) = %q, want %q", d, got, want)
		}
	}
}

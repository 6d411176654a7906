package main

import (
	"maps"
	"slices"
)

// sortedKeys are m's keys in order (a reproducible layer).
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

package spell

// Distance is the Levenshtein edit distance between a and b, counted in
// runes: the number of single-rune insertions, deletions and
// substitutions that turn one into the other. It is the classic dynamic
// programme kept to two rolling rows: row i holds the distances between
// the first i runes of a and every prefix of b, and each cell is the
// cheapest of deleting a rune (the cell above), inserting one (the cell
// to the left) or substituting (the diagonal, free when the runes are
// equal). It costs O(len(a)*len(b)) time and O(len(b)) memory.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) == 0 {
		return len(rb)
	}
	if len(rb) == 0 {
		return len(ra)
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

package tomlstrict

// Suggestions: the known key a likely typo meant, so "sise" gets
// 'did you mean "size"?' instead of a bare "unknown key".

import (
	"fmt"
	"strings"
)

// Suggest returns the known word closest to a likely typo, or "".
func Suggest(name string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if dist := editDistance(strings.ToLower(name), k); dist < bestDist && dist*2 <= len(name) {
			best, bestDist = k, dist
		}
	}
	return best
}

// DidYouMean is the suggestion a message ends with, if name is a likely
// typo of a known word: `; did you mean "size"?`; otherwise "".
func DidYouMean(name string, known []string) string {
	if s := Suggest(name, known); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return len(a) + len(b) // not a typo of a short key; avoid the cost
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

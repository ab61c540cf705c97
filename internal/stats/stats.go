// Package stats summarises timings for jail's measuring tools (bench,
// soak): median, nearest-rank percentiles, mean, ratios.
package stats

import (
	"math"
	"slices"
	"time"
)

// Stats summarises one launcher's per-call wall times, in milliseconds.
type Stats struct {
	Runs   int     `json:"runs"`
	Median float64 `json:"median_ms"`
	P95    float64 `json:"p95_ms"`
	Mean   float64 `json:"mean_ms"`
	Min    float64 `json:"min_ms"`
	Max    float64 `json:"max_ms"`
}

// Summarize computes the Stats of ds; ds is not modified.
func Summarize(ds []time.Duration) Stats {
	ms := Millis(ds)
	slices.Sort(ms)
	if len(ms) == 0 {
		return Stats{}
	}
	return Stats{
		Runs:   len(ms),
		Median: Median(ms),
		P95:    Percentile(ms, 95),
		Mean:   Mean(ms),
		Min:    ms[0],
		Max:    ms[len(ms)-1],
	}
}

// Millis converts durations to float milliseconds, in the same order.
func Millis(ds []time.Duration) []float64 {
	ms := make([]float64, len(ds))
	for i, d := range ds {
		ms[i] = float64(d) / float64(time.Millisecond)
	}
	return ms
}

// Median returns the middle of sorted (the mean of the two middle values
// when the length is even), or 0 when sorted is empty.
func Median(sorted []float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return sorted[n/2]
	default:
		return (sorted[n/2-1] + sorted[n/2]) / 2
	}
}

// Percentile returns the nearest-rank p-th percentile of sorted (the
// smallest value with at least p% of the values at or below it), or 0 when
// sorted is empty. p is in (0, 100].
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p * float64(n) / 100)) // p*n first: exact for integers
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// Mean returns the arithmetic mean of xs, or 0 when xs is empty.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// Ratio returns a/b, or 0 when b is 0 (no figure rather than +Inf, which
// JSON cannot hold).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

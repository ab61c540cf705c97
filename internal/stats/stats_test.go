package stats

import (
	"slices"
	"testing"
	"time"
)

func seq(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	return xs
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{7}, 7},
		{[]float64{1, 2, 3}, 2},
		{[]float64{1, 2, 3, 10}, 2.5},
		{seq(50), 25.5},
		{seq(51), 26},
	} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		p    float64
		want float64
	}{
		{nil, 95, 0},
		{[]float64{4}, 95, 4},
		{seq(100), 95, 95},
		{seq(20), 95, 19}, // exactly 95% at or below 19: not rounded up to 20
		{seq(50), 95, 48}, // ceil(47.5)
		{seq(30), 95, 29}, // ceil(28.5)
		{seq(10), 95, 10},
		{seq(10), 50, 5},
		{seq(10), 100, 10},
		{seq(10), 1, 1},
	} {
		if got := Percentile(tc.in, tc.p); got != tc.want {
			t.Errorf("Percentile(1..%d, %v) = %v, want %v", len(tc.in), tc.p, got, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	in := []time.Duration{
		5 * time.Millisecond, 1 * time.Millisecond, 3 * time.Millisecond,
		2 * time.Millisecond, 4 * time.Millisecond, 1500 * time.Microsecond,
	}
	orig := slices.Clone(in)
	got := Summarize(in)
	want := Stats{Runs: 6, Median: 2.5, P95: 5, Mean: 16.5 / 6, Min: 1, Max: 5}
	if got != want {
		t.Errorf("summarize = %+v, want %+v", got, want)
	}
	if !slices.Equal(in, orig) {
		t.Errorf("summarize reordered its input: %v", in)
	}
	if (Summarize(nil) != Stats{}) {
		t.Errorf("Summarize(nil) = %+v, want zero", Summarize(nil))
	}
}

func TestRatio(t *testing.T) {
	if got := Ratio(3, 2); got != 1.5 {
		t.Errorf("Ratio(3, 2) = %v", got)
	}
	if got := Ratio(3, 0); got != 0 {
		t.Errorf("Ratio(3, 0) = %v, want 0", got)
	}
}

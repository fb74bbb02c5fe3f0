package main

import (
	"math"
	"testing"
)

// The game's cost per bet is read in the betting windows alone: a long
// flight or a pause between them adds no CPU to a bet.
func TestWindowCost(t *testing.T) {
	t.Parallel()
	samples := []procSample{
		{At: 0, CPUSeconds: 0},
		{At: 10, CPUSeconds: 1},   // set-up
		{At: 14, CPUSeconds: 4.2}, // betting: 0.8 cores
		{At: 60, CPUSeconds: 9.0}, // flight and pause
		{At: 64, CPUSeconds: 12.2},
	}
	tests := []struct {
		name          string
		rounds        []roundStat
		wantUS, cores float64
	}{
		{"two windows", []roundStat{
			{FirstBetAt: 10, LastBetAt: 14, Accepted: 1600},
			{FirstBetAt: 61, LastBetAt: 63, Accepted: 800}, // 1.6 s of CPU, read between samples
		}, (3.2 + 1.6) * 1e6 / 2400, 0.8},
		{"a round with no bet accepted counts nothing", []roundStat{
			{FirstBetAt: 10, LastBetAt: 14, Accepted: 1600},
			{FirstBetAt: -1, Accepted: 0},
		}, 2000, 0.8},
		{"a window outside the samples counts nothing", []roundStat{{FirstBetAt: 70, LastBetAt: 72, Accepted: 10}}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			us, cores := windowCost(tc.rounds, samples)
			if math.Abs(us-tc.wantUS) > 1e-6 || math.Abs(cores-tc.cores) > 1e-9 {
				t.Fatalf("windowCost = %v µs, %v cores; want %v, %v", us, cores, tc.wantUS, tc.cores)
			}
		})
	}
}

package main

import (
	"strings"
	"testing"
	"time"
)

// A rolling deploy's marks split the run: what the players met is counted
// in the phase it happened in (answers, refusals, reconnections, void
// rounds), and every call in exactly one phase.
func TestPhasesSplitTheRunAtTheMarks(t *testing.T) {
	t.Parallel()
	start := time.UnixMilli(1_800_000_000_000)
	file := "\n1800000010000 cluster: recreating game1\n1800000020000 cluster: game1 is ready and back in rotation\n"
	marks, err := readMarks(strings.NewReader(file))
	if err != nil || len(marks) != 2 {
		t.Fatalf("marks %+v, %v", marks, err)
	}
	phases := phasesOf(start, marks, 30)
	want := []struct {
		label    string
		from, to float64
	}{
		{"before: cluster: recreating game1", 0, 10},
		{"cluster: recreating game1", 10, 20},
		{"cluster: game1 is ready and back in rotation", 20, 30},
	}
	if len(phases) != len(want) {
		t.Fatalf("phases %+v", phases)
	}
	for i, w := range want {
		if p := phases[i]; p.Label != w.label || p.From != w.from || p.To != w.to {
			t.Fatalf("phase %d = %+v, want %+v", i, p, w)
		}
	}
	bets := []sample{{at: 1, ms: 10, outcome: "201"}, {at: 12, ms: 900, outcome: "503 TABLE_UNAVAILABLE"}, {at: 12.5, ms: 20, outcome: "201"}, {at: 25, ms: 15, outcome: "201"}}
	cashouts := []sample{{at: 11, ms: 5, outcome: "200"}, {at: 19.9, ms: 4000, outcome: "error"}}
	reconnects := []sample{{at: 13, ms: 350, outcome: "ok"}}
	fillPhases(phases, bets, cashouts, reconnects, map[string]float64{"crash-7": 14})
	during := phases[1]
	if during.Bets.N != 2 || during.BetsRefused["503 TABLE_UNAVAILABLE"] != 1 || during.Cashouts.N != 2 ||
		during.CashoutsRefused["error"] != 1 || during.Reconnects.N != 1 || len(during.VoidRounds) != 1 {
		t.Fatalf("the roll's phase = %+v", during)
	}
	if phases[0].Bets.N != 1 || len(phases[0].BetsRefused) != 0 || phases[2].Bets.N != 1 || len(phases[2].VoidRounds) != 0 {
		t.Fatalf("the other phases = %+v, %+v", phases[0], phases[2])
	}
	for _, bad := range []string{"soon recreating game1\n", "-5 x\n"} {
		if _, err := readMarks(strings.NewReader(bad)); err == nil {
			t.Fatalf("marks %q were read", bad)
		}
	}
	var out strings.Builder
	printPhases(&out, phases)
	if !strings.Contains(out.String(), "503 TABLE_UNAVAILABLE:1") || strings.Count(out.String(), "\n") != 5 {
		t.Fatalf("the table:\n%s", out.String())
	}
}

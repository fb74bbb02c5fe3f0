package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// phaseStat is what the players met during one phase of something done to
// the game while they played (a rolling deploy: each replica recreated, then
// back in rotation), from a mark to the next.
type phaseStat struct {
	Label string  `json:"label"`
	From  float64 `json:"from_s"`
	To    float64 `json:"to_s"`
	// Bets and Cashouts are the calls answered in the phase; Refused are
	// their answers other than success, by status and code ("error": none).
	Bets            calls          `json:"bets"`
	BetsRefused     map[string]int `json:"bets_refused"`
	Cashouts        calls          `json:"cashouts"`
	CashoutsRefused map[string]int `json:"cashouts_refused"`
	// Reconnects are the streams reopened in the phase, each timed from the
	// drop the player noticed to the new stream open.
	Reconnects calls `json:"reconnects"`
	// VoidRounds are the played rounds whose betting began in the phase and
	// that never crashed on the streams (settled by the fail-over rule).
	VoidRounds []string `json:"void_rounds"`
}

// mark is one line of a --phases file: a Unix time in milliseconds, then
// the label of the phase that begins then.
type mark struct {
	at    time.Time
	label string
}

// readMarks reads a --phases file: one mark per line, "<unix ms> <label>";
// blank lines are skipped.
func readMarks(r io.Reader) ([]mark, error) {
	var out []mark
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		ms, label, _ := strings.Cut(line, " ")
		v, err := strconv.ParseInt(ms, 10, 64)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("phases: line %d: %q does not start with a Unix time in milliseconds", n, line)
		}
		out = append(out, mark{at: time.UnixMilli(v), label: strings.TrimSpace(label)})
	}
	return out, sc.Err()
}

// phasesOf splits the run at the marks: a first phase "before: <first
// label>" from the start, then one per mark up to the next or to until (the
// end of play, seconds since start).
func phasesOf(start time.Time, marks []mark, until float64) []phaseStat {
	if len(marks) == 0 {
		return nil
	}
	out := []phaseStat{{Label: "before: " + marks[0].label, From: 0}}
	for _, m := range marks {
		at := m.at.Sub(start).Seconds()
		out[len(out)-1].To = at
		out = append(out, phaseStat{Label: m.label, From: at})
	}
	out[len(out)-1].To = max(until, out[len(out)-1].From)
	return out
}

// fill counts the samples of each kind, the void rounds, into the phases.
func fillPhases(phases []phaseStat, bets, cashouts, reconnects []sample, voids map[string]float64) {
	in := func(ss []sample, p phaseStat) []sample {
		var out []sample
		for _, s := range ss {
			if s.at >= p.From && s.at < p.To {
				out = append(out, s)
			}
		}
		return out
	}
	for i := range phases {
		p := &phases[i]
		p.Bets, p.Cashouts, p.Reconnects = summarise(in(bets, *p)), summarise(in(cashouts, *p)), summarise(in(reconnects, *p))
		p.BetsRefused, p.CashoutsRefused = refusals(p.Bets.Outcomes, "201"), refusals(p.Cashouts.Outcomes, "200")
		p.VoidRounds = []string{}
		for id, at := range voids {
			if at >= p.From && at < p.To {
				p.VoidRounds = append(p.VoidRounds, id)
			}
		}
	}
}

// loadPhases reads the --phases file, if any, and fills res.Phases.
func (lg *loadgen) loadPhases(res *result) error {
	if lg.o.phases == "" {
		return nil
	}
	f, err := os.Open(lg.o.phases)
	if err != nil {
		return fmt.Errorf("phases: %w", err)
	}
	defer f.Close()
	marks, err := readMarks(f)
	if err != nil {
		return err
	}
	voids := map[string]float64{}
	lg.roundMu.Lock()
	for _, id := range lg.interrupted {
		if r := lg.roundTimes[id]; r != nil {
			voids[id] = r.BettingSeenAt
		}
	}
	lg.roundMu.Unlock()
	res.Phases = phasesOf(lg.rec.start, marks, res.PlayedUntil)
	fillPhases(res.Phases, lg.rec.get(kindBet), lg.rec.get(kindCashout), lg.rec.get(kindReconnect), voids)
	return nil
}

// printPhases writes the phases as a table: one line each.
func printPhases(w io.Writer, phases []phaseStat) {
	if len(phases) == 0 {
		return
	}
	fmt.Fprintln(w, "by phase (from, to: seconds since the start):")
	fmt.Fprintf(w, "  %-36s %6s %6s  %6s %8s %-28s  %6s %8s %-28s  %5s %8s  %s\n",
		"phase", "from", "to", "bets", "p99 ms", "bets refused", "cashes", "p99 ms", "cashouts refused", "recon", "p99 ms", "void rounds")
	for _, p := range phases {
		fmt.Fprintf(w, "  %-36s %6.1f %6.1f  %6d %8.0f %-28s  %6d %8.0f %-28s  %5d %8.0f  %d\n",
			truncate(p.Label, 36), p.From, p.To, p.Bets.N, p.Bets.P99, compact(p.BetsRefused), p.Cashouts.N, p.Cashouts.P99,
			compact(p.CashoutsRefused), p.Reconnects.N, p.Reconnects.P99, len(p.VoidRounds))
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// compact is a refusal count as "none" or "503 TABLE_UNAVAILABLE:3 …".
func compact(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s:%d", k, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

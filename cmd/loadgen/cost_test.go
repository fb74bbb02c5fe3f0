package main

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCallgrindTotal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		out  string
		want int64 // 0: an error
	}{
		{"totals", "version: 1\nevents: Ir\nsummary: 1307683015\n\nfn=(1) main\n3 4\ntotals: 1307683015\n", 1307683015},
		{"summary only", "events: Ir\nsummary: 42\nfn=(1) main\n", 42},
		{"totals over summary", "events: Ir\nsummary: 41\ntotals: 42\n", 42},
		{"first event of several", "events: Ir Dr Dw\ntotals: 300 20 10\n", 300},
		{"another event first", "events: Dr Ir\ntotals: 20 300\n", 0},
		{"no events line", "totals: 300\n", 0},
		{"no total (a run cut short)", "events: Ir\nfn=(1) main\n3 4\n", 0},
		{"not a number", "events: Ir\ntotals: many\n", 0},
		{"zero", "events: Ir\ntotals: 0\n", 0},
		{"empty", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := callgrindTotal(strings.NewReader(tc.out))
			switch {
			case tc.want == 0 && err == nil:
				t.Fatalf("got %d, want an error", got)
			case tc.want != 0 && (err != nil || got != tc.want):
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestCostFigures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name               string
		sizes              [3]costSize
		totals             [3]int64
		perBet, perCashout float64 // 0: an error
	}{
		{"the default runs", costSizes(2000, 2000), [3]int64{400_000_000, 1_750_000_000, 2_550_000_000}, 750_000, 400_000},
		{"odd sizes", costSizes(25, 3), [3]int64{1000, 3300, 3600}, 100, 100},
		{"a fraction", costSizes(12, 4), [3]int64{1000, 1011, 1012}, 1.0, 0.25},
		{"bets that cost nothing", costSizes(20, 4), [3]int64{1000, 1000, 1002}, 0, 0},
		{"cashouts that cost nothing", costSizes(20, 4), [3]int64{1000, 1002, 1002}, 0, 0},
		{"no more bets", [3]costSize{{4, 2}, {4, 2}, {4, 4}}, [3]int64{1000, 1002, 1004}, 0, 0},
		{"cashouts changed with the bets", [3]costSize{{2, 1}, {4, 2}, {4, 4}}, [3]int64{1000, 1002, 1004}, 0, 0},
		{"bets changed with the cashouts", [3]costSize{{2, 2}, {4, 2}, {6, 4}}, [3]int64{1000, 1002, 1004}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := figures(tc.sizes, tc.totals)
			switch {
			case tc.perBet == 0 && err == nil:
				t.Fatalf("got %+v, want an error", got)
			case tc.perBet != 0 && (err != nil || got.perBet != tc.perBet || got.perCashout != tc.perCashout):
				t.Fatalf("got %+v, %v; want %v per bet, %v per cashout", got, err, tc.perBet, tc.perCashout)
			}
		})
	}
}

func TestCostSizes(t *testing.T) {
	t.Parallel()
	got := costSizes(2000, 2000)
	want := [3]costSize{{200, 0}, {2000, 0}, {2000, 2000}}
	if got != want {
		t.Fatalf("costSizes(2000, 2000) = %v, want %v", got, want)
	}
}

func TestSpread(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{5}, 0},
		{[]float64{100, 100, 100}, 0},
		{[]float64{99, 101}, 0.02},
		{[]float64{101, 99, 100}, 0.02},
	} {
		if got := spread(tc.xs); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("spread(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{5}, 5},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{726473, 725470, 725006}, 725470},
	} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

func TestThousands(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 812345: "812,345", 1307683015: "1,307,683,015", -1234: "-1,234",
	} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestCostMain runs `loadgen cost` with a valgrind that counts 1,000,000
// instructions per run, 800 per bet and 400 per cashout, and fails a run
// whose test did not pass.
func TestCostMain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fake := func(name, pass string) string {
		path := filepath.Join(dir, name)
		script := `#!/bin/sh
for a in "$@"; do
	case "$a" in
	--callgrind-out-file=*) out="${a#*=}" ;;
	-cost.bets=*) bets="${a#*=}" ;;
	-cost.cashouts=*) cashouts="${a#*=}" ;;
	esac
done
printf 'events: Ir\ntotals: %d\n' $((1000000 + 800 * bets + 400 * cashouts)) >"$out"
echo "` + pass + `"
`
		if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var stdout bytes.Buffer
	out := filepath.Join(dir, "out")
	code, err := costMain(t.Context(), []string{"--binary", "engine.test", "--valgrind", fake("valgrind", "--- PASS: TestCost (1.00s)"),
		"--out", out, "--bets", "20", "--cashouts", "10", "--repeat", "2"}, &stdout, io.Discard)
	if code != 0 || err != nil {
		t.Fatalf("cost: %d, %v\n%s", code, err, stdout.String())
	}
	for _, want := range []string{"instructions per bet: 800\n", "instructions per cashout: 400\n",
		"spread of 2 measurements (largest - smallest) / mean: per bet 0.00 %, per cashout 0.00 %\n",
		"median of 2 measurements: 800 per bet, 400 per cashout\n", "bets20-cashouts10-run2.out"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, stdout.String())
		}
	}
	if _, err := os.Stat(filepath.Join(out, "bets2-cashouts0-run1.out")); err != nil {
		t.Error(err)
	}
	code, err = costMain(t.Context(), []string{"--binary", "engine.test", "--valgrind", fake("skipping", "--- SKIP: TestCost (0.00s)"),
		"--out", out}, io.Discard, io.Discard)
	if code == 0 || err == nil || !strings.Contains(err.Error(), "did not pass TestCost") {
		t.Fatalf("a run that skipped TestCost: %d, %v", code, err)
	}
}

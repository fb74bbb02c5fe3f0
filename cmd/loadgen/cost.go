package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Instructions per bet and per cashout (`loadgen cost`, `make cost`): the
// engine's fixed workload (TestCost in internal/engine: one round of a table
// on a SQLite file, its bets placed and cashed out through the table's loop,
// group committer and store, against a wallet that answers at once) runs
// under valgrind's callgrind, which counts the instructions the process
// executes: the same count for the same binary and inputs, whatever else
// runs on the machine's cores. It runs at three sizes, and the figures are
// differences between them, so that what every run does once (the process,
// the schema, the table's start, the rounds around the measured one)
// cancels out:
//
//	per bet     = (run(bets, 0) - run(bets/10, 0)) / (bets - bets/10)
//	per cashout = (run(bets, cashouts) - run(bets, 0)) / cashouts
//
// A bet that is not cashed out loses at the crash, so a bet's figure holds
// its share of the crash's settlement of the lost bets, and a cashout's is
// what cashing a bet out costs beyond letting it lose.

// costCommand is the load tool's subcommand that measures instructions per
// bet and per cashout.
const costCommand = "cost"

// costEnv is the environment of the workload's runs, over the caller's:
// one P, so that no idle thread spins looking for work (instructions that
// depend on time); no asynchronous preemption, which comes by the clock and
// whose signal trips an assertion of callgrind 3.19; no RDTSCP, which
// valgrind 3.19 does not decode (the runtime reads the time-stamp counter
// with RDTSC instead).
var costEnv = []string{"GOMAXPROCS=1", "GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1"}

// defaultCostTmp is /dev/shm where it is a folder (Linux's tmpfs), else the
// system's temporary folder.
func defaultCostTmp() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// costSize is one run of the workload: bets placed in the measured round,
// of which cashouts are cashed out.
type costSize struct {
	bets, cashouts int
}

func (s costSize) String() string { return fmt.Sprintf("%d bets, %d cashouts", s.bets, s.cashouts) }

// costSizes returns the three runs of a measurement of bets and cashouts.
// The differences are as large as the runs allow: how the goroutines
// interleave under callgrind, hence how many batches the group committer
// commits (a few hundred thousand instructions each), still moves a run's
// total by up to a few million, and the larger the difference, the less that
// moves a figure. The smallest run still places a tenth of the bets, so that
// what a first bet does once (caches, pools) is in all three.
func costSizes(bets, cashouts int) [3]costSize {
	return [3]costSize{{bets / 10, 0}, {bets, 0}, {bets, cashouts}}
}

// costFigures are the instructions of one bet and of one cashout.
type costFigures struct {
	perBet, perCashout float64
}

// figures derives the instructions per bet and per cashout from the totals
// of the three runs of sizes (costSizes).
func figures(sizes [3]costSize, totals [3]int64) (costFigures, error) {
	bets := sizes[1].bets - sizes[0].bets
	cashouts := sizes[2].cashouts - sizes[1].cashouts
	switch {
	case bets <= 0 || sizes[1].cashouts != sizes[0].cashouts:
		return costFigures{}, fmt.Errorf("runs %v and %v do not differ by bets alone", sizes[0], sizes[1])
	case cashouts <= 0 || sizes[2].bets != sizes[1].bets:
		return costFigures{}, fmt.Errorf("runs %v and %v do not differ by cashouts alone", sizes[1], sizes[2])
	case totals[1] <= totals[0] || totals[2] <= totals[1]:
		return costFigures{}, fmt.Errorf("the totals %v do not grow with the runs %v", totals, sizes)
	}
	return costFigures{
		perBet:     float64(totals[1]-totals[0]) / float64(bets),
		perCashout: float64(totals[2]-totals[1]) / float64(cashouts),
	}, nil
}

// callgrindTotal reads the total of the first event (Ir, instructions,
// unless --event says otherwise) from a callgrind out file: its totals:
// line, or its summary: line when it has none.
func callgrindTotal(r io.Reader) (int64, error) {
	var events, totals, summary string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "events:") && events == "":
			events = strings.TrimSpace(strings.TrimPrefix(line, "events:"))
		case strings.HasPrefix(line, "totals:"):
			totals = strings.TrimSpace(strings.TrimPrefix(line, "totals:"))
		case strings.HasPrefix(line, "summary:"):
			summary = strings.TrimSpace(strings.TrimPrefix(line, "summary:"))
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read callgrind out: %w", err)
	}
	if first, _, _ := strings.Cut(events, " "); first != "Ir" {
		return 0, fmt.Errorf("callgrind out counts %q, not Ir first", events)
	}
	line := totals
	if line == "" {
		line = summary
	}
	if line == "" {
		return 0, errors.New("callgrind out has no totals: or summary: line (did the run finish?)")
	}
	first, _, _ := strings.Cut(line, " ")
	n, err := strconv.ParseInt(first, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("callgrind out: total %q is not a positive count", first)
	}
	return n, nil
}

// spread is (largest - smallest) / mean of xs, 0 for fewer than two.
func spread(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	for _, x := range xs {
		lo, hi, sum = math.Min(lo, x), math.Max(hi, x), sum+x
	}
	return (hi - lo) / (sum / float64(len(xs)))
}

// median is the middle of xs (the mean of the two middle ones for an even
// count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// thousands formats n with a comma between each three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// costOptions are the flags of `loadgen cost`.
type costOptions struct {
	binary   string
	out      string
	valgrind string
	bets     int
	cashouts int
	repeat   int
	gogc     string
	tmpdir   string
}

// costMain runs `loadgen cost`: the workload's three runs under callgrind
// (each repeat times), and the figures.
func costMain(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	o := costOptions{}
	fs := flag.NewFlagSet("loadgen "+costCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.binary, "binary", "", "the engine's test binary (go test -c ./internal/engine), which holds TestCost")
	fs.StringVar(&o.out, "out", "callgrind", "the folder of the callgrind out files and the runs' logs")
	fs.StringVar(&o.valgrind, "valgrind", "valgrind", "the valgrind command")
	fs.IntVar(&o.bets, "bets", 4000, "bets of the two larger runs (the smallest places a tenth)")
	fs.IntVar(&o.cashouts, "cashouts", 4000, "cashouts of the largest run (the two others cash out none)")
	fs.IntVar(&o.repeat, "repeat", 1, "measure this many times, and report the spread")
	fs.StringVar(&o.gogc, "gogc", "off", "the runs' GOGC")
	fs.StringVar(&o.tmpdir, "tmpdir", defaultCostTmp(), "the runs' TMPDIR, where the workload's SQLite file is (a tmpfs: its writes and syncs return at once, and count the same)")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	switch {
	case o.binary == "":
		return 2, errors.New("cost: give --binary, the engine's test binary")
	case o.bets < 10 || o.cashouts < 1 || o.cashouts > o.bets:
		return 2, errors.New("cost: --bets must be at least 10, and --cashouts from 1 to --bets")
	case o.repeat < 1:
		return 2, errors.New("cost: --repeat must be at least 1")
	}
	if err := os.MkdirAll(o.out, 0o750); err != nil {
		return 2, fmt.Errorf("cost: %w", err)
	}
	sizes := costSizes(o.bets, o.cashouts)
	env := append(append(os.Environ(), costEnv...), "GOGC="+o.gogc, "TMPDIR="+o.tmpdir)
	fmt.Fprintf(stdout, "workload: TestCost of internal/engine under callgrind (%s GOGC=%s TMPDIR=%s), runs of %v; %v; %v\n",
		strings.Join(costEnv, " "), o.gogc, o.tmpdir, sizes[0], sizes[1], sizes[2])
	var bets, cashouts []float64
	var last string
	for rep := 1; rep <= o.repeat; rep++ {
		var totals [3]int64
		for i, s := range sizes {
			name := fmt.Sprintf("bets%d-cashouts%d", s.bets, s.cashouts)
			if o.repeat > 1 {
				name += fmt.Sprintf("-run%d", rep)
			}
			total, err := callgrindRun(ctx, o, env, s, filepath.Join(o.out, name))
			if err != nil {
				return 1, err
			}
			totals[i], last = total, filepath.Join(o.out, name+".out")
			fmt.Fprintf(stdout, "  %-26s %16s instructions\n", s.String()+":", thousands(total))
		}
		f, err := figures(sizes, totals)
		if err != nil {
			return 1, err
		}
		bets, cashouts = append(bets, f.perBet), append(cashouts, f.perCashout)
		fmt.Fprintf(stdout, "instructions per bet: %s\n", thousands(int64(math.Round(f.perBet))))
		fmt.Fprintf(stdout, "instructions per cashout: %s\n", thousands(int64(math.Round(f.perCashout))))
	}
	if o.repeat > 1 {
		fmt.Fprintf(stdout, "median of %d measurements: %s per bet, %s per cashout\n", o.repeat,
			thousands(int64(math.Round(median(bets)))), thousands(int64(math.Round(median(cashouts)))))
		fmt.Fprintf(stdout, "spread of %d measurements (largest - smallest) / mean: per bet %.2f %%, per cashout %.2f %%\n",
			o.repeat, 100*spread(bets), 100*spread(cashouts))
	}
	dir, err := filepath.Abs(o.out)
	if err != nil {
		dir = o.out
	}
	fmt.Fprintf(stdout, "callgrind out files and logs in %s (where the instructions go: callgrind_annotate %s)\n", dir, last)
	return 0, nil
}

// callgrindRun runs TestCost at size s under callgrind, writing name.out and
// name.log, and returns its total of instructions.
func callgrindRun(ctx context.Context, o costOptions, env []string, s costSize, name string) (int64, error) {
	if err := os.Remove(name + ".out"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("cost: %w", err)
	}
	logf, err := os.Create(name + ".log")
	if err != nil {
		return 0, fmt.Errorf("cost: %w", err)
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, o.valgrind, "--tool=callgrind", "--callgrind-out-file="+name+".out",
		o.binary, "-test.run=^TestCost$", "-test.v", "-test.count=1",
		"-cost.bets="+strconv.Itoa(s.bets), "-cost.cashouts="+strconv.Itoa(s.cashouts))
	cmd.Env, cmd.Stdout, cmd.Stderr = env, logf, logf
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("cost: the run of %v failed (%w): see %s.log", s, err, name)
	}
	// A test binary that no longer holds TestCost passes, running nothing.
	if out, err := os.ReadFile(name + ".log"); err != nil || !strings.Contains(string(out), "--- PASS: TestCost ") {
		return 0, fmt.Errorf("cost: the run of %v did not pass TestCost: see %s.log", s, name)
	}
	f, err := os.Open(name + ".out")
	if err != nil {
		return 0, fmt.Errorf("cost: %w", err)
	}
	defer f.Close()
	total, err := callgrindTotal(f)
	if err != nil {
		return 0, fmt.Errorf("cost: %s.out: %w", name, err)
	}
	return total, nil
}

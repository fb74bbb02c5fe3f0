package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/store"
)

// freebetCases are the contract cases of freebet_sources and freebet_grants
// (freebets.go).
var freebetCases = []contractCase{
	{"FreebetIntakeAndListing", testFreebetIntake},
	{"FreebetSpendAndReturn", testFreebetSpendReturn},
	{"FreebetConcurrentSpendsOneWins", testFreebetConcurrentSpends},
	{"FreebetSubstitutionRaceForLastGrant", testFreebetSubstitutionRace},
	{"FreebetConcurrentReturnsOneWins", testFreebetConcurrentReturns},
	{"FreebetConcurrentIntakesCreateOnce", testFreebetConcurrentIntakes},
}

var (
	alice    = store.FreebetOwner{Operator: "op-1", PlayerID: "player-alice", Currency: "BRL"}
	aliceUSD = store.FreebetOwner{Operator: "op-1", PlayerID: "player-alice", Currency: "USD"}
	bob      = store.FreebetOwner{Operator: "op-1", PlayerID: "player-bob", Currency: "BRL"}
)

// family is one /balance entry for the tests: its source row and its grants,
// id#1..id#n (the bare id when quantity is 1).
type family struct {
	id       string
	amount   int64
	quantity int
}

func (f family) source(o store.FreebetOwner) store.FreebetSourceRecord {
	return store.FreebetSourceRecord{Operator: o.Operator, PlayerID: o.PlayerID, SourceID: f.id, Currency: o.Currency,
		Amount: f.amount, Quantity: f.quantity, ReceivedAt: store.MillisOf(t0)}
}

func (f family) grants(o store.FreebetOwner) []store.FreebetGrantRecord {
	out := make([]store.FreebetGrantRecord, f.quantity)
	for n := range out {
		id := f.id
		if f.quantity > 1 {
			id = fmt.Sprintf("%s#%d", f.id, n+1)
		}
		out[n] = store.FreebetGrantRecord{Operator: o.Operator, PlayerID: o.PlayerID, GrantID: id, SourceID: f.id,
			Currency: o.Currency, Amount: f.amount, State: store.FreebetOpen, CreatedAt: store.MillisOf(t0)}
	}
	return out
}

// take stores families for o in one transaction, as an intake does: the
// sources, then the grants of the families this call took. It returns the
// families taken and the grants created.
func take(ctx context.Context, s *store.Store, o store.FreebetOwner, fams ...family) (taken []string, created int, err error) {
	err = s.InTx(ctx, func(ctx context.Context) error {
		sources := make([]store.FreebetSourceRecord, len(fams))
		for i, f := range fams {
			sources[i] = f.source(o)
		}
		ids, err := s.InsertFreebetSources(ctx, sources)
		if err != nil {
			return err
		}
		var grants []store.FreebetGrantRecord
		for _, f := range fams {
			if slices.Contains(ids, f.id) {
				grants = append(grants, f.grants(o)...)
			}
		}
		n, err := s.InsertFreebetGrants(ctx, grants)
		taken, created = ids, n
		return err
	})
	return taken, created, err
}

func mustTake(t *testing.T, s *store.Store, o store.FreebetOwner, fams ...family) {
	t.Helper()
	if _, _, err := take(t.Context(), s, o, fams...); err != nil {
		t.Fatalf("take: %v", err)
	}
}

func grantIDs(recs []store.FreebetGrantRecord) []string {
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.GrantID
	}
	return ids
}

func openIDs(t *testing.T, s *store.Store, o store.FreebetOwner) []string {
	t.Helper()
	recs, err := s.OpenFreebetGrants(t.Context(), o)
	if err != nil {
		t.Fatalf("OpenFreebetGrants: %v", err)
	}
	return grantIDs(recs)
}

// testFreebetIntake: sources and grants in, known ids, listing by intake
// order, a colliding grant id skipped. Rule FB-15 FB-20
func testFreebetIntake(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	taken, created, err := take(ctx, s, alice, family{"camp", 500, 3}, family{"bare", 200, 1})
	if err != nil || created != 4 || !slices.Equal(sortedCopy(taken), []string{"bare", "camp"}) {
		t.Fatalf("take = %v, %d, %v; want both families and 4 grants", taken, created, err)
	}
	// A repeated family is not taken again; a grant id that collides with an
	// existing grant (family "camp#2" of quantity 1) is skipped.
	taken, created, err = take(ctx, s, alice, family{"camp", 900, 5}, family{"camp#2", 700, 1}, family{"new", 300, 2})
	if err != nil || created != 2 || !slices.Equal(sortedCopy(taken), []string{"camp#2", "new"}) {
		t.Fatalf("second take = %v, %d, %v; want camp#2 and new taken, 2 grants", taken, created, err)
	}
	if got := openIDs(t, s, alice); !slices.Equal(got, []string{"camp#1", "camp#2", "camp#3", "bare", "new#1", "new#2"}) {
		t.Fatalf("open = %v, want intake order", got)
	}
	g, err := s.FreebetGrant(ctx, alice, "camp#2")
	if err != nil || g.Amount != 500 || g.SourceID != "camp" || g.State != store.FreebetOpen || g.SpentAt != 0 || g.CreatedAt != store.MillisOf(t0) {
		t.Fatalf("FreebetGrant(camp#2) = %+v, %v; want the first family's grant", g, err)
	}
	known, err := s.KnownFreebetSources(ctx, alice.Operator, alice.PlayerID, []string{"camp", "nope", "new", "camp#2"})
	if err != nil || !slices.Equal(sortedCopy(known), []string{"camp", "camp#2", "new"}) {
		t.Fatalf("KnownFreebetSources = %v, %v", known, err)
	}
	// Known ids are per operator and player whatever the currency (FB-3).
	if known, err := s.KnownFreebetSources(ctx, bob.Operator, bob.PlayerID, []string{"camp"}); err != nil || len(known) != 0 {
		t.Fatalf("bob's known sources = %v, %v; want none", known, err)
	}
	// More ids than one IN list holds.
	many := make([]string, 2500)
	for i := range many {
		many[i] = fmt.Sprintf("id-%d", i)
	}
	many[2400] = "bare"
	if known, err := s.KnownFreebetSources(ctx, alice.Operator, alice.PlayerID, many); err != nil || !slices.Equal(known, []string{"bare"}) {
		t.Fatalf("KnownFreebetSources(2500 ids) = %v, %v", known, err)
	}
	if got := openIDs(t, s, aliceUSD); len(got) != 0 {
		t.Fatalf("USD open = %v, want none (another currency)", got)
	}
	all, err := s.PlayerFreebetGrants(ctx, alice.Operator, alice.PlayerID)
	if err != nil || len(all) != 6 {
		t.Fatalf("PlayerFreebetGrants = %d rows, %v; want 6", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Seq <= all[i-1].Seq {
			t.Fatalf("PlayerFreebetGrants not by seq: %v", grantIDs(all))
		}
	}
	// More grants than one INSERT holds.
	if _, created, err := take(ctx, s, bob, family{"big", 100, 1000}, family{"big2", 100, 1000}, family{"big3", 100, 500}); err != nil || created != 2500 {
		t.Fatalf("take 2500 grants = %d, %v", created, err)
	}
	if got := openIDs(t, s, bob); len(got) != 2500 || got[0] != "big#1" || got[2499] != "big3#500" {
		t.Fatalf("bob open = %d grants", len(got))
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// testFreebetSpendAndReturn: each statement's outcome and sentinel. Rule FB-21
// FB-22 FB-23
func testFreebetSpendReturn(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mustTake(t, s, alice, family{"g", 500, 2}, family{"h", 700, 1})
	at := store.MillisOf(t0.Add(time.Minute))

	for _, tc := range []struct {
		owner store.FreebetOwner
		id    string
	}{{bob, "g#1"}, {aliceUSD, "g#1"}, {alice, "nope"}} {
		if _, err := s.SpendFreebetGrant(ctx, tc.owner, tc.id, at); !errors.Is(err, store.ErrFreebetGrantNotOpen) {
			t.Fatalf("SpendFreebetGrant(%+v, %s) = %v, want ErrFreebetGrantNotOpen", tc.owner, tc.id, err)
		}
		if _, err := s.FreebetGrant(ctx, tc.owner, tc.id); !errors.Is(err, store.ErrFreebetGrantNotFound) {
			t.Fatalf("FreebetGrant(%+v, %s) = %v, want ErrFreebetGrantNotFound", tc.owner, tc.id, err)
		}
	}
	g, err := s.SpendFreebetGrant(ctx, alice, "g#1", at)
	if err != nil || g.GrantID != "g#1" || g.State != store.FreebetSpent || g.SpentAt != at {
		t.Fatalf("SpendFreebetGrant = %+v, %v", g, err)
	}
	if _, err := s.SpendFreebetGrant(ctx, alice, "g#1", at); !errors.Is(err, store.ErrFreebetGrantNotOpen) {
		t.Fatalf("second spend = %v, want ErrFreebetGrantNotOpen", err)
	}
	seq, err := s.OldestOpenFreebetGrant(ctx, alice, 500)
	if err != nil {
		t.Fatalf("OldestOpenFreebetGrant: %v", err)
	}
	sub, err := s.SpendFreebetGrantBySeq(ctx, seq, at)
	if err != nil || sub.GrantID != "g#2" || sub.Seq != seq {
		t.Fatalf("SpendFreebetGrantBySeq = %+v, %v; want g#2", sub, err)
	}
	if _, err := s.SpendFreebetGrantBySeq(ctx, seq, at); !errors.Is(err, store.ErrFreebetGrantNotOpen) {
		t.Fatalf("second spend by seq = %v, want ErrFreebetGrantNotOpen", err)
	}
	if _, err := s.OldestOpenFreebetGrant(ctx, alice, 500); !errors.Is(err, store.ErrFreebetGrantNotFound) {
		t.Fatalf("OldestOpenFreebetGrant(none left) = %v, want ErrFreebetGrantNotFound", err)
	}
	if _, err := s.OldestOpenFreebetGrant(ctx, aliceUSD, 700); !errors.Is(err, store.ErrFreebetGrantNotFound) {
		t.Fatalf("OldestOpenFreebetGrant(other currency) = %v, want ErrFreebetGrantNotFound", err)
	}

	// Return: only a spent grant, only its owner's.
	if err := s.ReturnFreebetGrant(ctx, bob, "g#1"); !errors.Is(err, store.ErrFreebetGrantNotSpent) {
		t.Fatalf("Return by bob = %v, want ErrFreebetGrantNotSpent", err)
	}
	if err := s.ReturnFreebetGrant(ctx, alice, "h"); !errors.Is(err, store.ErrFreebetGrantNotSpent) {
		t.Fatalf("Return of an open grant = %v, want ErrFreebetGrantNotSpent", err)
	}
	if err := s.ReturnFreebetGrant(ctx, alice, "g#1"); err != nil {
		t.Fatalf("Return: %v", err)
	}
	if g, err := s.FreebetGrant(ctx, alice, "g#1"); err != nil || g.State != store.FreebetOpen || g.SpentAt != 0 {
		t.Fatalf("returned grant = %+v, %v; want open, spent_at NULL", g, err)
	}
	if got := openIDs(t, s, alice); !slices.Equal(got, []string{"g#1", "h"}) {
		t.Fatalf("open after return = %v, want g#1 back in its place", got)
	}

	// A spend in a transaction that rolls back leaves the grant open.
	boom := errors.New("refused")
	err = s.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.SpendFreebetGrant(ctx, alice, "h", at); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v", err)
	}
	if got := openIDs(t, s, alice); !slices.Equal(got, []string{"g#1", "h"}) {
		t.Fatalf("open after a rolled-back spend = %v", got)
	}
}

// race runs n goroutines of fn at once and returns their errors.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// outcome counts the nil errors and those matching want; any other fails t.
func outcome(t *testing.T, errs []error, want error) (wins, lost int) {
	t.Helper()
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case errors.Is(err, want):
			lost++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	return wins, lost
}

// Rule FB-21: of concurrent spends of one grant, each in its own transaction,
// exactly one wins.
func testFreebetConcurrentSpends(t *testing.T, s *store.Store, _ string) {
	mustTake(t, s, alice, family{"last", 500, 1}, family{"other", 500, 1})
	const n = 20
	errs := race(n, func(int) error {
		return s.InTx(context.Background(), func(ctx context.Context) error {
			_, err := s.SpendFreebetGrant(ctx, alice, "last", store.MillisOf(t0))
			return err
		})
	})
	if wins, lost := outcome(t, errs, store.ErrFreebetGrantNotOpen); wins != 1 || lost != n-1 {
		t.Fatalf("wins = %d, lost = %d; want exactly one win", wins, lost)
	}
	if got := openIDs(t, s, alice); !slices.Equal(got, []string{"other"}) {
		t.Fatalf("open = %v, want [other]", got)
	}
}

// Rule FB-22: bets racing for the last open grant of a value all find it as
// the oldest, and exactly one spends it: no grant is spent twice.
func testFreebetSubstitutionRace(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mustTake(t, s, alice, family{"a", 500, 1}, family{"b", 500, 1})
	if _, err := s.SpendFreebetGrant(ctx, alice, "a", store.MillisOf(t0)); err != nil {
		t.Fatal(err)
	}
	const n = 10
	var found sync.WaitGroup // every bet has read the oldest before any spends
	found.Add(n)
	seqs := make([]int64, n)
	spent := make([]string, n)
	errs := race(n, func(i int) error {
		seq, err := s.OldestOpenFreebetGrant(context.Background(), alice, 500)
		found.Done()
		if err != nil {
			return err
		}
		found.Wait()
		seqs[i] = seq
		g, err := s.SpendFreebetGrantBySeq(context.Background(), seq, store.MillisOf(t0))
		if err != nil {
			return err
		}
		spent[i] = g.GrantID
		return nil
	})
	if wins, lost := outcome(t, errs, store.ErrFreebetGrantNotOpen); wins != 1 || lost != n-1 {
		t.Fatalf("wins = %d, lost = %d; want exactly one win", wins, lost)
	}
	for i := range seqs {
		if seqs[i] != seqs[0] {
			t.Fatalf("bets found different oldest grants %v: the race was not on one grant", seqs)
		}
	}
	if i := slices.IndexFunc(spent, func(id string) bool { return id != "" }); i < 0 || spent[i] != "b" {
		t.Fatalf("spent = %v, want b once", spent)
	}
	if _, err := s.OldestOpenFreebetGrant(ctx, alice, 500); !errors.Is(err, store.ErrFreebetGrantNotFound) {
		t.Fatalf("after the race: %v, want none open", err)
	}
	all, err := s.PlayerFreebetGrants(ctx, alice.Operator, alice.PlayerID)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range all {
		if g.State != store.FreebetSpent {
			t.Fatalf("grant %s is %s, want spent", g.GrantID, g.State)
		}
	}
}

// Rule FB-23: of concurrent returns of one spend exactly one reopens it.
func testFreebetConcurrentReturns(t *testing.T, s *store.Store, _ string) {
	mustTake(t, s, alice, family{"g", 500, 1})
	if _, err := s.SpendFreebetGrant(t.Context(), alice, "g", store.MillisOf(t0)); err != nil {
		t.Fatal(err)
	}
	const n = 20
	errs := race(n, func(int) error {
		return s.InTx(context.Background(), func(ctx context.Context) error {
			return s.ReturnFreebetGrant(ctx, alice, "g")
		})
	})
	if wins, lost := outcome(t, errs, store.ErrFreebetGrantNotSpent); wins != 1 || lost != n-1 {
		t.Fatalf("wins = %d, lost = %d; want exactly one return", wins, lost)
	}
	if got := openIDs(t, s, alice); !slices.Equal(got, []string{"g"}) {
		t.Fatalf("open = %v, want [g] once", got)
	}
}

// Rule FB-15 FB-18: concurrent intakes of one list (in either order) take each
// family once and create its grants once.
func testFreebetConcurrentIntakes(t *testing.T, s *store.Store, _ string) {
	fams := []family{{"camp-7", 500, 3}, {"w", 100, 1}, {"z", 200, 2}}
	reversed := slices.Clone(fams)
	slices.Reverse(reversed)
	const n = 8
	var mu sync.Mutex
	takenBy := map[string]int{}
	created := 0
	errs := race(n, func(i int) error {
		in := fams
		if i%2 == 1 {
			in = reversed
		}
		ids, c, err := take(context.Background(), s, alice, in...)
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			takenBy[id]++
		}
		created += c
		return err
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("take: %v", err)
	}
	for _, f := range fams {
		if takenBy[f.id] != 1 {
			t.Fatalf("family %s taken %d times, want once", f.id, takenBy[f.id])
		}
	}
	if created != 6 {
		t.Fatalf("grants created = %d, want 6", created)
	}
	if n := countRows(t, s, "SELECT count(*) FROM freebet_grants"); n != 6 {
		t.Fatalf("grant rows = %d, want 6", n)
	}
	if n := countRows(t, s, "SELECT count(*) FROM freebet_sources"); n != 3 {
		t.Fatalf("source rows = %d, want 3", n)
	}
}

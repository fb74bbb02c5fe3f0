package freebets_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/freebets"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
)

// TestMain shares one PostgreSQL container among this package's tests.
func TestMain(m *testing.M) { pgtest.Main(m) }

// backend opens a fresh, empty database of one dialect and returns its DSN.
type backend struct {
	name string
	open func(t testing.TB) (dsn string)
}

var backends = []backend{
	{name: "sqlite", open: func(t testing.TB) string {
		return storetest.SQLite(t)
	}},
	{name: "postgres", open: pgtest.Start},
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// env is one test's service over its own migrated database.
type env struct {
	st  *store.Store
	svc *freebets.Service
	reg *prometheus.Registry
}

func newEnv(t testing.TB, dsn string) *env {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	reg := prometheus.NewRegistry()
	svc, err := freebets.New(st.Freebets(), freebets.Options{Registerer: reg, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &env{st: st, svc: svc, reg: reg}
}

// metric returns the value of a counter, with the label reason when not empty.
func (e *env) metric(t testing.TB, name string, reason freebets.Reason) float64 {
	t.Helper()
	families, err := e.reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if reason == "" {
				return m.GetCounter().GetValue()
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == string(reason) {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("metric %s{reason=%q} not registered", name, reason)
	return 0
}

var (
	alice = freebets.Owner{Operator: "op-1", PlayerID: "player-alice", Currency: "BRL"}
	bob   = freebets.Owner{Operator: "op-1", PlayerID: "player-bob", Currency: "BRL"}
)

func ptr(v int64) *int64 { return &v }

// brl are the limits of the tests' session currency: 100..10000 cents.
var brl = freebets.Limits{MinBet: ptr(100), MaxBet: ptr(10_000)}

// list turns JSON texts into a /balance freebets list.
func list(entries ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(entries))
	for i, e := range entries {
		out[i] = json.RawMessage(e)
	}
	return out
}

func (e *env) intake(t testing.TB, owner freebets.Owner, entries []json.RawMessage) freebets.Summary {
	t.Helper()
	sum, err := e.svc.Intake(context.Background(), owner, entries, brl, true)
	if err != nil {
		t.Fatalf("Intake: %v", err)
	}
	return sum
}

// openIDs lists the owner's open grant ids, oldest first.
func (e *env) openIDs(t testing.TB, owner freebets.Owner) []string {
	t.Helper()
	grants, err := e.svc.Open(context.Background(), owner)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	ids := make([]string, len(grants))
	for i, g := range grants {
		if g.State != freebets.StateOpen {
			t.Fatalf("Open returned %s in state %s", g.ID, g.State)
		}
		ids[i] = g.ID
	}
	return ids
}

// spend spends in a transaction of its own, as the engine would.
func (e *env) spend(ctx context.Context, owner freebets.Owner, id string) (freebets.Grant, error) {
	var g freebets.Grant
	err := e.st.InTx(ctx, func(ctx context.Context) error {
		var err error
		g, err = e.svc.Spend(ctx, owner, id)
		return err
	})
	return g, err
}

func (e *env) mustSpend(t testing.TB, owner freebets.Owner, id string) freebets.Grant {
	t.Helper()
	g, err := e.spend(context.Background(), owner, id)
	if err != nil {
		t.Fatalf("Spend(%q): %v", id, err)
	}
	return g
}

func (e *env) giveBack(ctx context.Context, owner freebets.Owner, id string) error {
	return e.st.InTx(ctx, func(ctx context.Context) error {
		return e.svc.Return(ctx, owner, id)
	})
}

func (e *env) count(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := e.st.QueryRowForTest(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestRepositoryContract runs the suite against every backend: what passes on
// SQLite must pass on PostgreSQL and the reverse.
func TestRepositoryContract(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"DiscardReasons", testDiscardReasons},
		{"BoundsInclusive", testBoundsInclusive},
		{"UnknownBoundsDoNotLimit", testUnknownBounds},
		{"UnacceptedCurrency", testUnacceptedCurrency},
		{"SplitQuantity", testSplit},
		{"BareID", testBareID},
		{"RepeatsAreNoOps", testRepeats},
		{"RepeatInOneList", testRepeatInOneList},
		{"DiscardedIDIsNotSeen", testDiscardedIDNotSeen},
		{"RoundIDCollision", testRoundIDCollision},
		{"OwnersAndCurrencies", testOwnersAndCurrencies},
		{"OpenByValue", testOpenByValue},
		{"SpendByID", testSpendByID},
		{"SpendSubstitutesOldestEqualValue", testSpendSubstitutes},
		{"SpendNoneUnavailable", testSpendUnavailable},
		{"ReturnThenSpendAgain", testReturnThenSpend},
		{"ReturnEdgeCases", testReturnEdges},
		{"SpendRolledBackWithCallerTx", testSpendRolledBack},
		{"ConcurrentSpendsOneWins", testConcurrentSpends},
		{"RaceForLastGrantOfAValue", testRaceForLastGrant},
		{"ConcurrentIntakesCreateOnce", testConcurrentIntakes},
		{"RandomSequences", testRandomSequences},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, newEnv(t, b.open(t)))
				})
			}
		})
	}
}

// Rule FB-10 FB-11 FB-12 FB-5 LIM-6 FB-9 LIM-7 FB-13 FB-14
func testDiscardReasons(t *testing.T, e *env) {
	const good = `{"id":"good","amount":500}`
	cases := []struct {
		name   string
		entry  string
		reason freebets.Reason
	}{
		{"array", `[1,2]`, freebets.ReasonNotObject},
		{"string", `"camp"`, freebets.ReasonNotObject},
		{"number", `500`, freebets.ReasonNotObject},
		{"null", `null`, freebets.ReasonNotObject},
		{"broken JSON", `{"id":"x","amount":5`, freebets.ReasonNotObject},
		{"id absent", `{"amount":500}`, freebets.ReasonID},
		{"id empty", `{"id":"","amount":500}`, freebets.ReasonID},
		{"id null", `{"id":null,"amount":500}`, freebets.ReasonID},
		{"id number", `{"id":7,"amount":500}`, freebets.ReasonID},
		{"id key in another case", `{"ID":"x","amount":500}`, freebets.ReasonID},
		{"amount absent", `{"id":"x"}`, freebets.ReasonAmountMissing},
		{"amount null", `{"id":"x","amount":null}`, freebets.ReasonAmountMissing},
		{"amount zero", `{"id":"x","amount":0}`, freebets.ReasonAmountNotPositive},
		{"amount zero float", `{"id":"x","amount":0.0}`, freebets.ReasonAmountNotPositive},
		{"amount negative", `{"id":"x","amount":-500}`, freebets.ReasonAmountNotPositive},
		{"amount negative fraction", `{"id":"x","amount":-5.5}`, freebets.ReasonAmountNotPositive},
		{"amount fraction of a cent", `{"id":"x","amount":500.5}`, freebets.ReasonAmountFraction},
		{"amount 5.5", `{"id":"x","amount":5.5}`, freebets.ReasonAmountFraction},
		{"amount negative exponent", `{"id":"x","amount":5e-1}`, freebets.ReasonAmountFraction},
		{"amount huge negative exponent", `{"id":"x","amount":1e-999999999999}`, freebets.ReasonAmountFraction},
		{"amount string", `{"id":"x","amount":"500"}`, freebets.ReasonAmountInvalid},
		{"amount bool", `{"id":"x","amount":true}`, freebets.ReasonAmountInvalid},
		{"amount beyond int64", `{"id":"x","amount":9223372036854775808}`, freebets.ReasonAmountInvalid},
		{"amount huge exponent", `{"id":"x","amount":1e999999999999}`, freebets.ReasonAmountInvalid},
		{"quantity zero", `{"id":"x","amount":500,"quantity":0}`, freebets.ReasonQuantity},
		{"quantity negative", `{"id":"x","amount":500,"quantity":-1}`, freebets.ReasonQuantity},
		{"quantity 1001", `{"id":"x","amount":500,"quantity":1001}`, freebets.ReasonQuantity},
		{"quantity fraction", `{"id":"x","amount":500,"quantity":2.5}`, freebets.ReasonQuantity},
		{"quantity string", `{"id":"x","amount":500,"quantity":"3"}`, freebets.ReasonQuantity},
		{"amount below min_bet", `{"id":"x","amount":99}`, freebets.ReasonBelowMinBet},
		{"amount above max_bet", `{"id":"x","amount":10001}`, freebets.ReasonAboveMaxBet},
		// FB-14: 5 "currency units" is read as 5 cents, below this min_bet.
		{"currency units read as cents", `{"id":"x","amount":5}`, freebets.ReasonBelowMinBet},
	}
	for i, tc := range cases {
		owner := freebets.Owner{Operator: "op-1", PlayerID: fmt.Sprintf("p-%d", i), Currency: "BRL"}
		sum := e.intake(t, owner, list(good, tc.entry, `{"id":"also-good","amount":700,"quantity":2}`))
		want := freebets.Summary{Entries: 3, Created: 3, Discarded: map[freebets.Reason]int{tc.reason: 1}}
		if !reflect.DeepEqual(sum, want) {
			t.Errorf("%s: Summary = %+v, want %+v", tc.name, sum, want)
		}
		if got, want := e.openIDs(t, owner), []string{"good", "also-good#1", "also-good#2"}; !slices.Equal(got, want) {
			t.Errorf("%s: open grants = %v, want %v (the others survive)", tc.name, got, want)
		}
	}
	want := map[freebets.Reason]float64{}
	for _, tc := range cases {
		want[tc.reason]++
	}
	for _, r := range freebets.Reasons {
		if got := e.metric(t, "crashgame_freebets_discarded_total", r); got != want[r] {
			t.Errorf("crashgame_freebets_discarded_total{reason=%q} = %v, want %v", r, got, want[r])
		}
	}
	if got := e.metric(t, "crashgame_freebets_created_total", ""); got != float64(3*len(cases)) {
		t.Errorf("crashgame_freebets_created_total = %v, want %d", got, 3*len(cases))
	}
}

// Rule FB-14 GEN-4 AMB-17: integral amounts written with a fraction or an exponent are
// whole cents, read exactly.
func TestIntegralNotations(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "sqlite::memory:")
	e.intake(t, alice, list(
		`{"id":"a","amount":500.0}`,
		`{"id":"b","amount":5e2}`,
		`{"id":"c","amount":1.50E+2}`,
		`{"id":"d","amount":250,"quantity":2.0}`,
	))
	grants, err := e.svc.Open(t.Context(), alice)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, g := range grants {
		got[g.ID] = g.Amount
	}
	want := map[string]int64{"a": 500, "b": 500, "c": 150, "d#1": 250, "d#2": 250}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("grants = %v, want %v", got, want)
	}
}

// Rule FB-9 LIM-7 AMB-21
func testBoundsInclusive(t *testing.T, e *env) {
	sum := e.intake(t, alice, list(
		`{"id":"at-min","amount":100}`,
		`{"id":"at-max","amount":10000}`,
		`{"id":"below","amount":99}`,
		`{"id":"above","amount":10001}`,
	))
	if sum.Created != 2 || sum.DiscardedTotal() != 2 {
		t.Fatalf("Summary = %+v, want 2 created, 2 discarded", sum)
	}
	if got, want := e.openIDs(t, alice), []string{"at-min", "at-max"}; !slices.Equal(got, want) {
		t.Fatalf("open = %v, want %v", got, want)
	}
}

// Rule LIM-11 FB-9: an unknown bound does not limit.
func testUnknownBounds(t *testing.T, e *env) {
	sum, err := e.svc.Intake(t.Context(), alice, list(`{"id":"tiny","amount":1}`, `{"id":"huge","amount":9000000000}`),
		freebets.Limits{}, true)
	if err != nil || sum.Created != 2 {
		t.Fatalf("Intake with no bounds: %+v, %v; want 2 created", sum, err)
	}
	sum, err = e.svc.Intake(t.Context(), bob, list(`{"id":"tiny","amount":1}`, `{"id":"huge","amount":9000000000}`),
		freebets.Limits{MinBet: ptr(100)}, true)
	if err != nil || sum.Created != 1 || sum.Discarded[freebets.ReasonBelowMinBet] != 1 {
		t.Fatalf("Intake with min only: %+v, %v; want huge created, tiny below min", sum, err)
	}
}

// Rule FB-19 AMB-24
func testUnacceptedCurrency(t *testing.T, e *env) {
	usd := freebets.Owner{Operator: "op-1", PlayerID: "player-alice", Currency: "USD"}
	sum, err := e.svc.Intake(t.Context(), usd, list(`{"id":"camp-7","quantity":3,"amount":500}`, `{"id":"bad","amount":0}`),
		freebets.Limits{}, false)
	if err != nil {
		t.Fatalf("Intake: %v", err)
	}
	want := freebets.Summary{Entries: 2, Discarded: map[freebets.Reason]int{
		freebets.ReasonCurrency: 1, freebets.ReasonAmountNotPositive: 1,
	}}
	if !reflect.DeepEqual(sum, want) {
		t.Fatalf("Summary = %+v, want %+v", sum, want)
	}
	if n := e.count(t, "SELECT count(*) FROM freebet_grants"); n != 0 {
		t.Fatalf("%d grants stored for an unaccepted currency, want 0", n)
	}
	if _, err := e.spend(t.Context(), usd, "camp-7#1"); !errors.Is(err, freebets.ErrUnavailable) {
		t.Fatalf("Spend in the unaccepted currency: %v, want ErrUnavailable", err)
	}
	// Nothing was taken, so the id is not seen: a session in an accepted
	// currency creates the grant.
	if sum := e.intake(t, alice, list(`{"id":"camp-7","quantity":3,"amount":500}`)); sum.Created != 3 {
		t.Fatalf("later accepted intake created %d, want 3", sum.Created)
	}
}

// Rule FB-6 FB-8 FB-20 FB-4
func testSplit(t *testing.T, e *env) {
	sum := e.intake(t, alice, list(`{"id":"camp-7","quantity":3,"amount":500}`))
	if sum.Created != 3 {
		t.Fatalf("Created = %d, want 3", sum.Created)
	}
	grants, err := e.svc.Open(t.Context(), alice)
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) != 3 {
		t.Fatalf("open grants = %d, want 3", len(grants))
	}
	for i, g := range grants {
		want := freebets.Grant{
			ID: fmt.Sprintf("camp-7#%d", i+1), SourceID: "camp-7", Amount: 500, Currency: "BRL",
			State: freebets.StateOpen, Seq: g.Seq, Created: t0,
		}
		if g != want {
			t.Errorf("grant %d = %+v, want %+v", i, g, want)
		}
		if i > 0 && g.Seq <= grants[i-1].Seq {
			t.Errorf("%s is not younger than %s", g.ID, grants[i-1].ID)
		}
	}
	// A quantity of 1000 (LIM-6) is taken whole.
	if sum := e.intake(t, bob, list(`{"id":"big","quantity":1000,"amount":100}`)); sum.Created != 1000 {
		t.Fatalf("quantity 1000: created %d", sum.Created)
	}
	ids := e.openIDs(t, bob)
	if len(ids) != 1000 || ids[0] != "big#1" || ids[999] != "big#1000" {
		t.Fatalf("quantity 1000: %d grants from %s to %s", len(ids), ids[0], ids[len(ids)-1])
	}
}

// Rule FB-7 LIM-6
func testBareID(t *testing.T, e *env) {
	e.intake(t, alice, list(`{"id":"welcome","amount":100}`, `{"id":"one","amount":200,"quantity":1}`,
		`{"id":"nullq","amount":300,"quantity":null}`))
	if got, want := e.openIDs(t, alice), []string{"welcome", "one", "nullq"}; !slices.Equal(got, want) {
		t.Fatalf("open = %v, want %v", got, want)
	}
}

// Rule FB-15 FB-16 FB-17 FB-18
func testRepeats(t *testing.T, e *env) {
	first := list(`{"id":"camp-7","quantity":3,"amount":500}`, `{"id":"solo","amount":200}`)
	e.intake(t, alice, first)
	e.mustSpend(t, alice, "camp-7#1")
	e.mustSpend(t, alice, "solo")

	repeats := []struct {
		name  string
		entry string
	}{
		{"same entry again (FB-15 FB-18)", `{"id":"camp-7","quantity":3,"amount":500}`},
		{"spent single grant (FB-16)", `{"id":"solo","amount":200}`},
		{"another amount (FB-17)", `{"id":"camp-7","quantity":3,"amount":900}`},
		{"another quantity", `{"id":"camp-7","quantity":5,"amount":500}`},
		{"quantity dropped", `{"id":"camp-7","amount":500}`},
		{"spent single grant with a quantity", `{"id":"solo","quantity":4,"amount":200}`},
	}
	for _, r := range repeats {
		sum := e.intake(t, alice, list(r.entry))
		if sum.Created != 0 || sum.Repeated != 1 {
			t.Errorf("%s: Summary = %+v, want a no-op repeat", r.name, sum)
		}
	}
	if got, want := e.openIDs(t, alice), []string{"camp-7#2", "camp-7#3"}; !slices.Equal(got, want) {
		t.Fatalf("open = %v, want %v (spent stay spent, nothing new)", got, want)
	}
	for _, g := range mustOpen(t, e, alice) {
		if g.Amount != 500 {
			t.Fatalf("%s amount = %d, want the first amount 500", g.ID, g.Amount)
		}
	}
	if n := e.count(t, "SELECT count(*) FROM freebet_grants"); n != 4 {
		t.Fatalf("grant rows = %d, want 4", n)
	}
}

func mustOpen(t testing.TB, e *env, owner freebets.Owner) []freebets.Grant {
	t.Helper()
	g, err := e.svc.Open(context.Background(), owner)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return g
}

// Rule FB-17: inside one list the first entry with an id prevails.
func testRepeatInOneList(t *testing.T, e *env) {
	sum := e.intake(t, alice, list(`{"id":"x","amount":300}`, `{"id":"x","amount":900,"quantity":4}`))
	if sum.Created != 1 || sum.Repeated != 1 {
		t.Fatalf("Summary = %+v, want 1 created and 1 repeat", sum)
	}
	if g := mustOpen(t, e, alice); len(g) != 1 || g[0].ID != "x" || g[0].Amount != 300 {
		t.Fatalf("open = %+v, want x at 300", g)
	}
}

// Rule FB-13: a discarded entry is not taken, so a later valid entry with its
// id creates the grant.
func testDiscardedIDNotSeen(t *testing.T, e *env) {
	e.intake(t, alice, list(`{"id":"later","amount":5.5}`))
	if sum := e.intake(t, alice, list(`{"id":"later","amount":500}`)); sum.Created != 1 {
		t.Fatalf("Summary = %+v, want the valid entry created", sum)
	}
}

// Rule FB-3 FB-6: one freebet_id always names one grant.
func testRoundIDCollision(t *testing.T, e *env) {
	e.intake(t, alice, list(`{"id":"x#2","amount":300}`))
	sum := e.intake(t, alice, list(`{"id":"x","amount":500,"quantity":3}`))
	if sum.Created != 2 {
		t.Fatalf("Created = %d, want 2 (x#2 exists already)", sum.Created)
	}
	got := map[string]int64{}
	for _, g := range mustOpen(t, e, alice) {
		got[g.ID] = g.Amount
	}
	if want := map[string]int64{"x#1": 500, "x#2": 300, "x#3": 500}; !reflect.DeepEqual(got, want) {
		t.Fatalf("grants = %v, want %v", got, want)
	}
	if sum := e.intake(t, alice, list(`{"id":"x","amount":500,"quantity":3}`)); sum.Created != 0 || sum.Repeated != 1 {
		t.Fatalf("resend: %+v, want a repeat", sum)
	}
}

// Rule AMB-24 FB-3: grants are per operator and player; a grant keeps the
// currency it was taken in, and its id is a repeat in any other currency.
func testOwnersAndCurrencies(t *testing.T, e *env) {
	otherOp := freebets.Owner{Operator: "op-2", PlayerID: alice.PlayerID, Currency: "BRL"}
	usd := freebets.Owner{Operator: alice.Operator, PlayerID: alice.PlayerID, Currency: "USD"}
	e.intake(t, alice, list(`{"id":"g","amount":500}`))
	e.intake(t, bob, list(`{"id":"g","amount":500}`))
	e.intake(t, otherOp, list(`{"id":"g","amount":500}`))
	if sum := e.intake(t, usd, list(`{"id":"g","amount":500}`)); sum.Repeated != 1 || sum.Created != 0 {
		t.Fatalf("same id in another currency: %+v, want a repeat", sum)
	}
	if got := e.openIDs(t, usd); len(got) != 0 {
		t.Fatalf("USD session lists %v, want nothing (the grant is BRL)", got)
	}
	if _, err := e.spend(t.Context(), usd, "g"); !errors.Is(err, freebets.ErrUnavailable) {
		t.Fatalf("spend the BRL grant in USD: %v, want ErrUnavailable", err)
	}
	e.mustSpend(t, alice, "g")
	for _, o := range []freebets.Owner{bob, otherOp} {
		if got := e.openIDs(t, o); !slices.Equal(got, []string{"g"}) {
			t.Fatalf("%+v open = %v, want [g] (alice's spend is hers)", o, got)
		}
	}
	if _, err := e.svc.Intake(t.Context(), freebets.Owner{Operator: "op-1"}, list(`{"id":"g","amount":500}`), brl, true); err == nil {
		t.Fatal("Intake without player and currency: no error")
	}
}

func testOpenByValue(t *testing.T, e *env) {
	e.intake(t, alice, list(`{"id":"a","amount":500,"quantity":2}`, `{"id":"b","amount":200}`, `{"id":"c","amount":500}`))
	e.mustSpend(t, alice, "a#1")
	got, err := e.svc.OpenByValue(t.Context(), alice)
	if err != nil {
		t.Fatal(err)
	}
	want := []freebets.Value{{Amount: 200, Count: 1, OldestID: "b"}, {Amount: 500, Count: 2, OldestID: "a#2"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("OpenByValue = %+v, want %+v", got, want)
	}
}

// Rule FB-21 FB-8 BET-7
func testSpendByID(t *testing.T, e *env) {
	e.intake(t, alice, list(`{"id":"camp-7","quantity":3,"amount":500}`))
	g := e.mustSpend(t, alice, "camp-7#2")
	if g.ID != "camp-7#2" || g.Amount != 500 || g.State != freebets.StateSpent || !g.Spent.Equal(t0) {
		t.Fatalf("Spend = %+v, want camp-7#2 spent at %v for 500", g, t0)
	}
	if got, want := e.openIDs(t, alice), []string{"camp-7#1", "camp-7#3"}; !slices.Equal(got, want) {
		t.Fatalf("open = %v, want %v", got, want)
	}
}

// Rule FB-22
func testSpendSubstitutes(t *testing.T, e *env) {
	e.intake(t, alice, list(`{"id":"old","amount":500}`, `{"id":"cheap","amount":200}`))
	e.intake(t, alice, list(`{"id":"new","amount":500,"quantity":2}`, `{"id":"dear","amount":900}`))
	e.mustSpend(t, alice, "new#2")
	// new#2 is spent: the oldest open grant of exactly 500 is "old".
	g := e.mustSpend(t, alice, "new#2")
	if g.ID != "old" || g.Amount != 500 {
		t.Fatalf("substitute = %+v, want old", g)
	}
	if g = e.mustSpend(t, alice, "old"); g.ID != "new#1" {
		t.Fatalf("second substitute = %s, want new#1", g.ID)
	}
	if _, err := e.spend(t.Context(), alice, "old"); !errors.Is(err, freebets.ErrUnavailable) {
		t.Fatalf("no 500 left: %v, want ErrUnavailable (never another value)", err)
	}
	if got, want := e.openIDs(t, alice), []string{"cheap", "dear"}; !slices.Equal(got, want) {
		t.Fatalf("open = %v, want %v", got, want)
	}
}

// Rule FB-22 FB-21
func testSpendUnavailable(t *testing.T, e *env) {
	e.intake(t, alice, list(`{"id":"only","amount":500}`, `{"id":"other","amount":700}`))
	e.mustSpend(t, alice, "only")
	for _, id := range []string{"only", "never-granted", ""} {
		if _, err := e.spend(t.Context(), alice, id); !errors.Is(err, freebets.ErrUnavailable) {
			t.Errorf("Spend(%q) = %v, want ErrUnavailable", id, err)
		}
	}
	if _, err := e.spend(t.Context(), bob, "other"); !errors.Is(err, freebets.ErrUnavailable) {
		t.Errorf("Spend of another player's grant = %v, want ErrUnavailable", err)
	}
}

// Rule FB-23 FB-24 AMB-18
func testReturnThenSpend(t *testing.T, e *env) {
	e.intake(t, alice, list(`{"id":"camp-7","quantity":3,"amount":500}`))
	g := e.mustSpend(t, alice, "camp-7#1")
	if err := e.giveBack(t.Context(), alice, g.ID); err != nil {
		t.Fatalf("Return: %v", err)
	}
	if got := e.openIDs(t, alice); !slices.Equal(got, []string{"camp-7#1", "camp-7#2", "camp-7#3"}) {
		t.Fatalf("after return open = %v, want camp-7#1 back in its place", got)
	}
	if again := e.mustSpend(t, alice, "camp-7#1"); again.ID != g.ID || again.Seq != g.Seq {
		t.Fatalf("spend after return = %+v, want the same grant %s", again, g.ID)
	}
	// A returned grant is also what a substitution finds first again.
	e.mustSpend(t, alice, "camp-7#2")
	if err := e.giveBack(t.Context(), alice, "camp-7#1"); err != nil {
		t.Fatal(err)
	}
	if sub := e.mustSpend(t, alice, "camp-7#2"); sub.ID != "camp-7#1" {
		t.Fatalf("substitute after return = %s, want camp-7#1 (the oldest)", sub.ID)
	}
}

func testReturnEdges(t *testing.T, e *env) {
	e.intake(t, alice, list(`{"id":"g","amount":500}`))
	if err := e.giveBack(t.Context(), alice, "g"); err != nil {
		t.Fatalf("Return of an open grant: %v, want nil (nothing to do)", err)
	}
	if err := e.giveBack(t.Context(), alice, "nope"); !errors.Is(err, freebets.ErrUnknown) {
		t.Fatalf("Return of an unknown grant: %v, want ErrUnknown", err)
	}
	e.mustSpend(t, alice, "g")
	if err := e.giveBack(t.Context(), bob, "g"); !errors.Is(err, freebets.ErrUnknown) {
		t.Fatalf("Return by another player: %v, want ErrUnknown", err)
	}
	if got := e.openIDs(t, alice); len(got) != 0 {
		t.Fatalf("another player's return reopened %v", got)
	}
}

// The spend belongs to the caller's transaction: rolled back with it.
func testSpendRolledBack(t *testing.T, e *env) {
	e.intake(t, alice, list(`{"id":"g","amount":500}`))
	boom := errors.New("wallet refused")
	err := e.st.InTx(t.Context(), func(ctx context.Context) error {
		if _, err := e.svc.Spend(ctx, alice, "g"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v", err)
	}
	if got := e.openIDs(t, alice); !slices.Equal(got, []string{"g"}) {
		t.Fatalf("open after rolled-back spend = %v, want [g]", got)
	}
}

// Rule FB-21: of 50 concurrent spends of one grant exactly one wins.
func testConcurrentSpends(t *testing.T, e *env) {
	e.intake(t, alice, list(`{"id":"last","amount":500}`, `{"id":"other-value","amount":700}`))
	const n = 50
	var (
		wg          sync.WaitGroup
		mu          sync.Mutex
		wins        []string
		unavailable int
		failures    []error
	)
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			g, err := e.spend(context.Background(), alice, "last")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins = append(wins, g.ID)
			case errors.Is(err, freebets.ErrUnavailable):
				unavailable++
			default:
				failures = append(failures, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("unexpected errors: %v", failures)
	}
	if len(wins) != 1 || wins[0] != "last" || unavailable != n-1 {
		t.Fatalf("wins = %v, unavailable = %d; want exactly one win of last and %d refusals", wins, unavailable, n-1)
	}
	if got := e.openIDs(t, alice); !slices.Equal(got, []string{"other-value"}) {
		t.Fatalf("open = %v, want [other-value]", got)
	}
}

// Rule FB-21 FB-22: bets racing for the last grants of a value each get a
// distinct grant, or are refused once none is left.
func testRaceForLastGrant(t *testing.T, e *env) {
	e.intake(t, alice, list(`{"id":"a","amount":500}`, `{"id":"b","amount":500}`, `{"id":"c","amount":500}`))
	const n = 10
	var (
		wg          sync.WaitGroup
		mu          sync.Mutex
		won         = map[string]int{}
		unavailable int
	)
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			g, err := e.spend(context.Background(), alice, "a")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won[g.ID]++
			case errors.Is(err, freebets.ErrUnavailable):
				unavailable++
			default:
				t.Errorf("Spend: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if want := map[string]int{"a": 1, "b": 1, "c": 1}; !reflect.DeepEqual(won, want) || unavailable != n-3 {
		t.Fatalf("won = %v, unavailable = %d; want each grant once and %d refusals", won, unavailable, n-3)
	}
}

// Rule FB-15 FB-18: concurrent /balance answers with the same list create each
// grant once.
func testConcurrentIntakes(t *testing.T, e *env) {
	entries := list(`{"id":"camp-7","quantity":3,"amount":500}`, `{"id":"w","amount":100}`, `{"id":"z","amount":200,"quantity":2}`)
	reversed := slices.Clone(entries)
	slices.Reverse(reversed)
	var wg sync.WaitGroup
	created := make([]int, 8)
	for i := range created {
		wg.Go(func() {
			in := entries
			if i%2 == 1 {
				in = reversed
			}
			sum, err := e.svc.Intake(context.Background(), alice, in, brl, true)
			if err != nil {
				t.Errorf("Intake: %v", err)
				return
			}
			created[i] = sum.Created
			if sum.Created > 0 && sum.Created+sum.Repeated == 0 {
				t.Errorf("inconsistent summary %+v", sum)
			}
		})
	}
	wg.Wait()
	total := 0
	for _, c := range created {
		total += c
	}
	if total != 6 {
		t.Fatalf("grants created across concurrent intakes = %d, want 6", total)
	}
	if n := e.count(t, "SELECT count(*) FROM freebet_grants"); n != 6 {
		t.Fatalf("grant rows = %d, want 6", n)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	if _, err := freebets.New(nil, freebets.Options{}); err == nil {
		t.Fatal("New(nil) succeeded")
	}
	e := newEnv(t, "sqlite::memory:")
	if _, err := freebets.New(e.st.Freebets(), freebets.Options{Registerer: e.reg}); err == nil {
		t.Fatal("New registered its metrics twice in one registry without an error")
	}
	if _, err := freebets.New(e.st.Freebets(), freebets.Options{}); err != nil {
		t.Fatalf("New without a registerer: %v", err)
	}
}

func TestRoundID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		id       string
		qty, n   int
		expected string
	}{
		// Rule FB-7
		{"camp", 1, 1, "camp"},
		// Rule FB-6
		{"camp", 3, 1, "camp#1"},
		{"camp", 1000, 1000, "camp#1000"},
	}
	for _, tc := range cases {
		if got := freebets.RoundID(tc.id, tc.qty, tc.n); got != tc.expected {
			t.Errorf("RoundID(%q, %d, %d) = %q, want %q", tc.id, tc.qty, tc.n, got, tc.expected)
		}
	}
}

// testRandomSequences: for random sequences of intakes, spends, refusals and
// rollbacks, no grant is ever held by two bets at once, the spent grants are
// exactly those held, and no id family ever has more grants than the quantity
// it was first taken with.
//
// Rule FB-15 FB-16 FB-21 FB-22 FB-23 FB-24
func testRandomSequences(t *testing.T, e *env) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed>>1))
	ctx := context.Background()

	type family struct {
		amount   int64
		quantity int
	}
	firstTaken := map[string]family{} // id -> first valid entry taken
	held := map[string]bool{}         // grant id -> spent by a bet the engine holds
	var allIDs []string

	for step := range 300 {
		switch op := rng.IntN(10); {
		case op < 3: // a /balance answer: random entries, some new, some repeated with other values
			var entries []string
			for range 1 + rng.IntN(4) {
				id := fmt.Sprintf("f%d", rng.IntN(8))
				amount := []int64{200, 500}[rng.IntN(2)]
				q := 1 + rng.IntN(4)
				entries = append(entries, fmt.Sprintf(`{"id":%q,"amount":%d,"quantity":%d}`, id, amount, q))
				if _, ok := firstTaken[id]; !ok {
					firstTaken[id] = family{amount, q}
					for n := 1; n <= q; n++ {
						allIDs = append(allIDs, freebets.RoundID(id, q, n))
					}
				}
			}
			e.intake(t, alice, list(entries...))
		case op < 7: // a bet on a grant the player saw (or an id never granted)
			id := "unknown"
			if len(allIDs) > 0 && rng.IntN(10) > 0 {
				id = allIDs[rng.IntN(len(allIDs))]
			}
			g, err := e.spend(ctx, alice, id)
			switch {
			case errors.Is(err, freebets.ErrUnavailable):
			case err != nil:
				t.Fatalf("step %d: Spend(%s): %v", step, id, err)
			case held[g.ID]:
				t.Fatalf("step %d: Spend(%s) gave %s, already held by another bet: double spend", step, id, g.ID)
			default:
				held[g.ID] = true
			}
		default: // the wallet refuses a freebet bet, or it is rolled back
			if len(held) == 0 {
				continue
			}
			ids := make([]string, 0, len(held))
			for id := range held {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			id := ids[rng.IntN(len(ids))]
			if err := e.giveBack(ctx, alice, id); err != nil {
				t.Fatalf("step %d: Return(%s): %v", step, id, err)
			}
			delete(held, id)
		}

		rows, err := e.st.PlayerFreebetGrants(ctx, alice.Operator, alice.PlayerID)
		if err != nil {
			t.Fatal(err)
		}
		if all := e.count(t, "SELECT count(*) FROM freebet_grants"); all != len(rows) {
			t.Fatalf("step %d: %d grant rows, %d of alice's", step, all, len(rows))
		}
		perFamily := map[string]int{}
		spent := 0
		for _, r := range rows {
			perFamily[r.SourceID]++
			f := firstTaken[r.SourceID]
			if r.Amount != f.amount {
				t.Fatalf("step %d: %s amount %d, want the first amount %d", step, r.GrantID, r.Amount, f.amount)
			}
			if (r.State == "spent") != held[r.GrantID] {
				t.Fatalf("step %d: %s is %s, held by a bet: %t", step, r.GrantID, r.State, held[r.GrantID])
			}
			if r.State == "spent" {
				spent++
			}
		}
		if spent != len(held) {
			t.Fatalf("step %d: %d spent rows, %d held", step, spent, len(held))
		}
		for id, n := range perFamily {
			if n > firstTaken[id].quantity {
				t.Fatalf("step %d: family %s has %d grants, quantity %d", step, id, n, firstTaken[id].quantity)
			}
		}
	}
}

// BenchmarkIntake1000 measures the normal /balance case: the whole list of
// 1,000 entries again, 990 of them known and 10 new.
func BenchmarkIntake1000(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			for _, fresh := range []int{0, 10} {
				b.Run(fmt.Sprintf("new=%d", fresh), func(b *testing.B) {
					e := newEnv(b, be.open(b))
					known := make([]json.RawMessage, 1000-fresh)
					for i := range known {
						known[i] = json.RawMessage(fmt.Sprintf(`{"id":"camp-%d","amount":500,"quantity":%d}`, i, 1+i%3))
					}
					e.intake(b, alice, known)
					entries := slices.Clone(known)
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; b.Loop(); i++ {
						entries = entries[:len(known)]
						for j := range fresh {
							entries = append(entries, json.RawMessage(fmt.Sprintf(`{"id":"new-%d-%d","amount":500}`, i, j)))
						}
						sum := e.intake(b, alice, entries)
						if sum.Created != fresh || sum.Repeated != len(known) {
							b.Fatalf("Summary = %+v", sum)
						}
					}
				})
			}
		})
	}
}

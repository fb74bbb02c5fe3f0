package store_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/store"
)

// sessionCases are the contract cases of sessions, session_controls and the
// reads of a session's bets (sessions.go, session_bets.go).
var sessionCases = []contractCase{
	{"SessionRoundTrip", testSessionRoundTrip},
	{"SessionWithControlsIsAtomic", testSessionControlsAtomic},
	{"SessionBetTotalsAndLiveBets", testSessionBets},
	{"SessionStatesWrittenInOppositeOrders", testSessionStatesRace},
	{"PlayerBalanceWrittenToItsSessions", testPlayerBalance},
	{"PlayerBalancesOfManyPlayers", testPlayerBalances},
}

// testPlayerBalances: a flush of more players' balances than SQLite writes
// in one transaction (two of them and one more) writes every one of them.
func testPlayerBalances(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	const players = 2*64 + 1
	var rows []*store.SessionRecord
	var balances []store.SessionBalance
	for i := range players {
		r := newSession(fmt.Sprint("many-", i))
		r.PlayerID = fmt.Sprint("p-", i)
		if err := s.InsertSession(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
		balances = append(balances, store.SessionBalance{Balance: int64(1000 + i), Operator: r.Operator, PlayerID: r.PlayerID, Currency: r.Currency, At: store.MillisOf(t0)})
	}
	if err := s.WriteSessionStates(ctx, balances, nil); err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if got, err := s.SessionByHash(ctx, r.IDHash); err != nil || got.Balance != int64(1000+i) {
			t.Fatalf("player %d's session = %+v, %v; want its balance %d", i, got, err, 1000+i)
		}
	}
}

// testPlayerBalance: a player's balance (no hash) is written to each of the
// player's sessions in its currency that is not demo and not expired, and to
// no other row; an empty currency matches every currency. A session opened
// after the balance was heard keeps its own (its opening asked the wallet).
func testPlayerBalance(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	of := func(seed, player, currency string, demo bool, expires time.Duration) *store.SessionRecord {
		r := newSession(seed)
		r.PlayerID, r.Currency, r.Demo, r.ExpiresAt = player, currency, demo, store.MillisOf(t0.Add(expires))
		return r
	}
	rows := []*store.SessionRecord{
		of("a-brl-1", "p-a", "BRL", false, time.Hour),
		of("a-brl-2", "p-a", "BRL", false, time.Hour),
		of("a-usd", "p-a", "USD", false, time.Hour),
		of("a-demo", "p-a", "BRL", true, time.Hour),
		of("a-expired", "p-a", "BRL", false, -time.Minute),
		of("b-brl", "p-b", "BRL", false, time.Hour),
		of("a-later", "p-a", "BRL", false, time.Hour),
	}
	rows[6].CreatedAt = store.MillisOf(t0.Add(time.Second))
	for _, r := range rows {
		if err := s.InsertSession(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	balances := func() map[string]int64 {
		out := map[string]int64{}
		for _, r := range rows {
			got, err := s.SessionByHash(ctx, r.IDHash)
			if err != nil {
				t.Fatal(err)
			}
			out[r.Token] = got.Balance
		}
		return out
	}
	at := store.MillisOf(t0)
	if err := s.WriteSessionStates(ctx, []store.SessionBalance{{Balance: 111, Operator: "op-1", PlayerID: "p-a", Currency: "BRL", At: at}}, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"tok-a-brl-1": 111, "tok-a-brl-2": 111, "tok-a-usd": 25_000, "tok-a-demo": 25_000, "tok-a-expired": 25_000, "tok-b-brl": 25_000, "tok-a-later": 25_000}
	if got := balances(); !reflect.DeepEqual(got, want) {
		t.Fatalf("balances after p-a's BRL balance = %v, want %v", got, want)
	}
	// Every currency, with a session's own balance in the same call.
	err := s.WriteSessionStates(ctx, []store.SessionBalance{
		{IDHash: rows[5].IDHash, Balance: 5},
		{Balance: 222, Operator: "op-1", PlayerID: "p-a", At: at},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]int64{"tok-a-brl-1": 222, "tok-a-brl-2": 222, "tok-a-usd": 222, "tok-a-demo": 25_000, "tok-a-expired": 25_000, "tok-b-brl": 5, "tok-a-later": 25_000}
	if got := balances(); !reflect.DeepEqual(got, want) {
		t.Fatalf("balances after p-a's balance in every currency = %v, want %v", got, want)
	}
	// Two balances of one player in one call that both match its BRL
	// sessions: the later one in the call stays, either way round.
	every := store.SessionBalance{Balance: 333, Operator: "op-1", PlayerID: "p-a", At: at}
	brl := store.SessionBalance{Balance: 444, Operator: "op-1", PlayerID: "p-a", Currency: "BRL", At: at}
	if err := s.WriteSessionStates(ctx, []store.SessionBalance{every, brl}, nil); err != nil {
		t.Fatal(err)
	}
	want = map[string]int64{"tok-a-brl-1": 444, "tok-a-brl-2": 444, "tok-a-usd": 333, "tok-a-demo": 25_000, "tok-a-expired": 25_000, "tok-b-brl": 5, "tok-a-later": 25_000}
	if got := balances(); !reflect.DeepEqual(got, want) {
		t.Fatalf("balances after p-a's in every currency then in BRL = %v, want %v", got, want)
	}
	if err := s.WriteSessionStates(ctx, []store.SessionBalance{brl, every}, nil); err != nil {
		t.Fatal(err)
	}
	want = map[string]int64{"tok-a-brl-1": 333, "tok-a-brl-2": 333, "tok-a-usd": 333, "tok-a-demo": 25_000, "tok-a-expired": 25_000, "tok-b-brl": 5, "tok-a-later": 25_000}
	if got := balances(); !reflect.DeepEqual(got, want) {
		t.Fatalf("balances after p-a's in BRL then in every currency = %v, want %v", got, want)
	}
}

func sessionHash(seed string) []byte {
	h := sha256.Sum256([]byte("session " + seed))
	return h[:]
}

func newSession(seed string) *store.SessionRecord {
	return &store.SessionRecord{
		IDHash: sessionHash(seed), Operator: "op-1", GameID: "crash", Token: "tok-" + seed,
		PlayerID: "player-" + seed, PlayerName: "Zé***", Currency: "BRL", Language: "pt", Theme: "dark",
		Demo: false, Mobile: true, LobbyURL: "https://op.example/lobby?a=1&b='x'", DepositURL: "https://op.example/deposit",
		Balance: 25_000, CreatedAt: store.MillisOf(t0), ExpiresAt: store.MillisOf(t0.Add(12 * time.Hour)),
	}
}

// testSessionRoundTrip: insert (with and without controls), read by hash,
// controls, and the display-balance writer's batch.
func testSessionRoundTrip(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	plain, ruled := newSession("plain"), newSession("ruled")
	ruled.Demo, ruled.Token, ruled.PlayerID = true, "", ""
	controls := &store.SessionControlsRecord{
		IDHash: ruled.IDHash, SessionClock: true, RealityCheckMinutes: 10, InactivityMinutes: 30,
		LastActionAt: store.MillisOf(t0),
	}
	if err := s.InsertSession(ctx, plain, nil); err != nil {
		t.Fatalf("InsertSession(plain): %v", err)
	}
	if err := s.InsertSession(ctx, ruled, controls); err != nil {
		t.Fatalf("InsertSession(ruled): %v", err)
	}
	if err := s.InsertSession(ctx, newSession("plain"), nil); err == nil {
		t.Fatal("InsertSession of a stored hash succeeded")
	}

	for _, want := range []*store.SessionRecord{plain, ruled} {
		got, err := s.SessionByHash(ctx, want.IDHash)
		if err != nil {
			t.Fatalf("SessionByHash: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("SessionByHash =\n%+v\nwant\n%+v", got, want)
		}
	}
	if _, err := s.SessionByHash(ctx, sessionHash("nobody")); !errors.Is(err, store.ErrSessionNotFound) {
		t.Fatalf("SessionByHash(unknown) = %v, want ErrSessionNotFound", err)
	}
	if _, err := s.SessionControls(ctx, plain.IDHash); !errors.Is(err, store.ErrSessionControlsNotFound) {
		t.Fatalf("SessionControls(no controls) = %v, want ErrSessionControlsNotFound", err)
	}
	got, err := s.SessionControls(ctx, ruled.IDHash)
	if err != nil || !reflect.DeepEqual(got, controls) {
		t.Fatalf("SessionControls = %+v, %v; want %+v", got, err, controls)
	}

	// The writer's batch: balances of both, the controls' state of one, and a
	// hash with no row, which changes nothing.
	later := &store.SessionControlsRecord{
		IDHash: ruled.IDHash, LastActionAt: store.MillisOf(t0.Add(5 * time.Minute)),
		RealityCheckAckAt: store.MillisOf(t0.Add(4 * time.Minute)),
		// Only the state columns are written: these must not reach the row.
		SessionClock: false, RealityCheckMinutes: 99, InactivityMinutes: 99,
	}
	err = s.WriteSessionStates(ctx,
		[]store.SessionBalance{{IDHash: plain.IDHash, Balance: 1}, {IDHash: ruled.IDHash, Balance: 0}, {IDHash: sessionHash("gone"), Balance: 7}},
		[]*store.SessionControlsRecord{later})
	if err != nil {
		t.Fatalf("WriteSessionStates: %v", err)
	}
	if got, _ := s.SessionByHash(ctx, plain.IDHash); got == nil || got.Balance != 1 {
		t.Fatalf("plain balance after the batch = %+v, want 1", got)
	}
	if got, _ := s.SessionByHash(ctx, ruled.IDHash); got == nil || got.Balance != 0 {
		t.Fatalf("ruled balance after the batch = %+v, want 0", got)
	}
	want := *controls
	want.LastActionAt, want.RealityCheckAckAt = later.LastActionAt, later.RealityCheckAckAt
	if got, err := s.SessionControls(ctx, ruled.IDHash); err != nil || !reflect.DeepEqual(got, &want) {
		t.Fatalf("controls after the batch = %+v, %v; want %+v", got, err, &want)
	}
	if n := countRows(t, s, "SELECT count(*) FROM sessions"); n != 2 {
		t.Fatalf("sessions rows = %d, want 2 (a write of an unknown hash creates nothing)", n)
	}

	// The batch is all or none: a balance the schema refuses (negative) rolls
	// back the other rows of the batch.
	err = s.WriteSessionStates(ctx, []store.SessionBalance{{IDHash: plain.IDHash, Balance: 500}, {IDHash: ruled.IDHash, Balance: -1}}, nil)
	if err == nil {
		t.Fatal("WriteSessionStates of a negative balance succeeded")
	}
	if got, _ := s.SessionByHash(ctx, plain.IDHash); got == nil || got.Balance != 1 {
		t.Fatalf("plain balance after a failed batch = %+v, want 1 (rolled back)", got)
	}
	if err := s.WriteSessionStates(ctx, nil, nil); err != nil {
		t.Fatalf("WriteSessionStates(nothing): %v", err)
	}
}

// testSessionControlsAtomic: a session and its controls are stored both or
// neither.
func testSessionControlsAtomic(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	rec := newSession("atomic")
	bad := &store.SessionControlsRecord{IDHash: rec.IDHash, RealityCheckMinutes: 5000, LastActionAt: store.MillisOf(t0)} // beyond the CHECK
	err := s.InsertSession(ctx, rec, bad)
	if err == nil {
		t.Fatal("InsertSession with refused controls succeeded")
	}
	if strings.Contains(err.Error(), rec.Token) {
		t.Fatalf("error carries the token: %v", err)
	}
	if _, err := s.SessionByHash(ctx, rec.IDHash); !errors.Is(err, store.ErrSessionNotFound) {
		t.Fatalf("session after a refused controls row: %v, want ErrSessionNotFound (rolled back)", err)
	}
}

// testSessionBets: the sums a session's net position is made of, and whether it
// has bets in given states.
func testSessionBets(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mine, other := sessionHash("mine"), sessionHash("other")
	if _, err := s.ExecForTest(ctx, "INSERT INTO rounds (id, game_id, seq, hash, crash_point, status, betting_ends_at, created_at)"+
		" VALUES ('r1', 'crash', 1, 'h', 250, 'finished', 1, 1)"); err != nil {
		t.Fatal(err)
	}
	bets := []struct {
		id      string
		session []byte
		amount  int64
		freebet string
		status  string
		payout  int64 // 0: NULL
	}{
		{"b1", mine, 1000, "", "cashed_out", 1250},
		{"b2", mine, 500, "", "lost", 0},
		{"b3", mine, 300, "", "accepted", 0},
		{"b4", mine, 200, "fb-1", "cashed_out", 400},
		{"b5", mine, 700, "", "refused", 0},
		{"b6", mine, 800, "", "cancelled", 0},
		{"b7", mine, 900, "", "void", 0},
		{"b8", mine, 100, "fb-2", "lost", 0},
		{"b9", mine, 150, "", "cashed_out", 150},
		{"b10", other, 5000, "", "pending", 0},
	}
	for _, b := range bets {
		var freebet, payout any
		if b.freebet != "" {
			freebet = b.freebet
		}
		if b.payout != 0 {
			payout = b.payout
		}
		if _, err := s.ExecForTest(ctx, "INSERT INTO bets (id, round_id, game_id, session_hash, operator, currency, amount, freebet_id, status, payout, placed_at)"+
			" VALUES (?, 'r1', 'crash', ?, 'op-1', 'BRL', ?, ?, ?, ?, 1)", b.id, b.session, b.amount, freebet, b.status, payout); err != nil {
			t.Fatalf("insert bet %s: %v", b.id, err)
		}
	}

	got, err := s.SessionBetTotals(ctx, mine)
	if err != nil {
		t.Fatalf("SessionBetTotals: %v", err)
	}
	sortTotals := func(ts []store.SessionBetTotal) {
		slices.SortFunc(ts, func(a, b store.SessionBetTotal) int {
			if c := strings.Compare(a.Status, b.Status); c != 0 {
				return c
			}
			switch {
			case a.Freebet == b.Freebet:
				return 0
			case b.Freebet:
				return -1
			}
			return 1
		})
	}
	want := []store.SessionBetTotal{
		{Status: "accepted", Count: 1, Amount: 300},
		{Status: "cancelled", Count: 1, Amount: 800},
		{Status: "cashed_out", Count: 2, Amount: 1150, Payout: 1400},
		{Status: "cashed_out", Freebet: true, Count: 1, Amount: 200, Payout: 400},
		{Status: "lost", Count: 1, Amount: 500},
		{Status: "lost", Freebet: true, Count: 1, Amount: 100},
		{Status: "refused", Count: 1, Amount: 700},
		{Status: "void", Count: 1, Amount: 900},
	}
	sortTotals(got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SessionBetTotals =\n%+v\nwant\n%+v", got, want)
	}
	if got, err := s.SessionBetTotals(ctx, sessionHash("none")); err != nil || len(got) != 0 {
		t.Fatalf("SessionBetTotals(no bets) = %+v, %v; want none", got, err)
	}

	for _, tc := range []struct {
		hash     []byte
		statuses []string
		want     bool
	}{
		{mine, []string{"pending", "accepted"}, true},
		{mine, []string{"pending"}, false},
		{other, []string{"pending", "accepted"}, true},
		{other, []string{"accepted"}, false},
		{sessionHash("none"), []string{"pending", "accepted"}, false},
		{mine, nil, false},
	} {
		if got, err := s.SessionHasBets(ctx, tc.hash, tc.statuses...); err != nil || got != tc.want {
			t.Errorf("SessionHasBets(%v) = %t, %v; want %t", tc.statuses, got, err, tc.want)
		}
	}
}

// testSessionStatesRace: writers of overlapping batches of display balances,
// each in its own order (the replicas of a cluster), all commit: none is
// chosen as a deadlock's victim. Each batch holds sessions' own balances and
// their players' (whose two sessions each a players' flush locks in one
// transaction since 29 November).
func testSessionStatesRace(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	const n = 40
	var forward []store.SessionBalance
	var controls []*store.SessionControlsRecord
	for i := range n {
		rec := newSession(fmt.Sprintf("race-%02d", i))
		c := &store.SessionControlsRecord{IDHash: rec.IDHash, SessionClock: true, LastActionAt: store.MillisOf(t0)}
		if err := s.InsertSession(ctx, rec, c); err != nil {
			t.Fatal(err)
		}
		// A second session of the same player: a player's balance locks
		// both, wherever their hashes fall among the others'.
		second := newSession(fmt.Sprintf("race-second-%02d", i))
		second.PlayerID = rec.PlayerID
		if err := s.InsertSession(ctx, second, nil); err != nil {
			t.Fatal(err)
		}
		forward = append(forward, store.SessionBalance{IDHash: rec.IDHash, Balance: int64(i)},
			store.SessionBalance{Balance: int64(1000 + i), Operator: rec.Operator, PlayerID: rec.PlayerID, Currency: rec.Currency, At: store.MillisOf(t0)})
		controls = append(controls, c)
	}
	for round := range 5 {
		errs := race(8, func(i int) error {
			b, c := slices.Clone(forward), slices.Clone(controls)
			if i%2 == 1 {
				slices.Reverse(b)
				slices.Reverse(c)
			}
			return s.WriteSessionStates(ctx, b, c)
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, writer %d: %v", round, i, err)
			}
		}
	}
}

package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
)

// backend opens a fresh store of one dialect for one test.
type backend struct {
	name string
	// open returns a new empty database and its DSN (to open it a second time).
	open func(t testing.TB) (dsn string)
	// migrated returns a new database that already holds every migration and
	// no row: on SQLite a copy of a template migrated once per test binary
	// (storetest), since under -race each run of the migrations costs about
	// 1.3 s of CPU. The cases that test the migrations themselves use open.
	migrated func(t testing.TB) (dsn string)
}

var backends = []backend{
	{name: "sqlite", open: func(t testing.TB) string {
		return "sqlite://" + filepath.Join(t.TempDir(), "sub", "dir", "crashgame.db")
	}, migrated: storetest.SQLite},
	{name: "postgres", open: pgtest.Start, migrated: pgtest.Start},
}

// TestRepositoryContract runs the one repository contract suite against every
// backend: what passes on SQLite must pass on PostgreSQL and the reverse.
func TestRepositoryContract(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			suite(t, b)
		})
	}
}

// contractCase is one case of the repository contract: it runs on a fresh,
// migrated database of each backend.
type contractCase = struct {
	name string
	run  func(t *testing.T, s *store.Store, dsn string)
}

// suite is the repository contract. Each case gets its own database.
func suite(t *testing.T, b backend) {
	cases := []contractCase{
		{"MigrateTwiceIsNoOp", testMigrateTwice},
		{"MigrateConcurrently", testMigrateConcurrently},
		{"InsertAndRedeem", testInsertAndRedeem},
		{"SecondRedeemIsUsed", testSecondRedeem},
		{"ExpiryBoundary", testExpiryBoundary},
		{"UsedWinsOverExpired", testUsedThenExpired},
		{"UnknownTicket", testUnknown},
		{"ConcurrentRedeemOneWins", testConcurrentRedeem},
		{"InsertRefusesDuplicatesAndBadRecords", testInsertRefuses},
		{"ConcurrentInsertsGroupCommitted", testConcurrentInserts},
		{"DeleteExpiredTickets", testDeleteExpired},
		{"TicketControlsRoundTrip", testTicketControls},
		{"Ping", testPing},
	}
	for _, tc := range slices.Concat(cases, roundAndBetCases, chainCases, redeliveryCases, retentionCases, movementCases, freebetCases, sessionCases, leaseCases, launchControlCases, commitRevealCases) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dsn := b.migrated(t)
			if strings.Contains(tc.name, "Migrat") { // from an empty database
				dsn = b.open(t)
			}
			s := openMigrated(t, dsn)
			if got := s.Dialect(); got != b.name {
				t.Fatalf("Dialect() = %q, want %q", got, b.name)
			}
			tc.run(t, s, dsn)
		})
	}
}

func openMigrated(t *testing.T, dsn string) *store.Store {
	t.Helper()
	ctx := t.Context()
	s, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newTicket returns a record for a ticket issued at t0, valid 15 minutes.
func newTicket(seed string) *store.TicketRecord {
	h := sha256.Sum256([]byte(seed))
	return &store.TicketRecord{
		Hash:       h[:],
		Operator:   "op-1",
		GameID:     "crash",
		Token:      "tok-" + seed + "-0123456789abcdef",
		PlayerID:   "player-" + seed,
		Currency:   "BRL",
		Language:   "pt",
		PlayerName: "Zé Çãö 🚀",
		Theme:      "dark",
		Demo:       false,
		Mobile:     true,
		LobbyURL:   "https://op.example/lobby?a=1&b='x'",
		DepositURL: "https://op.example/deposit",
		CreatedAt:  store.MillisOf(t0),
		ExpiresAt:  store.MillisOf(t0.Add(15 * time.Minute)),
	}
}

func insert(t *testing.T, s *store.Store, rec *store.TicketRecord) {
	t.Helper()
	if err := s.InsertTicket(t.Context(), rec); err != nil {
		t.Fatalf("InsertTicket: %v", err)
	}
}

func countRows(t *testing.T, s *store.Store, query string) int {
	t.Helper()
	var n int
	if err := s.QueryRowForTest(t.Context(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func testMigrateTwice(t *testing.T, s *store.Store, _ string) {
	before := countRows(t, s, "SELECT count(*) FROM bun_migrations")
	if before == 0 {
		t.Fatal("no migration recorded after Migrate")
	}
	insert(t, s, newTicket("keep"))
	for range 2 {
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatalf("Migrate again: %v", err)
		}
	}
	if after := countRows(t, s, "SELECT count(*) FROM bun_migrations"); after != before {
		t.Fatalf("bun_migrations rows = %d after migrating again, want %d", after, before)
	}
	if n := countRows(t, s, "SELECT count(*) FROM tickets"); n != 1 {
		t.Fatalf("tickets rows = %d after migrating again, want 1 (data kept)", n)
	}
	if n := countRows(t, s, "SELECT count(*) FROM bun_migration_locks"); n != 0 {
		t.Fatalf("bun_migration_locks rows = %d, want 0 (lock released)", n)
	}
}

// testMigrateConcurrently: several processes (here: stores) starting at once
// on one database all succeed, and the migrations are applied once.
func testMigrateConcurrently(t *testing.T, s *store.Store, dsn string) {
	// s is already migrated; drop everything to start from an empty schema.
	for _, q := range []string{"DROP TABLE tickets", "DROP TABLE bun_migrations", "DROP TABLE bun_migration_locks"} {
		if _, err := s.ExecForTest(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const n = 4
	stores := make([]*store.Store, n)
	for i := range stores {
		var err error
		if stores[i], err = store.Open(t.Context(), dsn); err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		t.Cleanup(func() { _ = stores[i].Close() })
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, st := range stores {
		wg.Go(func() { errs[i] = st.Migrate(t.Context()) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Migrate: %v", err)
	}
	ups, err := filepath.Glob(filepath.Join("migrations", s.Dialect(), "*.up.sql"))
	if err != nil || len(ups) == 0 {
		t.Fatalf("no migrations found for %s: %v", s.Dialect(), err)
	}
	if got := countRows(t, s, "SELECT count(*) FROM bun_migrations"); got != len(ups) {
		t.Fatalf("bun_migrations rows = %d, want %d (each migration applied once)", got, len(ups))
	}
	insert(t, s, newTicket("after-concurrent-migrate"))
}

func testInsertAndRedeem(t *testing.T, s *store.Store, _ string) {
	want := newTicket("roundtrip")
	insert(t, s, want)
	now := t0.Add(90*time.Second + 123456789*time.Nanosecond) // sub-millisecond part is dropped
	got, err := s.RedeemTicket(t.Context(), want.Hash, now)
	if err != nil {
		t.Fatalf("RedeemTicket: %v", err)
	}
	want.UsedAt = store.MillisOf(now)
	if !bytes.Equal(got.Hash, want.Hash) {
		t.Fatalf("Hash = %x, want %x", got.Hash, want.Hash)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("redeemed record\n got %+v\nwant %+v", *got, *want)
	}
	if u := got.UsedAt.Time(); !u.Equal(now.Truncate(time.Millisecond)) || u.Location() != time.UTC {
		t.Fatalf("UsedAt.Time() = %v, want %v in UTC", u, now.Truncate(time.Millisecond))
	}
}

// testTicketControls: the responsible gambling controls a ticket carries come
// back on redemption, in a group commit with tickets without any, and leave
// with their ticket's expiry.
func testTicketControls(t *testing.T, s *store.Store, _ string) {
	on := newTicket("with-controls")
	on.Controls = store.TicketControls{SessionClock: true, RealityCheckMinutes: 60, InactivityMinutes: 30}
	off := newTicket("without-controls")
	var wg sync.WaitGroup
	for _, rec := range []*store.TicketRecord{on, off} {
		wg.Go(func() { insert(t, s, rec) })
	}
	wg.Wait()
	for _, tc := range []struct {
		rec  *store.TicketRecord
		want store.TicketControls
	}{
		{on, store.TicketControls{Hash: on.Hash, SessionClock: true, RealityCheckMinutes: 60, InactivityMinutes: 30, ExpiresAt: on.ExpiresAt}},
		{off, store.TicketControls{}},
	} {
		got, err := s.RedeemTicket(t.Context(), tc.rec.Hash, t0.Add(time.Minute))
		if err != nil {
			t.Fatalf("RedeemTicket: %v", err)
		}
		if !reflect.DeepEqual(got.Controls, tc.want) {
			t.Fatalf("controls = %+v, want %+v", got.Controls, tc.want)
		}
	}
	if _, err := s.DeleteExpiredTickets(t.Context(), on.ExpiresAt.Time().Add(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "SELECT count(*) FROM ticket_controls"); n != 0 {
		t.Fatalf("ticket_controls rows = %d after the ticket expired, want 0", n)
	}
}

// Rule TKT-5
func testSecondRedeem(t *testing.T, s *store.Store, _ string) {
	rec := newTicket("twice")
	insert(t, s, rec)
	if _, err := s.RedeemTicket(t.Context(), rec.Hash, t0.Add(time.Minute)); err != nil {
		t.Fatalf("first RedeemTicket: %v", err)
	}
	for _, at := range []time.Duration{time.Minute, 2 * time.Minute} {
		if _, err := s.RedeemTicket(t.Context(), rec.Hash, t0.Add(at)); !errors.Is(err, store.ErrTicketUsed) {
			t.Fatalf("second RedeemTicket at +%s: err = %v, want ErrTicketUsed", at, err)
		}
	}
}

// testExpiryBoundary: valid while now < expires_at; expired at expires_at.
//
// Rule LIM-3
func testExpiryBoundary(t *testing.T, s *store.Store, _ string) {
	cases := []struct {
		name string
		at   time.Duration
		want error
	}{
		{"one ms before expiry", 15*time.Minute - time.Millisecond, nil},
		{"at expiry", 15 * time.Minute, store.ErrTicketExpired},
		{"after expiry", time.Hour, store.ErrTicketExpired},
	}
	for i, tc := range cases {
		rec := newTicket(fmt.Sprint("expiry-", i))
		insert(t, s, rec)
		_, err := s.RedeemTicket(t.Context(), rec.Hash, t0.Add(tc.at))
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func testUsedThenExpired(t *testing.T, s *store.Store, _ string) {
	rec := newTicket("used-then-expired")
	insert(t, s, rec)
	if _, err := s.RedeemTicket(t.Context(), rec.Hash, t0.Add(time.Minute)); err != nil {
		t.Fatalf("RedeemTicket: %v", err)
	}
	if _, err := s.RedeemTicket(t.Context(), rec.Hash, t0.Add(time.Hour)); !errors.Is(err, store.ErrTicketUsed) {
		t.Fatalf("RedeemTicket after expiry of a used ticket: err = %v, want ErrTicketUsed", err)
	}
}

func testUnknown(t *testing.T, s *store.Store, _ string) {
	insert(t, s, newTicket("known"))
	h := sha256.Sum256([]byte("unknown"))
	if _, err := s.RedeemTicket(t.Context(), h[:], t0); !errors.Is(err, store.ErrTicketNotFound) {
		t.Fatalf("RedeemTicket(unknown): err = %v, want ErrTicketNotFound", err)
	}
}

// testConcurrentRedeem: of 50 concurrent redemptions of one ticket exactly one
// wins and 49 see ErrTicketUsed.
//
// Rule TKT-5
func testConcurrentRedeem(t *testing.T, s *store.Store, _ string) {
	rec := newTicket("race")
	insert(t, s, rec)
	const n = 50
	var (
		wins, used atomic.Int32
		wg         sync.WaitGroup
		start      = make(chan struct{})
		errs       = make(chan error, n)
	)
	for range n {
		wg.Go(func() {
			<-start
			got, err := s.RedeemTicket(context.Background(), rec.Hash, t0.Add(time.Minute))
			switch {
			case err == nil && bytes.Equal(got.Hash, rec.Hash):
				wins.Add(1)
			case errors.Is(err, store.ErrTicketUsed):
				used.Add(1)
			default:
				errs <- fmt.Errorf("got %v, %v", got, err)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("unexpected redemption result: %v", err)
	}
	if wins.Load() != 1 || used.Load() != n-1 {
		t.Fatalf("wins = %d, used = %d; want 1 and %d", wins.Load(), used.Load(), n-1)
	}
}

func testInsertRefuses(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	rec := newTicket("dup")
	insert(t, s, rec)
	if err := s.InsertTicket(ctx, newTicket("dup")); err == nil {
		t.Fatal("InsertTicket with a stored hash: err = nil, want an error")
	}
	bad := []struct {
		name   string
		mutate func(*store.TicketRecord)
	}{
		{"short hash", func(r *store.TicketRecord) { r.Hash = r.Hash[:16] }},
		{"no created_at", func(r *store.TicketRecord) { r.CreatedAt = 0 }},
		{"expires before created", func(r *store.TicketRecord) { r.ExpiresAt = r.CreatedAt }},
		{"already used", func(r *store.TicketRecord) { r.UsedAt = r.CreatedAt }},
	}
	for _, tc := range bad {
		r := newTicket("bad-" + tc.name)
		tc.mutate(r)
		if err := s.InsertTicket(ctx, r); err == nil {
			t.Errorf("InsertTicket(%s): err = nil, want an error", tc.name)
		}
	}
	if n := countRows(t, s, "SELECT count(*) FROM tickets"); n != 1 {
		t.Fatalf("tickets rows = %d, want 1", n)
	}
}

func testDeleteExpired(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	for i, created := range []time.Duration{0, time.Minute, 2 * time.Minute} {
		rec := newTicket(fmt.Sprint("housekeeping-", i))
		rec.CreatedAt = store.MillisOf(t0.Add(created))
		rec.ExpiresAt = store.MillisOf(t0.Add(created + 15*time.Minute))
		insert(t, s, rec)
		if i == 0 { // used tickets are deleted too
			if _, err := s.RedeemTicket(ctx, rec.Hash, t0.Add(time.Second)); err != nil {
				t.Fatalf("RedeemTicket: %v", err)
			}
		}
	}
	cases := []struct {
		before time.Time
		want   int64
	}{
		{t0.Add(15 * time.Minute), 0},                  // the first expires exactly then: not before
		{t0.Add(16 * time.Minute), 1},                  // the first only
		{t0.Add(16 * time.Minute), 0},                  // again: nothing left to delete
		{t0.Add(17*time.Minute + time.Millisecond), 2}, // the other two
	}
	for _, tc := range cases {
		n, err := s.DeleteExpiredTickets(ctx, tc.before)
		if err != nil {
			t.Fatalf("DeleteExpiredTickets(%v): %v", tc.before, err)
		}
		if n != tc.want {
			t.Fatalf("DeleteExpiredTickets(%v) = %d, want %d", tc.before, n, tc.want)
		}
	}
	first := newTicket("housekeeping-0")
	if _, err := s.RedeemTicket(ctx, first.Hash, t0); !errors.Is(err, store.ErrTicketNotFound) {
		t.Fatalf("RedeemTicket(deleted): err = %v, want ErrTicketNotFound", err)
	}
}

func testPing(t *testing.T, s *store.Store, _ string) {
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

// testConcurrentInserts: inserts made at once share commits; a duplicate among
// them fails alone, every other ticket is stored, and Close refuses the next.
func testConcurrentInserts(t *testing.T, s *store.Store, _ string) {
	const n = 200
	insert(t, s, newTicket("taken"))
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			seed := fmt.Sprintf("concurrent-%d", i)
			if i == n/2 {
				seed = "taken"
			}
			errs[i] = s.InsertTicket(t.Context(), newTicket(seed))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (err != nil) != (i == n/2) {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	for i := range n {
		if i == n/2 {
			continue
		}
		if _, err := s.RedeemTicket(t.Context(), newTicket(fmt.Sprintf("concurrent-%d", i)).Hash, t0.Add(time.Minute)); err != nil {
			t.Fatalf("ticket %d not stored: %v", i, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertTicket(t.Context(), newTicket("after-close")); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("insert after Close: %v", err)
	}
}

package tickets_test

import (
	"bytes"
	"context"
	"crypto/sha256"

	"encoding/base64"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
	"github.com/crashstudio/crashgame/internal/tickets"
)

// clock is an injectable, settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newStore returns a migrated SQLite store in a temp file.
func newStore(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), storetest.SQLite(t))
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

func newService(t *testing.T) (*tickets.Service, *store.Store, *clock) {
	t.Helper()
	s := newStore(t)
	c := newClock()
	return tickets.New(s.Tickets(), c.Now), s, c
}

var session = tickets.Session{
	Operator:   "op-1",
	GameID:     "crash",
	Token:      "operator-token-0123456789",
	PlayerID:   "player-42",
	Currency:   "BRL",
	Language:   "pt",
	PlayerName: "João Silva",
	Theme:      "dark",
	Mobile:     true,
	LobbyURL:   "https://op.example/lobby",
	DepositURL: "https://op.example/deposit",
}

func issue(t *testing.T, svc *tickets.Service, sess tickets.Session) string {
	t.Helper()
	raw, err := svc.Issue(t.Context(), sess)
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	return raw
}

// Rule TKT-2 TKT-4
func TestIssueAndRedeem(t *testing.T) {
	t.Parallel()
	demo := tickets.Session{Operator: "op-1", GameID: "crash", Demo: true, Language: "en"}
	for _, tc := range []struct {
		name string
		sess tickets.Session
	}{
		{"real money", session},
		{"demo without token or player", demo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, _, _ := newService(t)
			raw := issue(t, svc, tc.sess)
			if !tickets.IsTicket(raw) {
				t.Fatalf("IsTicket(%q) = false for an issued ticket", raw)
			}
			got, err := svc.Redeem(t.Context(), raw)
			if err != nil {
				t.Fatalf("Redeem: %v", err)
			}
			if got != tc.sess {
				t.Fatalf("Redeem returned\n %+v\nwant\n %+v", got, tc.sess)
			}
		})
	}
}

// Rule TKT-5 LIM-3
func TestSingleUse(t *testing.T) {
	t.Parallel()
	svc, _, c := newService(t)
	raw := issue(t, svc, session)
	if _, err := svc.Redeem(t.Context(), raw); err != nil {
		t.Fatalf("first Redeem: %v", err)
	}
	for _, later := range []time.Duration{0, time.Minute, time.Hour} { // used stays used, even past expiry
		c.Advance(later)
		if _, err := svc.Redeem(t.Context(), raw); !errors.Is(err, tickets.ErrUsed) {
			t.Fatalf("Redeem again after %s: err = %v, want ErrUsed", later, err)
		}
	}
}

// Rule TKT-5
func TestConcurrentRedeemOneWins(t *testing.T) {
	t.Parallel()
	svc, _, _ := newService(t)
	raw := issue(t, svc, session)
	const n = 50
	var (
		wins, used atomic.Int32
		wg         sync.WaitGroup
		start      = make(chan struct{})
		other      = make(chan error, n)
	)
	for range n {
		wg.Go(func() {
			<-start
			sess, err := svc.Redeem(context.Background(), raw)
			switch {
			case err == nil && sess == session:
				wins.Add(1)
			case errors.Is(err, tickets.ErrUsed):
				used.Add(1)
			default:
				other <- fmt.Errorf("session %+v, err %v", sess, err)
			}
		})
	}
	close(start)
	wg.Wait()
	close(other)
	for err := range other {
		t.Errorf("unexpected Redeem result: %v", err)
	}
	if wins.Load() != 1 || used.Load() != n-1 {
		t.Fatalf("wins = %d, ErrUsed = %d; want 1 and %d", wins.Load(), used.Load(), n-1)
	}
}

// Expiry is exclusive: a ticket issued at T opens while now < T+15m, so
// 14:59 (and 14:59.999) open and 15:00.000 is expired.
//
// Rule LIM-3 TKT-4
func TestExpiryAtFifteenMinutes(t *testing.T) {
	t.Parallel()
	if tickets.TTL != 15*time.Minute {
		t.Fatalf("TTL = %s, want 15m", tickets.TTL)
	}
	cases := []struct {
		after time.Duration
		want  error
	}{
		{0, nil},
		{14*time.Minute + 59*time.Second, nil},
		{15*time.Minute - time.Millisecond, nil},
		{15 * time.Minute, tickets.ErrExpired},
		{15*time.Minute + time.Millisecond, tickets.ErrExpired},
		{24 * time.Hour, tickets.ErrExpired},
	}
	for _, tc := range cases {
		t.Run(tc.after.String(), func(t *testing.T) {
			t.Parallel()
			svc, _, c := newService(t)
			raw := issue(t, svc, session)
			c.Advance(tc.after)
			if _, err := svc.Redeem(t.Context(), raw); !errors.Is(err, tc.want) {
				t.Fatalf("Redeem %s after issue: err = %v, want %v", tc.after, err, tc.want)
			}
		})
	}
}

// Rule TKT-2 TKT-3
func TestTicketsAreRandomAndCarryNothing(t *testing.T) {
	t.Parallel()
	svc, _, _ := newService(t)
	const n = 500
	seen := make(map[string]bool, n)
	ones := 0
	for range n {
		raw := issue(t, svc, session) // the same session every time
		if seen[raw] {
			t.Fatalf("ticket %q issued twice", raw)
		}
		seen[raw] = true
		if !strings.HasPrefix(raw, tickets.Prefix) || len(raw) != len(tickets.Prefix)+43 {
			t.Fatalf("ticket %q: want %q + 43 base64url characters", raw, tickets.Prefix)
		}
		if strings.Contains(raw, session.Token) || strings.Contains(raw, session.PlayerID) {
			t.Fatalf("ticket %q carries the token or the player id", raw)
		}
		body, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(raw, tickets.Prefix))
		if err != nil || len(body) != 32 {
			t.Fatalf("ticket %q: body is not 32 bytes of base64url: %v", raw, err)
		}
		for _, b := range body {
			ones += bits.OnesCount8(b)
		}
	}
	// 128,000 random bits: the share of ones is 0.5 +- 0.0014 (1 sigma).
	if share := float64(ones) / (n * 256); share < 0.49 || share > 0.51 {
		t.Fatalf("share of one bits = %.4f, want about 0.5", share)
	}
}

// The database holds the ticket's SHA-256 only: neither the raw ticket, nor
// its base64 body, nor the 32 random bytes appear in any column.
func TestRawTicketNeverStored(t *testing.T) {
	t.Parallel()
	svc, st, _ := newService(t)
	raw := issue(t, svc, session)
	body := strings.TrimPrefix(raw, tickets.Prefix)
	secret, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		t.Fatal(err)
	}

	ctx := t.Context()
	var nrows int
	if err := st.QueryRowForTest(ctx, "SELECT count(*) FROM tickets").Scan(&nrows); err != nil {
		t.Fatalf("count: %v", err)
	}
	if nrows != 1 {
		t.Fatalf("tickets rows = %d, want 1", nrows)
	}
	// Every column, whatever the schema holds today (SQLite's catalogue).
	var ncols int
	if err := st.QueryRowForTest(ctx, "SELECT count(*) FROM pragma_table_info('tickets')").Scan(&ncols); err != nil {
		t.Fatalf("columns: %v", err)
	}
	cols := make([]string, ncols)
	for i := range cols {
		if err := st.QueryRowForTest(ctx, "SELECT name FROM pragma_table_info('tickets') ORDER BY cid LIMIT 1 OFFSET ?", i).Scan(&cols[i]); err != nil {
			t.Fatalf("column %d: %v", i, err)
		}
	}
	if ncols == 0 || !slices.Contains(cols, "hash") {
		t.Fatalf("tickets columns = %v, want hash among them", cols)
	}
	vals := make([][]byte, ncols)
	ptrs := make([]any, ncols)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := st.QueryRowForTest(ctx, "SELECT * FROM tickets").Scan(ptrs...); err != nil {
		t.Fatalf("select: %v", err)
	}
	for i, v := range vals {
		for _, needle := range [][]byte{[]byte(raw), []byte(body), secret} {
			if bytes.Contains(v, needle) {
				t.Errorf("column %s holds the raw ticket (or its secret)", cols[i])
			}
		}
		if cols[i] == "hash" {
			want := sha256.Sum256([]byte(raw))
			if !bytes.Equal(v, want[:]) {
				t.Errorf("hash column = %x, want SHA-256 of the ticket %x", v, want)
			}
		}
	}
}

func TestRedeemUnknownAndMalformed(t *testing.T) {
	t.Parallel()
	repo := &countingRepo{}
	svc := tickets.New(repo, nil)
	valid := tickets.Prefix + base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	for _, raw := range []string{"", "tk_", "legacy-operator-token-123456", valid[:len(valid)-1], valid + "A"} {
		if _, err := svc.Redeem(t.Context(), raw); !errors.Is(err, tickets.ErrUnknown) {
			t.Errorf("Redeem(%q): err = %v, want ErrUnknown", raw, err)
		}
	}
	if n := repo.redeems.Load(); n != 0 {
		t.Fatalf("malformed tickets reached the repository %d times, want 0", n)
	}

	// Well formed, never issued.
	real, _, _ := newService(t)
	if _, err := real.Redeem(t.Context(), valid); !errors.Is(err, tickets.ErrUnknown) {
		t.Fatalf("Redeem(never issued): err = %v, want ErrUnknown", err)
	}
}

func TestIsTicket(t *testing.T) {
	t.Parallel()
	zero := base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	cases := []struct {
		name string
		s    string
		want bool
	}{
		{"valid", tickets.Prefix + zero, true},
		{"valid url alphabet", tickets.Prefix + strings.Repeat("-_", 21) + "A", true},
		{"no prefix", zero, false},
		{"other prefix", "TK_" + zero, false},
		{"legacy token", "a1b2c3d4e5f6g7h8i9j0", false},
		{"empty", "", false},
		{"prefix only", tickets.Prefix, false},
		{"31 bytes", tickets.Prefix + base64.RawURLEncoding.EncodeToString(make([]byte, 31)), false},
		{"33 bytes", tickets.Prefix + base64.RawURLEncoding.EncodeToString(make([]byte, 33)), false},
		{"padded", tickets.Prefix + base64.URLEncoding.EncodeToString(make([]byte, 32)), false},
		{"std alphabet", tickets.Prefix + strings.Repeat("+/", 21) + "A", false},
		{"non-canonical last char", tickets.Prefix + zero[:42] + "B", false},
		{"space", tickets.Prefix + zero[:42] + " ", false},
	}
	for _, tc := range cases {
		if got := tickets.IsTicket(tc.s); got != tc.want {
			t.Errorf("%s: IsTicket(%q) = %v, want %v", tc.name, tc.s, got, tc.want)
		}
	}
}

func TestIssueRefusesIncompleteSession(t *testing.T) {
	t.Parallel()
	repo := &countingRepo{}
	svc := tickets.New(repo, nil)
	cases := []struct {
		name   string
		mutate func(*tickets.Session)
	}{
		{"no operator", func(s *tickets.Session) { s.Operator = "" }},
		{"no game", func(s *tickets.Session) { s.GameID = "" }},
		{"no token", func(s *tickets.Session) { s.Token = "" }},
		{"no player", func(s *tickets.Session) { s.PlayerID = "" }},
	}
	for _, tc := range cases {
		sess := session
		tc.mutate(&sess)
		if raw, err := svc.Issue(t.Context(), sess); err == nil {
			t.Errorf("%s: Issue = %q, nil; want an error", tc.name, raw)
		}
	}
	if n := repo.inserts.Load(); n != 0 {
		t.Fatalf("incomplete sessions reached the repository %d times, want 0", n)
	}
}

func TestStoreErrorsAreWrappedNotPlayerFacing(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	repo := &countingRepo{err: boom}
	svc := tickets.New(repo, nil)
	if _, err := svc.Issue(t.Context(), session); !errors.Is(err, boom) {
		t.Fatalf("Issue: err = %v, want it to wrap %v", err, boom)
	}
	raw := tickets.Prefix + base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	_, err := svc.Redeem(t.Context(), raw)
	if !errors.Is(err, boom) {
		t.Fatalf("Redeem: err = %v, want it to wrap %v", err, boom)
	}
	for _, pf := range []error{tickets.ErrUnknown, tickets.ErrUsed, tickets.ErrExpired} {
		if errors.Is(err, pf) {
			t.Fatalf("Redeem: internal failure reported as player-facing %v", pf)
		}
	}
	if strings.Contains(err.Error(), raw) {
		t.Fatalf("Redeem error %q contains the raw ticket", err)
	}
}

// countingRepo is a Repository that records calls and fails with err.
type countingRepo struct {
	inserts, redeems atomic.Int32
	err              error
}

func (r *countingRepo) Insert(context.Context, tickets.Stored) error {
	r.inserts.Add(1)
	return r.err
}

func (r *countingRepo) Redeem(context.Context, []byte, time.Time) (tickets.Session, error) {
	r.redeems.Add(1)
	if r.err != nil {
		return tickets.Session{}, r.err
	}
	return tickets.Session{}, tickets.ErrUnknown
}

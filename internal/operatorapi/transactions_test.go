package operatorapi_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/store"
)

// movement stores one movement of operator op, created at created.
func (e *env) movement(t *testing.T, op, id, status string, created time.Time) {
	t.Helper()
	m := store.MovementRecord{TransactionID: id, Kind: "win", Operator: op, GameID: "crash", Currency: "BRL", PlayerID: "p-" + op,
		Token: "tok", RoundID: "crash-7", BetID: "b-" + id, Amount: 1250, WinType: "win", Status: status,
		NextAttemptAt: store.MillisOf(created), CreatedAt: store.MillisOf(created)}
	if status == store.MovementExhausted {
		m.Attempts, m.LastError = 20, "503: the wallet answered 503 Service Unavailable"
	}
	if status == store.MovementDone {
		m.Attempts, m.OperatorTxID, m.DoneAt = 1, "acme-"+id, store.MillisOf(created.Add(time.Second))
	}
	if err := e.store.InsertMovement(t.Context(), &m); err != nil {
		t.Fatal(err)
	}
}

// page lists one page of acme's transactions.
func (e *env) transactions(t *testing.T, fields string) reply {
	t.Helper()
	return e.post(t, "/v1/transactions", e.body(fields), acmeSecret)
}

func ids(t *testing.T, r reply) (out []string, next string) {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("transactions: %d %s", r.Status, r.Raw)
	}
	for _, it := range r.Body["items"].([]any) {
		out = append(out, it.(map[string]any)["transaction_id"].(string))
	}
	next, _ = r.Body["next_cursor"].(string)
	return out, next
}

// The transactions route lists the signing operator's movements, never
// another's, in pages that neither skip nor repeat one even while movements
// keep being created (one committed late included: only movements 10 s old
// are listed); it filters by status, and refuses queries out of bounds with
// the document's examples. Both backends.
func TestTransactionsPages(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		start := e.now.Add(-time.Hour)
		for i := range 7 {
			id := fmt.Sprintf("w-%d", 7-i) // ids against the time order
			status := store.MovementDone
			if i%3 == 0 {
				status = store.MovementExhausted
			}
			e.movement(t, "acme", id, status, start.Add(time.Duration(i/2)*time.Minute))
			e.movement(t, "strict", "s-"+id, status, start.Add(time.Duration(i/2)*time.Minute))
		}
		// By creation, then id.
		want := []string{"w-6", "w-7", "w-4", "w-5", "w-2", "w-3", "w-1"}
		from, to := start.Add(-time.Minute).UnixMilli(), e.now.Add(time.Hour).UnixMilli()
		rangeOf := fmt.Sprintf(`,"from":%d,"to":%d`, from, to)

		var got []string
		first, next := ids(t, e.transactions(t, rangeOf+`,"limit":3`))
		got = append(got, first...)
		// Meanwhile a movement commits late (created 2 s ago) and another
		// is created now: both are listed once settled, neither skipped.
		e.movement(t, "acme", "w-late", store.MovementPending, e.now.Add(-2*time.Second))
		e.movement(t, "acme", "w-new", store.MovementPending, e.now)
		want = append(want, "w-late", "w-new")
		e.now = e.now.Add(11 * time.Second)
		for next != "" {
			var page []string
			page, next = ids(t, e.transactions(t, rangeOf+`,"limit":3,"cursor":"`+next+`"`))
			got = append(got, page...)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("pages %v, want %v (no skip, no repeat, no other operator's)", got, want)
		}
		parked, _ := ids(t, e.transactions(t, rangeOf+`,"status":"exhausted"`))
		if !slices.Equal(parked, []string{"w-7", "w-4", "w-1"}) {
			t.Fatalf("exhausted: %v", parked)
		}
		r := e.transactions(t, rangeOf+`,"status":"delivered","limit":1`)
		item := r.Body["items"].([]any)[0].(map[string]any)
		if item["status"] != "delivered" || item["operator_transaction_id"] != "acme-w-6" || item["delivered_at"] == nil || item["attempts"] != 1.0 {
			t.Fatalf("a delivered transaction: %s", r.Raw)
		}

		documented := documentedRefusals(t)
		for _, tc := range []struct{ name, fields string }{
			{"to before from", fmt.Sprintf(`,"from":%d,"to":%d`, to, from)},
			{"over 31 days", fmt.Sprintf(`,"from":%d,"to":%d`, from, from+32*24*3600*1000)},
			{"a cursor not given", rangeOf + `,"cursor":"bm9wZQ"`},
			{"limit 0", rangeOf + `,"limit":0`},
		} {
			r := e.transactions(t, tc.fields)
			wantError(t, r, 400, "INVALID_QUERY")
			if tc.name == "over 31 days" && !documented["/v1/transactions 400"]["INVALID_QUERY "+masked(r.Body["error_message"])] {
				t.Errorf("%s answers %s, which no example shows", tc.name, r.Raw)
			}
		}
	})
}

// Re-delivery of a parked transaction: once, idempotent, in the
// transaction's history; never another operator's, never one the wallet
// refused. Both backends.
func TestRedeliverTransaction(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		e.movement(t, "acme", "w-parked", store.MovementExhausted, e.now.Add(-time.Hour))
		e.movement(t, "acme", "w-refused", store.MovementRefused, e.now.Add(-time.Hour))
		e.movement(t, "strict", "s-parked", store.MovementExhausted, e.now.Add(-time.Hour))
		documented := documentedRefusals(t)
		redeliver := func(id string) reply {
			return e.post(t, "/v1/transactions/redeliver", e.body(`,"transaction_id":"`+id+`"`), acmeSecret)
		}
		r := redeliver("w-parked")
		tx, _ := r.Body["transaction"].(map[string]any)
		if r.Status != 200 || r.Body["redelivered"] != true || tx["status"] != "pending" || tx["attempts"] != 0.0 ||
			len(tx["redeliveries"].([]any)) != 1 || tx["redeliveries"].([]any)[0].(map[string]any)["requested_by"] != "operator:acme" {
			t.Fatalf("redeliver: %d %s", r.Status, r.Raw)
		}
		if again := redeliver("w-parked"); again.Status != 200 || again.Body["redelivered"] != false {
			t.Fatalf("again: %d %s; want it as it is", again.Status, again.Raw)
		}
		for _, tc := range []struct {
			id     string
			status int
			code   string
		}{
			{"s-parked", 404, "TRANSACTION_NOT_FOUND"}, // another operator's: unknown
			{"w-nope", 404, "TRANSACTION_NOT_FOUND"},
			{"w-refused", 409, "TRANSACTION_REFUSED"},
		} {
			r := redeliver(tc.id)
			wantError(t, r, tc.status, tc.code)
			key := "/v1/transactions/redeliver " + strconv.Itoa(tc.status)
			if !documented[key][tc.code+" "+masked(r.Body["error_message"])] {
				t.Errorf("%s answers %s, which no example of %s shows", tc.id, r.Raw, key)
			}
		}
		if m, err := e.store.GetMovement(t.Context(), "s-parked"); err != nil || m.Status != store.MovementExhausted {
			t.Fatalf("another operator's movement after the refusal: %+v, %v", m, err)
		}
	})
}

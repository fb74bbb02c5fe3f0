package replica

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// Every field of an event, a bet and an answer survives the wire, and a
// message of another wire version is refused by name, not misread.
func TestWireRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 12, 0, 0, 123456789, time.UTC)
	free := "fb-1"
	bet := engine.BetView{BetID: "b1", RoundID: "crash-7", Amount: 500, AutoCashout: 150, FreebetID: &free,
		Status: engine.StatusCashedOut, Multiplier: 150, Payout: 750, PlacedAt: at}
	ev := &engine.Event{Type: engine.EventBets, Count: 3, CashedOut: 1, Bet: &bet,
		Round: engine.RoundView{RoundID: "crash-7", Seq: 7, Phase: engine.PhaseFlying, BettingEndsAt: at,
			StartedAt: at.Add(time.Second), CrashedAt: at.Add(2 * time.Second), CrashPoint: 212, Hash: "ab12"},
		Items: []engine.BetItem{{BetID: "b1", Name: "b***", Currency: "BRL", Amount: 500, Multiplier: 150, Payout: 750}}}
	data, err := json.Marshal(eventMsgOf([]byte("hash"), ev))
	if err != nil {
		t.Fatal(err)
	}
	var m eventMsg
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if err := m.check("event"); err != nil {
		t.Fatal(err)
	}
	if got := m.event(); !reflect.DeepEqual(got, ev) || string(m.Session) != "hash" {
		t.Fatalf("the event came back as %+v, want %+v", got, ev)
	}

	p := engine.Player{Session: []byte("hash"), Operator: "acme", PlayerID: "p-1", Token: "secret-token", Currency: "BRL"}
	req := engine.BetRequest{Amount: 500, AutoCashout: 150, FreebetID: "fb-1", ReceivedAt: at}
	data, err = json.Marshal(admitMsgOf(p, req))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), p.Token) || strings.Contains(string(data), p.PlayerID) {
		t.Fatalf("a bet crosses with the player's token or id: %s", data)
	}
	var bm admitMsg
	if err := json.Unmarshal(data, &bm); err != nil {
		t.Fatal(err)
	}
	later := at.Add(time.Millisecond)
	if got := bm.request(later); got != (engine.BetRequest{Amount: 500, AutoCashout: 150, FreebetID: "fb-1", ReceivedAt: later, Forwarded: true}) {
		t.Fatalf("the bet came back as %+v: the leader admits it at its own receive time, as a bet another replica debits", got)
	}
	// The outcome of the bet's debit crosses back to the leader without the
	// token, and comes back as it left.
	fb := "fb-1"
	adm := engine.Admission{BetID: "b_1", RoundID: "crash-7", PlacedAt: at, Deadline: at.Add(6 * time.Second), Epoch: 3}
	for _, out := range []engine.DebitOutcome{
		{Amount: 500, Result: wallet.Result{Outcome: wallet.Success, Balance: 9500, HasBalance: true, OperatorTxID: "op-9", Route: wallet.RouteBet}},
		{Amount: 500, FreebetID: &fb, Result: wallet.Result{Outcome: wallet.Refused, ErrorCode: "INSUFFICIENT_FUNDS", Balance: 42, HasBalance: true, Route: wallet.RouteBet}},
		{Amount: 500, Result: wallet.Result{Outcome: wallet.Temporary, Route: wallet.RouteBet}},
		// Why it is unknown, for the leader's log.
		{Amount: 500, Result: wallet.Result{Outcome: wallet.Temporary, Route: wallet.RouteBet, Reason: wallet.ReasonCanceled}},
		{Amount: 500, Result: wallet.Result{Outcome: wallet.Temporary, Route: wallet.RouteBet, Reason: wallet.ReasonRetryableCode, HTTPStatus: 503}},
	} {
		data, err := json.Marshal(decideMsgOf(p.Session, adm, out))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), p.Token) || strings.Contains(string(data), p.PlayerID) {
			t.Fatalf("a debit outcome crosses with the player's token or id: %s", data)
		}
		var dm decideMsg
		if err := json.Unmarshal(data, &dm); err != nil {
			t.Fatal(err)
		}
		if got := dm.outcome(); !reflect.DeepEqual(got, out) {
			t.Fatalf("the debit outcome came back as %+v, want %+v", got, out)
		}
		if got := dm.Admission.engine(); !got.PlacedAt.Equal(adm.PlacedAt) || !got.Deadline.Equal(adm.Deadline) ||
			got.BetID != adm.BetID || got.RoundID != adm.RoundID || got.Epoch != adm.Epoch {
			t.Fatalf("the admission came back as %+v, want %+v", got, adm)
		}
	}
	if got := betWireOf(bet).view(); !reflect.DeepEqual(got, bet) {
		t.Fatalf("the bet view came back as %+v", got)
	}

	for _, raw := range []string{`{"v":2,"type":"bet"}`, `{"type":"bet"}`} {
		var old eventMsg
		if err := json.Unmarshal([]byte(raw), &old); err != nil {
			t.Fatal(err)
		}
		if err := old.check("event"); err == nil || !strings.Contains(err.Error(), "wire version") {
			t.Fatalf("%s: check = %v, want a refusal naming the wire version", raw, err)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/beacon"
	"github.com/crashstudio/crashgame/internal/beacon/beacontest"
	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/store"
)

// The chain of api/table.v1.yaml's examples (GET /fairness/chains/{chain_id}),
// a real one: its round at position 8 has the hash below and crashes at 1.34x.
const (
	exampleTerminal = "260f1ea4b53d8ee1cf9d176ef5de6f46a57b77c32571290ff541d068193c5f85"
	exampleSalt     = "770e53c9761b9672d3bab05c9fc85fea1a62a690e95d4527272313007ff02489"
	exampleValue    = "7c7bf6ec70c9882985fa0f28ea4ff7decf10db6e4b115933628e2b7c4067bdb2"
	exampleHash     = "8c83fcc1a8955dee821c6c60b88f3943bd37f1d83cae562e7ff5ba6d5adc49aa"
	exampleHash6    = "454cd71b8c4d8fc4b552f663579fa4e9fe548ff1db13fd4c0fdfae2a2bb4980a"
)

// exampleChain is the example chain's document with what change does to it.
func exampleChain(change func(doc map[string]any)) []byte {
	doc := map[string]any{"chain_id": "crash-classic-c3", "game_id": "crash-classic", "number": 3, "status": "active",
		"terminal_hash": exampleTerminal, "length": 8, "first_seq": 184226, "rtp_bp": 9700, "max_multiplier": 1000000,
		"formula_version": 1, "formula": "-", "created_at": 1, "seeding_ends_at": 2, "salt": exampleSalt, "salt_fixed_at": 3,
		"salt_source": "contributions", "checkpoints": []any{},
		"contributions": []any{map[string]any{"source": "operator", "operator": "acme-bet", "value": exampleValue, "received_at": 1}}}
	if change != nil {
		change(doc)
	}
	b, _ := json.Marshal(doc)
	return b
}

// crashgame verify recomputes a round with its chain's published settings
// and salt, checks the salt against the contributions and walks the hash to
// the terminal or a checkpoint; it assumes nothing, and any change to a
// setting, the salt, a contribution or the hash changes its answer.
func TestVerifyCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, body []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	doc := write("chain.json", exampleChain(nil))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/fairness/chains/crash-classic-c3" || r.Header.Get("Accept") != "application/json" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(exampleChain(nil))
	}))
	t.Cleanup(srv.Close)
	tests := []struct {
		name    string
		args    []string
		want    []string // in the output
		wantErr string
	}{
		{"the chain's document", []string{"--hash", exampleHash, "--chain", doc},
			[]string{"crash point: 1.34x (134 hundredths), with chain crash-classic-c3's rtp_bp 9700 and max_multiplier 1000000",
				"chain: position 8 of chain crash-classic-c3 (round 184233), reached the published terminal hash after 8 steps",
				"salt: the salt rule applied to the terminal hash and the 1 published contributions gives it"}, ""},
		{"fetched from the game", []string{"--hash", exampleHash, "--server", srv.URL, "--chain-id", "crash-classic-c3"},
			[]string{"crash point: 1.34x", "position 8"}, ""},
		{"a checkpoint shortens the walk", []string{"--hash", exampleHash, "--chain", write("cp.json", exampleChain(func(d map[string]any) {
			d["checkpoints"] = []any{map[string]any{"position": 6, "seq": 184231, "hash": exampleHash6}}
		}))}, []string{"position 8", "reached the published checkpoint at position 6 after 2 steps"}, ""},
		{"another rtp_bp gives another crash point", []string{"--hash", exampleHash, "--chain", write("rtp.json", exampleChain(func(d map[string]any) { d["rtp_bp"] = 9000 }))},
			[]string{"crash point: 1.24x"}, ""},
		{"a changed salt", []string{"--hash", exampleHash, "--chain", write("salt.json", exampleChain(func(d map[string]any) { d["salt"] = strings.Repeat("77", 32) }))},
			nil, "the salt is not made of the published contributions"},
		{"a changed contribution", []string{"--hash", exampleHash, "--chain", write("contrib.json", exampleChain(func(d map[string]any) {
			d["contributions"] = []any{map[string]any{"source": "operator", "operator": "acme-bet", "value": strings.Repeat("7c", 32), "received_at": 1}}
		}))}, nil, "the salt is not made of the published contributions"},
		{"a hash outside the chain", []string{"--hash", strings.Repeat("ab", 32), "--chain", doc}, nil, "does not lead to the terminal"},
		{"a seeding chain", []string{"--hash", exampleHash, "--chain", write("seeding.json", exampleChain(func(d map[string]any) { delete(d, "salt"); d["status"] = "seeding" }))},
			nil, "has no salt yet"},
		{"a chain retired while seeding", []string{"--hash", exampleHash, "--chain", write("unplayed.json", exampleChain(func(d map[string]any) {
			delete(d, "salt")
			d["status"], d["last_seq"] = "retired", d["first_seq"].(int)-1
		}))}, nil, "never played"},
		{"no chain assumed", []string{"--hash", exampleHash}, nil, "none is assumed"},
		{"the document or where to fetch it, not both", []string{"--hash", exampleHash, "--chain", doc, "--server", srv.URL}, nil, "not both"},
		{"an unknown chain", []string{"--hash", exampleHash, "--server", srv.URL, "--chain-id", "nope"}, nil, "404"},
	}
	// A chain that names a beacon round (a local beacon, real signatures):
	// its salt takes the round's randomness; the command checks the round,
	// its signature and its place in the salt, and refuses a tampered one.
	bn := beacontest.New(t, beacontest.Options{Genesis: time.UnixMilli(0)})
	withRound := func(tamper func(b map[string]any)) func(d map[string]any) {
		return func(d map[string]any) {
			round := bn.Network.FirstRoundAfter(time.UnixMilli(2).Add(bn.Network.Period))
			v := bn.Sign(round)
			roundTime := bn.Network.TimeOf(round).UnixMilli()
			b := map[string]any{"network": bn.Network.Name, "chain_hash": bn.Network.ChainHash, "public_key": hex.EncodeToString(bn.Network.PublicKey),
				"genesis_time": 0, "period_s": 3, "scheme": beacon.Scheme, "round": round, "round_time": roundTime,
				"signature": v.SignatureHex(), "randomness": v.RandomnessHex()}
			d["beacon"], d["salt_fixed_at"] = b, roundTime+1
			d["contributions"] = append(d["contributions"].([]any), map[string]any{"source": "beacon",
				"label": fmt.Sprintf("drand beacontest round %d", round), "value": v.RandomnessHex(), "received_at": roundTime})
			terminal, _ := fairness.ParseHash(exampleTerminal)
			value, _ := fairness.ParseHash(exampleValue)
			d["salt"] = fairness.Salt(terminal, [][32]byte{value, v.Randomness})
			if tamper != nil {
				tamper(b)
			}
		}
	}
	tests = append(tests,
		struct {
			name    string
			args    []string
			want    []string
			wantErr string
		}{"a beacon round in the salt", []string{"--hash", exampleHash, "--chain", write("beacon.json", exampleChain(withRound(nil)))},
			[]string{"salt: the salt rule applied to the terminal hash and the 2 published contributions gives it",
				"beacon: drand beacontest round 3 (due 1970-01-01T00:00:06Z)", "its BLS signature verifies under the published public key"}, ""},
		struct {
			name    string
			args    []string
			want    []string
			wantErr string
		}{"a beacon signature of another round", []string{"--hash", exampleHash, "--chain", write("beacon-bad.json", exampleChain(withRound(func(b map[string]any) {
			b["signature"] = bn.Sign(2).SignatureHex()
		})))}, nil, "beacon round does not verify"},
	)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := verifyCmd(t.Context(), tc.args, &out, &errOut)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// crashgame movements --redeliver sends an exhausted movement again, once,
// and says so; it needs --by for the movement's history, and refuses a
// movement the wallet refused.
func TestMovementsRedeliver(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "crashgame.yaml")
	writeFile(t, cfgPath, fmt.Sprintf(`
base_url: http://127.0.0.1:8080
fairness: {seed_key: abababababababababababababababababababababababababababababababab, seeding_window_ms: 0}
database: sqlite://%s/game.db
games:
  - {game_id: crash, name: Crash, studio: S, category: crash}
operators:
  - operator: showroom
    games: [crash]
`, filepath.ToSlash(dir)))
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "game.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ id, status string }{{"w-parked", store.MovementExhausted}, {"w-refused", store.MovementRefused}} {
		if err := st.InsertMovement(ctx, &store.MovementRecord{TransactionID: m.id, Kind: "win", Operator: "showroom", Currency: "BRL",
			PlayerID: "p1", Token: "tok", RoundID: "r1", BetID: "b-" + m.id, Amount: 500, WinType: "win", Status: m.status,
			Attempts: 20, LastError: "503", NextAttemptAt: 1, CreatedAt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := movementsCmd(ctx, append([]string{"--config", cfgPath}, args...), &out, &errOut)
		return out.String(), err
	}
	if _, err := run("--redeliver", "w-parked"); err == nil || !strings.Contains(err.Error(), "--by NAME") {
		t.Fatalf("without --by: %v", err)
	}
	out, err := run("--redeliver", "w-parked", "--by", "ana")
	if err != nil || !strings.Contains(out, "delivered again") || !strings.Contains(out, "w-parked\twin\twin\tpending\t0\t") {
		t.Fatalf("redeliver: %v\n%s", err, out)
	}
	if out, err := run("--redeliver", "w-parked", "--by", "ana"); err != nil || !strings.Contains(out, "left as it is: pending") {
		t.Fatalf("again: %v\n%s", err, out)
	}
	if _, err := run("--redeliver", "w-refused", "--by", "ana"); err == nil || !strings.Contains(err.Error(), "refused by the wallet") {
		t.Fatalf("a refused movement: %v", err)
	}
	if hist, err := redeliveriesOf(st, ctx, "w-parked"); err != nil || len(hist) != 1 || hist[0].RequestedBy != "on-call:ana" {
		t.Fatalf("history %+v, %v", hist, err)
	}
}

// redeliveriesOf is the history of one movement.
func redeliveriesOf(st *store.Store, ctx context.Context, id string) ([]store.RedeliveryRecord, error) {
	m, err := st.RedeliveriesOf(ctx, []string{id})
	return m[id], err
}

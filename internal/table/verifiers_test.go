package table

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/beacon"
	"github.com/crashstudio/crashgame/internal/beacon/beacontest"
	"github.com/crashstudio/crashgame/internal/fairness"
)

// chainState is one state a game's chain can be in, as the public routes
// publish it: its document and its ended rounds, built with package
// fairness (real hashes, salts and crash points).
type chainState struct {
	name   string
	doc    map[string]any
	rounds []map[string]any
	ok     bool // what both published verifiers must conclude
}

// chainStates builds one game's chains in every state the game can produce:
// retired while seeding (never played), retired after its rounds, active
// with void rounds and a checkpoint, and a new one still seeding; plus, under
// another game, a retired chain that played rounds without a salt, which
// both verifiers must refuse; and commit_reveal chains (a withheld value, a
// seeding chain with a commitment, and a revealed value that does not match
// its commitment, which both must refuse).
func chainStates(t *testing.T) []chainState {
	t.Helper()
	const game = "crash"
	const t0 = int64(1_795_000_000_000)
	var out []chainState
	// add builds chain number n of g serving seqs from first, with ended
	// rounds 1..ended (every 7th void), salted from one game draw unless
	// salted is false.
	add := func(name, g string, n, first int64, length, ended int, status string, lastSeq *int64, salted, ok bool) {
		seed := sha256.Sum256([]byte(fmt.Sprintf("seed %s %d", g, n)))
		c := fairness.NewChain(seed, length)
		terminal := c.Terminal()
		created := t0 + n*10_000_000
		doc := map[string]any{
			"chain_id": fmt.Sprintf("%s-c%d", g, n), "game_id": g, "number": n, "status": status,
			"terminal_hash": fairness.FormatHash(terminal), "length": length, "first_seq": first,
			"rtp_bp": 9700, "max_multiplier": 100000, "formula_version": fairness.FormulaVersion,
			"created_at": created, "seeding_ends_at": created + 300_000,
			"contributions": []any{}, "checkpoints": []any{},
		}
		if lastSeq != nil {
			doc["last_seq"] = *lastSeq
		}
		var salt string
		if salted {
			draw := sha256.Sum256([]byte("game draw " + name))
			salt = fairness.Salt(terminal, [][32]byte{draw})
			doc["salt"], doc["salt_source"], doc["salt_fixed_at"] = salt, "game_draw", created+300_010
			doc["contributions"] = []any{map[string]any{"source": "game", "value": fairness.FormatHash(draw), "received_at": created + 300_005}}
		}
		rounds := []map[string]any{}
		var checkpoints []any
		for k := 1; k <= ended; k++ {
			h, err := c.Hash(k)
			if err != nil {
				t.Fatal(err)
			}
			seq := first + int64(k) - 1
			r := map[string]any{"round_id": fmt.Sprintf("%s-%d", g, seq), "seq": seq, "position": k,
				"status": "finished", "hash": fairness.FormatHash(h), "crashed_at": created + 400_000 + int64(k)*10_000}
			if k%7 == 0 {
				r["status"] = "void"
			}
			r["crash_point"] = int64(100)
			if salted {
				r["crash_point"] = fairness.CrashPoint(h, salt, 9700, 100000)
			}
			rounds = append(rounds, r)
			if k%fairness.CheckpointInterval == 0 {
				checkpoints = append(checkpoints, map[string]any{"position": k, "seq": seq, "hash": fairness.FormatHash(h)})
			}
		}
		if checkpoints != nil {
			doc["checkpoints"] = checkpoints
		}
		out = append(out, chainState{name: name, doc: doc, rounds: rounds, ok: ok})
	}
	seq := func(v int64) *int64 { return &v }
	add("retired while seeding (never played)", game, 1, 1, 100, 0, "retired", seq(0), false, true)
	add("retired after its rounds", game, 2, 1, 100, 40, "retired", seq(40), true, true)
	add("active, void rounds and a checkpoint", game, 3, 41, 2000, 1010, "active", nil, true, true)
	add("seeding", "crash-next", 1, 1, 100, 0, "seeding", nil, false, true)
	add("retired after its rounds without a salt", "crash-bad", 1, 1, 100, 3, "retired", seq(3), false, false)
	// commit_reveal chains: acme revealed its value, zeta withheld (its
	// commitment stands in for it); one still seeding publishes commitments
	// only; one whose revealed value does not hash to its commitment fails.
	commitReveal := func(tamper bool) {
		last := &out[len(out)-1]
		doc := last.doc
		created := doc["created_at"].(int64)
		ends, revealEnds := created+300_000, created+420_000
		acme, zeta := sha256.Sum256([]byte("acme "+last.name)), sha256.Sum256([]byte("zeta "+last.name))
		acmeCommit, zetaCommit := sha256.Sum256(acme[:]), sha256.Sum256(zeta[:])
		if tamper {
			acmeCommit[0] ^= 1
		}
		doc["contribution_rule"], doc["reveal_ends_at"] = "commit_reveal", revealEnds
		if doc["status"] == "seeding" {
			doc["contributions"] = []any{map[string]any{"source": "operator", "operator": "acme", "commitment": fairness.FormatHash(acmeCommit), "received_at": created + 1000}}
			return
		}
		terminal, err := fairness.ParseHash(doc["terminal_hash"].(string))
		if err != nil {
			t.Fatal(err)
		}
		salt := fairness.Salt(terminal, [][32]byte{acme, zetaCommit})
		doc["salt"], doc["salt_source"], doc["salt_fixed_at"] = salt, "contributions", revealEnds+10
		doc["contributions"] = []any{
			map[string]any{"source": "operator", "operator": "acme", "value": fairness.FormatHash(acme), "commitment": fairness.FormatHash(acmeCommit),
				"withheld": false, "received_at": created + 1000, "revealed_at": ends + 500},
			map[string]any{"source": "operator", "operator": "zeta", "value": fairness.FormatHash(zetaCommit), "commitment": fairness.FormatHash(zetaCommit),
				"withheld": true, "received_at": created + 2000},
		}
		for _, r := range last.rounds {
			h, err := fairness.ParseHash(r["hash"].(string))
			if err != nil {
				t.Fatal(err)
			}
			r["crash_point"] = fairness.CrashPoint(h, salt, 9700, 100000)
		}
	}
	add("commit_reveal, one value withheld", "crash-cr", 1, 1, 100, 20, "retired", seq(20), true, true)
	commitReveal(false)
	add("commit_reveal, active", "crash-cr", 2, 21, 100, 5, "active", nil, true, true)
	commitReveal(false)
	add("commit_reveal, seeding with a commitment", "crash-cr-next", 1, 1, 100, 0, "seeding", nil, false, true)
	commitReveal(false)
	add("commit_reveal, a value that is not its commitment's", "crash-cr-bad", 1, 1, 100, 5, "active", nil, true, false)
	commitReveal(true)
	// Chains that name a beacon round (a local beacon, real signatures): the
	// salt takes the round's randomness; one still waits for its round; one
	// publishes a randomness that is not SHA-256 of its signature.
	bn := beacontest.New(t, beacontest.Options{Genesis: time.UnixMilli(t0 - 3_600_000)})
	withBeacon := func(mode string) {
		last := &out[len(out)-1]
		doc := last.doc
		revealEnds := doc["reveal_ends_at"].(int64)
		round := bn.Network.FirstRoundAfter(time.UnixMilli(revealEnds).Add(bn.Network.Period))
		roundTime := bn.Network.TimeOf(round).UnixMilli()
		b := map[string]any{"network": bn.Network.Name, "chain_hash": bn.Network.ChainHash,
			"public_key": hex.EncodeToString(bn.Network.PublicKey), "genesis_time": bn.Network.Genesis.Unix(),
			"period_s": 3, "scheme": beacon.Scheme, "round": round, "round_time": roundTime}
		doc["beacon"] = b
		if mode == "waiting" {
			return
		}
		v := bn.Sign(round)
		b["signature"], b["randomness"] = v.SignatureHex(), v.RandomnessHex()
		if mode == "tampered" {
			b["randomness"] = strings.Repeat("ee", 32)
		}
		contributions := doc["contributions"].([]any)
		values := [][32]byte{}
		for _, c := range contributions {
			h, err := fairness.ParseHash(c.(map[string]any)["value"].(string))
			if err != nil {
				t.Fatal(err)
			}
			values = append(values, h)
		}
		values = append(values, v.Randomness)
		doc["contributions"] = append(contributions, map[string]any{"source": "beacon", "label": fmt.Sprintf("drand %s round %d", bn.Network.Name, round),
			"value": b["randomness"], "received_at": roundTime + 5})
		terminal, err := fairness.ParseHash(doc["terminal_hash"].(string))
		if err != nil {
			t.Fatal(err)
		}
		salt := fairness.Salt(terminal, values)
		doc["salt"], doc["salt_fixed_at"] = salt, roundTime+10
		for _, r := range last.rounds {
			h, err := fairness.ParseHash(r["hash"].(string))
			if err != nil {
				t.Fatal(err)
			}
			r["crash_point"] = fairness.CrashPoint(h, salt, 9700, 100000)
		}
	}
	add("a beacon round in the salt", "crash-bn", 1, 1, 100, 12, "active", nil, true, true)
	commitReveal(false)
	withBeacon("fixed")
	add("waiting for its beacon round", "crash-bn-next", 1, 1, 100, 0, "seeding", nil, false, true)
	commitReveal(false)
	withBeacon("waiting")
	add("a beacon randomness that is not its signature's", "crash-bn-bad", 1, 1, 100, 5, "active", nil, true, false)
	commitReveal(false)
	withBeacon("tampered")
	return out
}

// Both published verifiers, the third party's script
// (docs/examples/fairness/verify_chains.py) and the page's (fairness.js's
// ChainVerifier), agree on every chain state the game can produce: no state
// the game produces honestly is a failure (a chain retired in its seeding
// window is "never played"), and a chain that played without a salt is one.
func TestPublishedVerifiersOnEveryChainState(t *testing.T) {
	t.Parallel()
	states := chainStates(t)
	dir := t.TempDir()
	var chains []map[string]any
	if err := os.Mkdir(filepath.Join(dir, "rounds"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		chains = append(chains, s.doc)
		saveJSON(t, filepath.Join(dir, "rounds", s.doc["chain_id"].(string)+".json"), map[string]any{"items": s.rounds})
	}
	saveJSON(t, filepath.Join(dir, "chains.json"), map[string]any{"items": chains})

	t.Run("script", func(t *testing.T) {
		t.Parallel()
		python, err := exec.LookPath("python3")
		if err != nil {
			t.Skip("python3 is not installed: the script is checked by make fairness-script")
		}
		script := filepath.Join("..", "..", "docs", "examples", "fairness", "verify_chains.py")
		for _, s := range states {
			out, err := exec.Command(python, script, "--dir", dir, "--chain", s.doc["chain_id"].(string)).CombinedOutput()
			if ok := err == nil; ok != s.ok {
				t.Errorf("%s: the script's verdict is ok=%v, want %v:\n%s", s.name, ok, s.ok, out)
			}
			if s.doc["status"] == "retired" && s.doc["last_seq"] == int64(0) && !strings.Contains(string(out), "never played") {
				t.Errorf("%s: the script does not say never played:\n%s", s.name, out)
			}
		}
	})

	t.Run("page", func(t *testing.T) {
		t.Parallel()
		node, err := exec.LookPath("node")
		if err != nil {
			t.Skip("node is not installed: the page's verifier is checked by the browser test only")
		}
		js, err := web.ReadFile("web/static/fairness.js")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "fairness.mjs"), js, 0o600); err != nil {
			t.Fatal(err)
		}
		runner := `
import * as fair from './fairness.mjs';
import { readFileSync } from 'node:fs';
const chains = JSON.parse(readFileSync(new URL('./chains.json', import.meta.url))).items;
const out = {};
for (const c of chains) {
  const rounds = JSON.parse(readFileSync(new URL('./rounds/' + c.chain_id + '.json', import.meta.url))).items;
  const v = new fair.ChainVerifier(c);
  await v.start();
  await v.add(rounds);
  const s = v.finish(true);
  out[c.chain_id] = { ok: s.ok, neverPlayed: s.neverPlayed, verified: s.verified, failures: s.first.map((f) => f.kind) };
}
console.log(JSON.stringify(out));
`
		if err := os.WriteFile(filepath.Join(dir, "run.mjs"), []byte(runner), 0o600); err != nil {
			t.Fatal(err)
		}
		raw, err := exec.Command(node, filepath.Join(dir, "run.mjs")).CombinedOutput()
		if err != nil {
			t.Fatalf("node: %v\n%s", err, raw)
		}
		var got map[string]struct {
			OK          bool     `json:"ok"`
			NeverPlayed bool     `json:"neverPlayed"`
			Verified    int      `json:"verified"`
			Failures    []string `json:"failures"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("node's output: %v\n%s", err, raw)
		}
		for _, s := range states {
			g := got[s.doc["chain_id"].(string)]
			if g.OK != s.ok {
				t.Errorf("%s: the page's verdict is ok=%v (failures %v), want %v", s.name, g.OK, g.Failures, s.ok)
			}
			if never := s.doc["last_seq"] == int64(0); g.NeverPlayed != never {
				t.Errorf("%s: the page's never played = %v, want %v", s.name, g.NeverPlayed, never)
			}
			if s.ok && g.Verified != len(s.rounds) {
				t.Errorf("%s: the page verified %d of %d rounds", s.name, g.Verified, len(s.rounds))
			}
		}
	})
}

func saveJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

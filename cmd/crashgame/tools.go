package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/store"
	tablepkg "github.com/crashstudio/crashgame/internal/table"
)

// verifyCmd recomputes a round's crash point from its revealed hash with the
// settings and the salt its chain published, checks the salt against the
// chain's contributions, and walks from the hash to the chain's terminal
// hash (or to a published checkpoint): any break is a failure. The chain's
// document is the JSON of GET /fairness/chains/{chain_id}, from a file,
// stdin, or fetched from the game's public address; nothing is assumed.
func verifyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hash := fs.String("hash", "", "the round's revealed hash (64 hex digits)")
	path := fs.String("chain", "", "the round's chain document (GET /fairness/chains/{chain_id} as JSON; - reads stdin)")
	server := fs.String("server", "", "the game's public address, to fetch the chain --chain-id from (instead of --chain)")
	id := fs.String("chain-id", "", "the round's chain, fetched from --server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *hash == "" {
		return errors.New("verify: --hash is required")
	}
	var raw []byte
	var err error
	switch {
	case *path != "" && (*server != "" || *id != ""):
		return errors.New("verify: give the chain's document (--chain) or where to fetch it (--server and --chain-id), not both")
	case *path == "-":
		raw, err = io.ReadAll(os.Stdin)
	case *path != "":
		raw, err = os.ReadFile(*path)
	case *server != "" && *id != "":
		raw, err = fetchChain(ctx, *server, *id)
	default:
		return errors.New("verify: --chain FILE, or --server URL and --chain-id ID, is required: the settings and salt of the round's chain; none is assumed")
	}
	if err != nil {
		return fmt.Errorf("verify: the chain's document: %w", err)
	}
	var chain table.Chain
	if err := json.Unmarshal(raw, &chain); err != nil || chain.TerminalHash == "" {
		return fmt.Errorf("verify: not a chain's document (GET /fairness/chains/{chain_id}): %v", err)
	}
	if chain.Salt == nil && string(chain.Status) == "retired" && chain.LastSeq != nil && *chain.LastSeq == chain.FirstSeq-1 {
		return fmt.Errorf("verify: chain %s was retired during its seeding window, before its first round: it was never played, so no round of it exists to verify", chain.ChainId)
	}
	if chain.Salt == nil {
		return fmt.Errorf("verify: chain %s has no salt yet (it is %s): none of its rounds is played", chain.ChainId, chain.Status)
	}
	if chain.FormulaVersion != fairness.FormulaVersion {
		return fmt.Errorf("verify: chain %s is played with formula version %d; this program knows version %d", chain.ChainId, chain.FormulaVersion, fairness.FormulaVersion)
	}
	doc := fairness.ChainDocument{
		Terminal: chain.TerminalHash, Salt: *chain.Salt, RTPBasisPoints: int64(chain.RtpBp), MaxMultiplier: chain.MaxMultiplier,
		Length: chain.Length, Contributions: contributionValues(chain), Commitments: commitments(chain), Withheld: withheld(chain), LegacySalt: chain.SaltSource != nil && *chain.SaltSource == table.ChainSaltSourceLegacy,
		Checkpoints: checkpoints(chain),
	}
	withBeacon(chain, &doc)
	res, err := fairness.VerifyChainRound(*hash, doc)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	voids, err := checkVoids(chain)
	if err != nil {
		return fmt.Errorf("verify: chain %s: %w", chain.ChainId, err)
	}
	fmt.Fprintf(stdout, "crash point: %d.%02dx (%d hundredths), with chain %s's rtp_bp %d and max_multiplier %d\n",
		res.CrashPoint/100, res.CrashPoint%100, res.CrashPoint, chain.ChainId, chain.RtpBp, chain.MaxMultiplier)
	fmt.Fprintf(stdout, "chain: position %d of chain %s (round %d), %s\n", res.Position, chain.ChainId, chain.FirstSeq+res.Position-1, res.Reached)
	fmt.Fprintf(stdout, "salt: %s\n", res.SaltCheck)
	if res.BeaconCheck != "" {
		fmt.Fprintf(stdout, "beacon: %s\n", res.BeaconCheck)
	}
	if voids != "" {
		fmt.Fprintf(stdout, "voids: %s\n", voids)
	}
	fmt.Fprintln(stdout, fairness.Formula)
	return nil
}

// withBeacon fills what the beacon check needs from the chain's document:
// the beacon round it names (table.v1 1.3.0), each contribution's source and
// label, the end of its window (reveal_ends_at on a commit_reveal chain,
// seeding_ends_at otherwise) and salt_fixed_at.
func withBeacon(c table.Chain, doc *fairness.ChainDocument) {
	if b := c.Beacon; b != nil {
		// A round below the document's minimum of 1 wraps to a round whose
		// signature the beacon check refuses.
		round := uint64(b.Round) //nolint:gosec // G115: see above
		doc.Beacon = &fairness.ChainBeacon{Network: b.Network, ChainHash: b.ChainHash, PublicKey: b.PublicKey,
			GenesisTime: b.GenesisTime, PeriodS: b.PeriodS, Scheme: b.Scheme, Round: round, RoundTime: b.RoundTime}
		if b.Signature != nil {
			doc.Beacon.Signature = *b.Signature
		}
		if b.Randomness != nil {
			doc.Beacon.Randomness = *b.Randomness
		}
	}
	doc.WindowEnd = c.SeedingEndsAt
	if c.ContributionRule != nil && *c.ContributionRule == "commit_reveal" && c.RevealEndsAt != nil {
		doc.WindowEnd = *c.RevealEndsAt
	}
	if c.SaltFixedAt != nil {
		doc.SaltFixedAt = *c.SaltFixedAt
	}
	for _, v := range c.Contributions {
		doc.Sources = append(doc.Sources, string(v.Source))
		label := ""
		if v.Label != nil {
			label = *v.Label
		}
		doc.Labels = append(doc.Labels, label)
	}
}

func contributionValues(c table.Chain) []string {
	out := make([]string, len(c.Contributions))
	for i, v := range c.Contributions {
		if v.Value != nil {
			out[i] = *v.Value
		}
	}
	return out
}

func commitments(c table.Chain) []string {
	out := make([]string, len(c.Contributions))
	for i, v := range c.Contributions {
		if v.Commitment != nil {
			out[i] = *v.Commitment
		}
	}
	return out
}

func withheld(c table.Chain) []bool {
	out := make([]bool, len(c.Contributions))
	for i, v := range c.Contributions {
		out[i] = v.Withheld != nil && *v.Withheld
	}
	return out
}

func checkpoints(c table.Chain) map[int64]string {
	out := make(map[int64]string, len(c.Checkpoints))
	for _, cp := range c.Checkpoints {
		out[cp.Position] = cp.Hash
	}
	return out
}

// fetchChain reads chain id's public document from the game at server.
func fetchChain(ctx context.Context, server, id string) ([]byte, error) {
	u, err := url.JoinPath(server, "fairness", "chains", id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return body, nil
}

// movementsCmd lists the wallet movements of the outbox, for reconciliation,
// or delivers an exhausted one again (--redeliver), for the on-call engineer
// once the operator has fixed its wallet.
func movementsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("movements", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "installation file")
	var f movements.MovementFilter
	fs.StringVar(&f.RoundID, "round", "", "only this round")
	fs.StringVar(&f.PlayerID, "player", "", "only this player")
	fs.StringVar(&f.Operator, "operator", "", "only this operator")
	fs.StringVar(&f.Status, "status", "", "only this status: pending, done, refused, exhausted")
	fs.IntVar(&f.Limit, "limit", 1000, "at most this many")
	redeliver := fs.String("redeliver", "", "deliver this exhausted movement (its transaction_id) again: a fresh 20 attempts")
	by := fs.String("by", "", "with --redeliver: who asks (your name), kept in the movement's history")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" {
		return fmt.Errorf("movements: --config FILE is required")
	}
	if *redeliver != "" && strings.TrimSpace(*by) == "" {
		return fmt.Errorf("movements: --redeliver needs --by NAME: the movement's history says who asked")
	}
	cfg, err := loadConfig(*path)
	if err != nil {
		return err
	}
	return withStore(ctx, cfg, func(st *store.Store) error {
		if *redeliver != "" {
			rec, again, err := movements.Redeliver(ctx, st.Movements(), *redeliver, "", "on-call:"+strings.TrimSpace(*by), time.Now())
			if err != nil {
				return fmt.Errorf("movements: %w", err)
			}
			if err := movements.WriteMovements(stdout, []movements.MovementRecord{rec}); err != nil {
				return err
			}
			if again {
				fmt.Fprintln(stdout, "delivered again: pending, 20 fresh attempts; the running game sends it at its queue's next poll")
			} else {
				fmt.Fprintf(stdout, "left as it is: %s (only an exhausted movement is delivered again)\n", rec.Status)
			}
			return nil
		}
		recs, err := movements.ListMovements(ctx, st.Movements(), f)
		if err != nil {
			return err
		}
		return movements.WriteMovements(stdout, recs)
	})
}

// checkVoids recomputes the chain's void tests from its void rounds: the
// test of the voids before take-off (fairness.VoidTests) and of the voids
// in flight (fairness.InFlightTests, each multiplier_at_void recomputed from
// started_at and voided_at). A published figure that differs is an error; a
// raised flag is a warning in the summary it returns.
func checkVoids(c table.Chain) (string, error) {
	v := c.Voids
	if v == nil {
		return "", nil
	}
	var tested []int64
	var flying []fairness.InFlightVoid
	for _, r := range v.Rounds {
		switch {
		case r.StartedAt == nil:
			tested = append(tested, r.CrashPoint)
		case r.VoidedAt != nil:
			m := tablepkg.MultiplierAtVoid(*r.StartedAt, *r.VoidedAt)
			if r.MultiplierAtVoid != nil && *r.MultiplierAtVoid != m {
				return "", fmt.Errorf("void round %s: multiplier_at_void %d, but the curve at voided_at - started_at gives %d", r.RoundId, *r.MultiplierAtVoid, m)
			}
			flying = append(flying, fairness.InFlightVoid{Multiplier: m, CrashPoint: r.CrashPoint})
		}
	}
	tests := fairness.VoidTests(int64(c.RtpBp), c.MaxMultiplier, tested)
	if v.Tested != int64(len(tested)) || len(v.Tests) != len(tests) || v.Flagged != fairness.VoidsFlagged(tests) {
		return "", fmt.Errorf("voids: tested %d, %d tests, flagged %t; the void rounds give %d, %d, %t",
			v.Tested, len(v.Tests), v.Flagged, len(tested), len(tests), fairness.VoidsFlagged(tests))
	}
	for i, t := range tests {
		p := v.Tests[i]
		if p.AtLeast != t.AtLeast || p.Observed != t.Observed || p.Share != t.ShareText() || !samePValue(p.PValue, t.PValue) {
			return "", fmt.Errorf("voids: the test at %d: %+v; the void rounds give observed %d, share %s, p_value %s", t.AtLeast, p, t.Observed, t.ShareText(), t.PValueText())
		}
	}
	f := fairness.InFlightTests(flying)
	if v.InFlight.Tested != f.Tested || !samePValue(v.InFlight.PValue, f.PValue) || v.InFlight.Flagged != f.Flagged() {
		return "", fmt.Errorf("voids: in_flight %+v; the void rounds give tested %d, p_value %s, flagged %t", v.InFlight, f.Tested, f.PValueText(), f.Flagged())
	}
	out := fmt.Sprintf("%d voided in betting, flagged %t; %d voided in flight, p-value %s, flagged %t", len(tested), v.Flagged, f.Tested, f.PValueText(), f.Flagged())
	if v.Flagged || f.Flagged() {
		out = "WARNING: voids lean toward high crash points beyond chance (" + out + "); the rounds still verify, ask the operator why they were voided"
	}
	return out, nil
}

// samePValue reports whether a published p-value (4 significant digits)
// is within 0.1 % of p.
func samePValue(published string, p float64) bool {
	v, err := strconv.ParseFloat(published, 64)
	return err == nil && math.Abs(v-p) <= p/1000
}

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// verifyCmd recomputes a round's crash point from its revealed hash with the
// settings the game published, and checks that the hash belongs to the chain
// of the published terminal hash. The settings come from the published
// fairness document (--fairness, the JSON of GET /api/v1/fairness) or are
// all given by hand; none is assumed.
func verifyCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hash := fs.String("hash", "", "the round's revealed hash (64 hex digits)")
	doc := fs.String("fairness", "", "the published fairness document (GET /api/v1/fairness as JSON; - reads stdin): salt, rtp_bp, max_multiplier and terminal_hash")
	var pub published
	fs.StringVar(&pub.Salt, "salt", "", "the published salt (without --fairness)")
	fs.Int64Var(&pub.RTP, "rtp-bp", 0, "the game's RTP in basis points, as published (without --fairness)")
	fs.Int64Var(&pub.MaxMultiplier, "max-multiplier", 0, "the game's maximum multiplier in hundredths, as published (without --fairness)")
	fs.StringVar(&pub.Terminal, "terminal", "", "the chain's published terminal hash (without --fairness; optional)")
	limit := fs.Int("limit", 10_000_000, "how many hashes to walk towards the terminal")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *hash == "" {
		return fmt.Errorf("verify: --hash is required")
	}
	if *doc != "" {
		if pub != (published{}) {
			return fmt.Errorf("verify: --fairness gives the settings; leave out --salt, --rtp-bp, --max-multiplier and --terminal")
		}
		var err error
		if pub, err = readPublished(*doc, os.Stdin); err != nil {
			return fmt.Errorf("verify: --fairness: %w", err)
		}
	}
	var missing []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"salt", pub.Salt != ""}, {"rtp-bp", pub.RTP != 0}, {"max-multiplier", pub.MaxMultiplier != 0}} {
		if !f.set {
			missing = append(missing, "--"+f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("verify: %s required: the settings the game published (or --fairness with its document); none is assumed", strings.Join(missing, ", "))
	}
	crash, err := fairness.VerifyRound(*hash, pub.Salt, pub.RTP, pub.MaxMultiplier)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	fmt.Fprintf(stdout, "crash point: %d.%02dx (%d hundredths), with rtp_bp %d and max_multiplier %d\n",
		crash/100, crash%100, crash, pub.RTP, pub.MaxMultiplier)
	if pub.Terminal != "" {
		h, err := fairness.ParseHash(*hash)
		if err != nil {
			return err
		}
		term, err := fairness.ParseHash(pub.Terminal)
		if err != nil {
			return fmt.Errorf("verify: the terminal hash: %w", err)
		}
		n, err := fairness.ChainPosition(h, term, *limit)
		if err != nil {
			return fmt.Errorf("verify: the hash is not in the chain of that terminal within %d steps: %w", *limit, err)
		}
		fmt.Fprintf(stdout, "chain: round %d of the chain whose terminal hash is %s\n", n, pub.Terminal)
	}
	fmt.Fprintln(stdout, fairness.Formula)
	return nil
}

// published is what the game publishes of a chain (GET /api/v1/fairness).
type published struct {
	Salt          string `json:"salt"`
	RTP           int64  `json:"rtp_bp"`
	MaxMultiplier int64  `json:"max_multiplier"`
	Terminal      string `json:"terminal_hash"`
}

// readPublished reads the published fairness document from path, or from
// stdin when path is "-".
func readPublished(path string, stdin io.Reader) (published, error) {
	var raw []byte
	var err error
	if path == "-" {
		raw, err = io.ReadAll(stdin)
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return published{}, err
	}
	var p published
	if err := json.Unmarshal(raw, &p); err != nil {
		return published{}, fmt.Errorf("not the fairness document's JSON: %w", err)
	}
	return p, nil
}

// movementsCmd lists the wallet movements of the outbox, for reconciliation.
func movementsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("movements", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "installation file")
	var f wallet.MovementFilter
	fs.StringVar(&f.RoundID, "round", "", "only this round")
	fs.StringVar(&f.PlayerID, "player", "", "only this player")
	fs.StringVar(&f.Operator, "operator", "", "only this operator")
	fs.StringVar(&f.Status, "status", "", "only this status: pending, done, refused, exhausted")
	fs.IntVar(&f.Limit, "limit", 1000, "at most this many")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" {
		return fmt.Errorf("movements: --config FILE is required")
	}
	cfg, err := loadConfig(*path)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	recs, err := wallet.ListMovements(ctx, st, f)
	if err != nil {
		return err
	}
	return wallet.WriteMovements(stdout, recs)
}

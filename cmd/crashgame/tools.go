package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// verifyCmd recomputes a round's crash point from its revealed hash, and, given
// the published terminal hash, checks that the hash belongs to the chain.
func verifyCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hash := fs.String("hash", "", "the round's revealed hash (64 hex digits)")
	salt := fs.String("salt", "", "the published salt")
	rtp := fs.Int64("rtp-bp", 9700, "the game's RTP in basis points")
	maxM := fs.Int64("max-multiplier", 100000, "the game's maximum multiplier in hundredths")
	terminal := fs.String("terminal", "", "the chain's published terminal hash (optional)")
	limit := fs.Int("limit", 10_000_000, "how many hashes to walk towards the terminal")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *hash == "" || *salt == "" {
		return fmt.Errorf("verify: --hash and --salt are required")
	}
	crash, err := fairness.VerifyRound(*hash, *salt, *rtp, *maxM)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	fmt.Fprintf(stdout, "crash point: %d.%02dx (%d hundredths)\n", crash/100, crash%100, crash)
	if *terminal != "" {
		h, err := fairness.ParseHash(*hash)
		if err != nil {
			return err
		}
		term, err := fairness.ParseHash(*terminal)
		if err != nil {
			return fmt.Errorf("verify: --terminal: %w", err)
		}
		n, err := fairness.ChainPosition(h, term, *limit)
		if err != nil {
			return fmt.Errorf("verify: the hash is not in the chain of that terminal within %d steps: %w", *limit, err)
		}
		fmt.Fprintf(stdout, "chain: round %d of the chain whose terminal hash is %s\n", n, *terminal)
	}
	fmt.Fprintln(stdout, fairness.Formula)
	return nil
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

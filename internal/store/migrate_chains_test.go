package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashstudio/crashgame/internal/store"
)

// runFile runs one migration file's statements on s.
func runFile(t *testing.T, s *store.Store, file string) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("migrations", s.Dialect(), file))
	if err != nil {
		t.Fatal(err)
	}
	for stmt := range strings.SplitSeq(string(text), "--bun:split") {
		if _, err := s.ExecForTest(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v\n%s", file, err, stmt)
		}
	}
}

// An installation upgraded across migration 0007 keeps every round as it
// was: its chain as it stood becomes chain 1, retired at the last round and
// with no seed (it was stored in plain text), its rounds name it with their
// positions and keep their revealed hashes and crash points; rounds of
// chains overwritten before name no chain. The plain-text seeds are gone.
func TestMigrationKeepsPlayedRoundsOfTheOldChain(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := openMigrated(t, b.open(t))
			ctx := t.Context()
			runFile(t, s, "0007_public_chains.tx.down.sql")
			// The old shape: one chain row per game (from round 3 on; rounds 1
			// and 2 were of a chain it overwrote), rounds with their settings.
			for _, q := range []string{
				`DELETE FROM chains`,
				`INSERT INTO chains (game_id, seed, first_seq, length, terminal, salt, created_at)
				 VALUES ('crash', 'plain-seed', 3, 100, '` + strings.Repeat("7e", 32) + `', 'old-salt', 5)`,
			} {
				if _, err := s.ExecForTest(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			for seq, status := range map[int]string{1: "finished", 2: "finished", 3: "finished", 4: "void", 5: "flying"} {
				if _, err := s.ExecForTest(ctx, `INSERT INTO rounds (id, game_id, seq, hash, salt, crash_point, rtp_bp, max_multiplier, status, betting_ends_at, created_at)
					VALUES (?, 'crash', ?, ?, 'old-salt', 150, 9700, 100000, ?, 1, 1)`,
					"crash-"+string(rune('0'+seq)), seq, strings.Repeat(string(rune('a'+seq)), 64), status); err != nil {
					t.Fatal(err)
				}
			}
			runFile(t, s, "0007_public_chains.tx.up.sql")

			c, err := s.CurrentChain(ctx, "crash")
			if err != nil || c.ID != "crash-c1" || c.Number != 1 || c.FirstSeq != 3 || c.LastSeq == nil || *c.LastSeq != 5 ||
				c.SealedSeed != nil || c.Salt == nil || *c.Salt != "old-salt" || *c.SaltSource != store.SaltLegacy ||
				c.RTPBasisPts != 9700 || c.MaxMultiplier != 100000 || c.Terminal != strings.Repeat("7e", 32) {
				t.Fatalf("the old chain after 0007: %+v, %v", c, err)
			}
			for seq, want := range map[int]struct {
				chain string
				pos   int64
			}{1: {"", 0}, 2: {"", 0}, 3: {"crash-c1", 1}, 4: {"crash-c1", 2}, 5: {"crash-c1", 3}} {
				r, err := s.Round(ctx, "crash", "crash-"+string(rune('0'+seq)))
				if err != nil || r.ChainID != want.chain || r.Position != want.pos || r.Hash != strings.Repeat(string(rune('a'+seq)), 64) || r.CrashPoint != 150 {
					t.Fatalf("round %d after 0007: %+v, %v; want chain %q position %d, its hash and crash point kept", seq, r, err, want.chain, want.pos)
				}
			}
			var n int
			err = s.QueryRowForTest(ctx, `SELECT count(*) FROM rounds WHERE chain_id IS NOT NULL`).Scan(&n)
			if err != nil || n != 3 {
				t.Fatalf("rounds with a chain: %d, %v", n, err)
			}
			if _, err := s.ExecForTest(ctx, `SELECT seed FROM chains`); err == nil {
				t.Fatal("the plain-text seeds are still stored")
			}
		})
	}
}

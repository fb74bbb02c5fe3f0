package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/engine"
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
			// Later migrations of rounds and hash_chains are undone first and
			// done again after 0007, in order.
			runFile(t, s, "0013_beacon_rounds.tx.down.sql")
			runFile(t, s, "0012_void_rounds.tx.down.sql")
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
			// 0007's down and up leave hash_chains and chain_contributions in
			// 0007's shape: the later migrations of those tables again.
			runFile(t, s, "0011_commit_reveal.tx.up.sql")
			runFile(t, s, "0012_void_rounds.tx.up.sql")
			runFile(t, s, "0013_beacon_rounds.tx.up.sql")

			c, err := s.CurrentChain(ctx, "crash")
			if err != nil || c.ID != "crash-c1" || c.Number != 1 || c.FirstSeq != 3 || c.LastSeq == nil || *c.LastSeq != 5 ||
				c.SealedSeed != nil || c.Salt == nil || *c.Salt != "old-salt" || *c.SaltSource != chains.SaltLegacy ||
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

// An installation upgraded across migration 0012: a void round keeps no
// crashed_at (it never crashed): a crashed_at it held moves to voided_at, and
// its rule is "unknown", since it was not recorded; a finished round keeps
// its crash. A retired chain gets the creation time of the next chain of its
// game, which replaced it in the same transaction; a retired chain with no
// later chain gets none.
func TestMigration0012VoidRoundsAndRetiredChains(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := openMigrated(t, b.open(t))
			ctx := t.Context()
			runFile(t, s, "0012_void_rounds.tx.down.sql")
			chain := `INSERT INTO hash_chains (id, game_id, number, first_seq, length, last_seq, terminal, rtp_bp, max_multiplier,
				formula_version, created_at, seeding_ends_at) VALUES (?, ?, ?, ?, 100, ?, ?, 9700, 100000, 1, ?, ?)`
			for _, c := range []struct {
				id, game      string
				number, first int64
				last          any
				created       int64
			}{
				{"crash-c1", "crash", 1, 1, int64(3), 100},
				{"crash-c2", "crash", 2, 4, nil, 900},
				{"other-c1", "other", 1, 1, int64(0), 50}, // retired in its seeding window, no chain after it
			} {
				if _, err := s.ExecForTest(ctx, chain, c.id, c.game, c.number, c.first, c.last, strings.Repeat("7e", 32), c.created, c.created+10); err != nil {
					t.Fatal(err)
				}
			}
			round := `INSERT INTO rounds (id, game_id, seq, status, betting_ends_at, started_at, crashed_at, created_at, chain_id, chain_position, hash, crash_point)
				VALUES (?, 'crash', ?, ?, 10, ?, ?, 5, 'crash-c1', ?, ?, 150)`
			for _, r := range []struct {
				seq              int64
				status           string
				started, crashed any
			}{
				{1, "finished", int64(20), int64(30)},
				{2, "void", int64(40), int64(45)}, // an old void round that stored an end
				{3, "void", nil, nil},             // voided before take-off, no end stored
			} {
				if _, err := s.ExecForTest(ctx, round, fmt.Sprint("crash-", r.seq), r.seq, r.status, r.started, r.crashed, r.seq, strings.Repeat("ab", 32)); err != nil {
					t.Fatal(err)
				}
			}
			runFile(t, s, "0012_void_rounds.tx.up.sql")

			for _, want := range []store.RoundRecord{
				{ID: "crash-1", Status: engine.RoundFinished, StartedAt: 20, CrashedAt: 30},
				{ID: "crash-2", Status: engine.RoundVoid, StartedAt: 40, VoidedAt: 45, VoidRule: engine.VoidUnknown},
				{ID: "crash-3", Status: engine.RoundVoid, VoidRule: engine.VoidUnknown},
			} {
				r, err := s.Round(ctx, "crash", want.ID)
				if err != nil || r.Status != want.Status || r.StartedAt != want.StartedAt || r.CrashedAt != want.CrashedAt ||
					r.VoidedAt != want.VoidedAt || r.VoidRule != want.VoidRule || r.CrashPoint != 150 {
					t.Fatalf("round %s after 0012: %+v, %v; want %+v", want.ID, r, err, want)
				}
			}
			for id, want := range map[string]int64{"crash-c1": 900, "crash-c2": 0, "other-c1": 0} {
				c, err := s.ChainByID(ctx, id)
				var got int64
				if c.RetiredAt != nil {
					got = int64(*c.RetiredAt)
				}
				if err != nil || got != want || (want == 0) != (c.RetiredAt == nil) {
					t.Fatalf("chain %s after 0012: retired_at %v, %v; want %d (0: none)", id, c.RetiredAt, err, want)
				}
			}
			// A void rule is one of the known ones.
			if _, err := s.ExecForTest(ctx, `UPDATE rounds SET void_rule = 'whim' WHERE id = 'crash-2'`); err == nil {
				t.Fatal("a void rule outside the known ones was stored")
			}
		})
	}
}

// An installation upgraded across migration 0013: its chains name no beacon
// round (a value it configured stays the chain's beacon contribution), and
// a round number or period below 1 is never stored.
func TestMigration0013ChainsBeforeNameNoBeaconRound(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := openMigrated(t, b.open(t))
			ctx := t.Context()
			runFile(t, s, "0013_beacon_rounds.tx.down.sql")
			if _, err := s.ExecForTest(ctx, `INSERT INTO hash_chains (id, game_id, number, first_seq, length, terminal, rtp_bp, max_multiplier,
				formula_version, created_at, seeding_ends_at, salt, salt_source, salt_fixed_at) VALUES ('crash-c1', 'crash', 1, 1, 100, ?, 9700, 100000, 1, 10, 20, ?, 'contributions', 20)`,
				strings.Repeat("7e", 32), strings.Repeat("5a", 32)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ExecForTest(ctx, `INSERT INTO chain_contributions (chain_id, source, name, value, received_at) VALUES ('crash-c1', 'beacon', 'drand quicknet round 12345678', ?, 20)`,
				strings.Repeat("be", 32)); err != nil {
				t.Fatal(err)
			}
			runFile(t, s, "0013_beacon_rounds.tx.up.sql")
			c, err := s.ChainByID(ctx, "crash-c1")
			if err != nil || c.Beacon.Network != "" || c.Beacon != (store.ChainBeacon{}) || c.Salt == nil || *c.Salt != strings.Repeat("5a", 32) {
				t.Fatalf("the chain after 0013: %+v, %v; want no beacon round, its salt kept", c, err)
			}
			list, err := s.Contributions(ctx, "crash-c1")
			if err != nil || len(list) != 1 || list[0].Source != chains.SourceBeacon || list[0].Value != strings.Repeat("be", 32) {
				t.Fatalf("contributions after 0013: %+v, %v; want the configured beacon value kept", list, err)
			}
			for _, q := range []string{
				`UPDATE hash_chains SET beacon_round = 0 WHERE id = 'crash-c1'`,
				`UPDATE hash_chains SET beacon_period_s = 0 WHERE id = 'crash-c1'`,
				`UPDATE hash_chains SET beacon_chain_hash = 'abc' WHERE id = 'crash-c1'`,
			} {
				if _, err := s.ExecForTest(ctx, q); err == nil {
					t.Fatalf("%s was stored", q)
				}
			}
		})
	}
}

package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/beacon"
	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/freebets"
	"github.com/crashstudio/crashgame/internal/launch"
	"github.com/crashstudio/crashgame/internal/operatorapi"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/seal"
	"github.com/crashstudio/crashgame/internal/sessions"
	"github.com/crashstudio/crashgame/internal/table"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// This file translates the parsed installation into the plain values each
// domain package is built from, so that none of them reads package config.

// walletSettings are the settings of the wallet client of op.
func walletSettings(op *config.Operator) wallet.Settings {
	return wallet.Settings{Operator: op.ID, URL: op.WalletURL, Secret: op.Secret, APIKey: op.APIKey}
}

// gameIDs are the ids of the installation's games, in file order.
func gameIDs(cfg *config.Config) []string {
	ids := make([]string, len(cfg.Games))
	for i, g := range cfg.Games {
		ids[i] = g.ID
	}
	return ids
}

// sessionOperators are the operators as opening a session needs them.
func sessionOperators(cfg *config.Config) []sessions.Operator {
	ops := make([]sessions.Operator, len(cfg.Operators))
	for i, op := range cfg.Operators {
		curs := make([]sessions.Currency, len(op.Currencies))
		for j, code := range op.CurrencyCodes() {
			limits, _ := op.Currency(code) // a copy
			curs[j] = sessions.Currency{Code: code, Limits: freebetLimits(limits)}
		}
		ops[i] = sessions.Operator{ID: op.ID, Enabled: op.Enabled, Games: op.Games, Currencies: curs, LegacyLaunchOff: !op.LegacyLaunch}
	}
	return ops
}

// freebetLimits are a currency's limits as a freebet grant must meet them.
func freebetLimits(l config.Limits) freebets.Limits {
	return freebets.Limits{MinBet: l.MinBet, MaxBet: l.MaxBet}
}

// engineGame is the rules of g as its table runs them.
func engineGame(g *config.Game) engine.Game {
	return engine.Game{ID: g.ID, RTPBasisPoints: g.RTPBasisPoints, MaxMultiplier: g.MaxMultiplier,
		Betting: g.Betting(), Pause: g.Pause(), Freebet: g.Freebet}
}

// chainSettings are how the tables keep their hash chains: the sealer of
// the seeds (from the installation's seed key), the seeding window as the
// engine takes it (a window of 0 in the file is none: negative), and the
// beacon whose round each new chain names, if any (nil: none).
func chainSettings(f config.Fairness) (*seal.Sealer, time.Duration, engine.Beacon, error) {
	key, err := seal.ParseKey(string(f.SeedKey))
	if err != nil {
		return nil, 0, nil, fmt.Errorf("fairness: seed_key: %w", err)
	}
	sealer, err := seal.New(key)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("fairness: %w", err)
	}
	window := f.SeedingWindow()
	if window == 0 {
		window = -1
	}
	if f.BeaconNetwork == "" {
		return sealer, window, nil, nil
	}
	network, err := beacon.Lookup(f.BeaconNetwork)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("fairness: beacon: %w", err)
	}
	client, err := beacon.NewClient(f.BeaconURL, network, beacon.ClientOptions{})
	if err != nil {
		return nil, 0, nil, fmt.Errorf("fairness: beacon: %w", err)
	}
	return sealer, window, client, nil
}

// revealWindow is the reveal window as the engine takes it: 0 in the file is
// none (negative).
func revealWindow(f config.Fairness) time.Duration {
	if w := f.RevealWindow(); w != 0 {
		return w
	}
	return -1
}

// engineOperators are every operator, enabled or not, as the tables take and
// settle their bets: a disabled operator's bets still settle.
func engineOperators(cfg *config.Config) map[string]engine.Operator {
	ops := make(map[string]engine.Operator, len(cfg.Operators))
	for _, op := range cfg.Operators {
		curs := make(map[string]round.Limits, len(op.Currencies))
		for _, c := range op.Currencies {
			curs[c.Code] = roundLimits(c.Limits)
		}
		ops[op.ID] = engine.Operator{Currencies: curs, ZeroWin: op.ZeroWin}
	}
	return ops
}

// roundLimits are a currency's limits as the round's rules take them: an
// unknown limit is 0.
func roundLimits(c config.Limits) round.Limits {
	var l round.Limits
	if c.MinBet != nil {
		l.MinBet = *c.MinBet
	}
	if c.MaxBet != nil {
		l.MaxBet = *c.MaxBet
	}
	if c.MaxWin != nil {
		l.MaxWin = *c.MaxWin
	}
	return l
}

// launchInstallation is what the operator routes serve: the catalogue of
// every operator, the public address and the languages.
func launchInstallation(cfg *config.Config) launch.Installation {
	in := launch.Installation{BaseURL: cfg.BaseURL, Languages: config.Languages, DefaultLanguage: cfg.DefaultLanguage,
		Games: make([]launch.Game, len(cfg.Games)), Operators: make([]launch.Operator, len(cfg.Operators))}
	for i, g := range cfg.Games {
		in.Games[i] = launch.Game{ID: g.ID, Name: g.Name, Studio: g.Studio, Category: g.Category, ImageURL: g.ImageURL,
			Demo: g.Demo, Mobile: g.Mobile, Desktop: g.Desktop, Freebet: g.Freebet}
	}
	for i, op := range cfg.Operators {
		curs := make([]launch.Currency, len(op.Currencies))
		for j, code := range op.CurrencyCodes() {
			limits, _ := op.Currency(code) // a copy
			curs[j] = launch.Currency{Code: code, MinBet: limits.MinBet, MaxBet: limits.MaxBet, MaxWin: limits.MaxWin}
		}
		in.Operators[i] = launch.Operator{ID: op.ID, Games: op.Games, Currencies: curs, Demo: op.Demo, HasWallet: op.HasWallet()}
	}
	return in
}

// operatorGames are the games of each operator, for the back office.
func operatorGames(cfg *config.Config) map[string][]string {
	out := make(map[string][]string, len(cfg.Operators))
	for _, op := range cfg.Operators {
		out[op.ID] = op.Games
	}
	return out
}

// operatorCredentials are how each operator's requests are authenticated.
func operatorCredentials(cfg *config.Config) []operatorapi.Operator {
	ops := make([]operatorapi.Operator, len(cfg.Operators))
	for i, op := range cfg.Operators {
		ops[i] = operatorapi.Operator{ID: op.ID, Enabled: op.Enabled, Secret: op.Secret}
	}
	return ops
}

// tableLimits are the limits of every currency of every operator, as a player's
// session shows them.
func tableLimits(cfg *config.Config) map[table.Currency]table.Limits {
	limits := map[table.Currency]table.Limits{}
	for _, op := range cfg.Operators {
		for _, code := range op.CurrencyCodes() {
			l, _ := op.Currency(code) // a copy
			limits[table.Currency{Operator: op.ID, Code: code}] = table.Limits{MinBet: l.MinBet, MaxBet: l.MaxBet, MaxWin: l.MaxWin}
		}
	}
	return limits
}

// clusterLease is how each table of a replica holds its leadership: the
// holder is the replica's name and a random part, so that a restarted
// replica is a new holder (its old lease is never mistaken for its own).
func clusterLease(c *config.Cluster) engine.LeaseSettings {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return engine.LeaseSettings{Holder: c.Replica + "/" + hex.EncodeToString(b[:]), TTL: c.LeaseTTL(), Renew: c.LeaseRenew()}
}

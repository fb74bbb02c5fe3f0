package main

import (
	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/freebets"
	"github.com/crashstudio/crashgame/internal/sessions"
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
		ops[i] = sessions.Operator{ID: op.ID, Enabled: op.Enabled, Games: op.Games, Currencies: curs}
	}
	return ops
}

// freebetLimits are a currency's limits as a freebet grant must meet them.
func freebetLimits(l config.Limits) freebets.Limits {
	return freebets.Limits{MinBet: l.MinBet, MaxBet: l.MaxBet}
}

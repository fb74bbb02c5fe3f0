package main

import (
	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// This file translates the parsed installation into the plain values each
// domain package is built from, so that none of them reads package config.

// walletSettings are the settings of the wallet client of op.
func walletSettings(op *config.Operator) wallet.Settings {
	return wallet.Settings{Operator: op.ID, URL: op.WalletURL, Secret: op.Secret, APIKey: op.APIKey}
}

// Package api holds the published OpenAPI documents of the integration: game.v1.yaml
// (operator to game), wallet.v1.yaml (game to operator) and table.v1.yaml (browser to
// game). They are the source of truth from which gen/ is generated; this package only
// embeds them so the programs can serve and validate against them. It must never hold
// hand-written copies of what the documents say.
package api

import "embed"

// Documents holds every published *.v1.yaml document of this folder, by file name.
//
//go:embed *.v1.yaml
var Documents embed.FS

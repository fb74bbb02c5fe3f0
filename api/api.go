// Package api holds the published documents of the integration: the OpenAPI
// documents game.v1.yaml (operator to game), wallet.v1.yaml (game to operator) and
// table.v1.yaml (browser to game), and table-stream.asyncapi.yaml (the live stream). They are the source of truth from which gen/ is generated; this package only
// embeds them so the programs can serve and validate against them. It must never hold
// hand-written copies of what the documents say.
package api

import "embed"

// Documents holds every published document of this folder, by file name: the
// OpenAPI documents (*.v1.yaml) and the stream's AsyncAPI document
// (table-stream.asyncapi.yaml).
//
//go:embed *.v1.yaml table-stream.asyncapi.yaml
var Documents embed.FS

// StreamDocument is the file name of the live stream's AsyncAPI 3.0 document.
// Its message payloads are schemas of table.v1.yaml.
const StreamDocument = "table-stream.asyncapi.yaml"

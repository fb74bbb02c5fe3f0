//go:build tools

// Package tools pins the versions of the code generators that the Makefile
// runs with `go run` (golangci-lint is run at its own version, outside this
// module: see the Makefile's lint), and of the programs integration/images.sh
// compiles into images (nats-server), so every machine uses the same ones.
package tools

import (
	_ "github.com/nats-io/nats-server/v2"
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
)

//go:build tools

// Package tools pins the versions of the code generators and linters that the
// Makefile runs with `go run`, and of the programs integration/images.sh
// compiles into images (nats-server), so every machine uses the same ones.
package tools

import (
	_ "github.com/nats-io/nats-server/v2"
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
	_ "honnef.co/go/tools/cmd/staticcheck"
)

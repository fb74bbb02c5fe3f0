//go:build tools

// Package tools pins the versions of the code generators and linters that the
// Makefile runs with `go run`, so every machine uses the same ones.
package tools

import (
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
	_ "honnef.co/go/tools/cmd/staticcheck"
)

package api

// The generated packages under gen/ are produced from the documents of this
// folder; run `go generate ./api` (or `make generate`) after changing one.
// oapi-codegen makes no constant of an open set of values (a schema with
// x-extensible-enum and no enum); extenum writes them, after it.

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config game.codegen.yaml game.v1.yaml
//go:generate go run ./extenum -doc game.v1.yaml -package game -out ../gen/game/game.enums.gen.go
//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config wallet.codegen.yaml wallet.v1.yaml

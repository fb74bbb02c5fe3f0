package api

// The generated packages under gen/ are produced from the documents of this
// folder; run `go generate ./api` (or `make generate`) after changing one.

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config game.codegen.yaml game.v1.yaml
//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config wallet.codegen.yaml wallet.v1.yaml

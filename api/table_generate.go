package api

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config table.codegen.yaml table.v1.yaml
//go:generate go run ./extenum -doc table.v1.yaml -package table -out ../gen/table/table.enums.gen.go

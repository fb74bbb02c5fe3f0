package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// validate checks one OpenAPI document with libopenapi-validator.
func validate(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		return fmt.Errorf("libopenapi: %w", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return fmt.Errorf("libopenapi-validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		var b strings.Builder
		for _, e := range verrs {
			fmt.Fprintf(&b, "\n  %s: %s", e.Message, e.Reason)
		}
		return fmt.Errorf("libopenapi-validator:%s", b.String())
	}
	return nil
}

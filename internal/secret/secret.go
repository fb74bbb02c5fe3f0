// Package secret holds a credential so that it is never shown by accident: an
// HMAC secret, an API key or a player's token.
package secret

import (
	"fmt"
	"log/slog"
)

// Secret is a credential: an HMAC secret, an API key or a token. Printing it
// with fmt (any verb), logging it with slog or marshalling it as text, JSON or
// YAML shows "[redacted]" (or nothing when empty). Use string(s) or s.Bytes()
// where the value itself is needed, and nowhere else.
type Secret string

const redacted = "[redacted]"

func (s Secret) shown() string {
	if s == "" {
		return ""
	}
	return redacted
}

// Bytes returns the secret as a new byte slice, e.g. the key for package signature.
func (s Secret) Bytes() []byte { return []byte(s) }

// Format implements fmt.Formatter so that every verb, %#v and %x included, prints
// the redacted form.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.shown())) }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.shown()) }

// MarshalText implements encoding.TextMarshaler, used by encoding/json and yaml.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.shown()), nil }

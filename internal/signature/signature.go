// Package signature owns the X-Signature scheme of the integration, one scheme for
// both directions: the lowercase hex of HMAC-SHA256 over the exact bytes of a request
// body with the operator's shared secret, and the 5 minute window on the timestamp
// carried inside that signed body. It signs and verifies bytes; it knows nothing of
// HTTP, operators or configuration.
//
// It must never verify over parsed or re-encoded JSON, compare signatures in
// variable time, or put a secret or a signature (received or computed) into an
// error message.
package signature

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/jsonint"
)

// Window is how far the timestamp inside a signed body may lie from the receiver's
// clock, in either direction (contract Limits; rule LIM-1).
const Window = 5 * time.Minute

// ErrInvalid is the one error for every refusal: missing, malformed or wrong
// signature, missing secret, missing or malformed timestamp, stale or future request.
// Every error returned by this package satisfies errors.Is(err, ErrInvalid), so that a
// caller maps them all to the same 401 INVALID_SIGNATURE (rule AUTH-9); the wrapped
// text says which check failed, for the log only.
var ErrInvalid = errors.New("invalid signature")

// hexLen is the length of a lowercase hex HMAC-SHA256.
const hexLen = 2 * sha256.Size

// Sign returns X-Signature for body: the lowercase hex HMAC-SHA256 of exactly these
// bytes under secret (rules AUTH-1 AUTH-2). Sign the bytes that go on the wire, never
// a value that is encoded again afterwards.
func Sign(secret, body []byte) string {
	return hex.EncodeToString(mac(secret, body))
}

func mac(secret, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks header (the X-Signature value) against body as received, before any
// JSON decoding (rule AUTH-3). The comparison is constant time over the decoded bytes.
//
// Only the form the contract defines is accepted: exactly 64 lowercase hex digits,
// nothing around them. An uppercase or padded header is refused even when its value is
// right, so that a sender who deviates from the contract finds out on its first call
// rather than at the first peer that is strict. An empty secret is refused: a key
// anyone can compute authenticates nothing.
func Verify(secret, body []byte, header string) error {
	if len(secret) == 0 {
		return fmt.Errorf("%w: no secret configured", ErrInvalid)
	}
	got, err := decodeHeader(header)
	if err != nil {
		return err
	}
	if !hmac.Equal(got, mac(secret, body)) {
		return fmt.Errorf("%w: signature does not match body", ErrInvalid)
	}
	return nil
}

// decodeHeader decodes a header of exactly 64 lowercase hex digits. The error says
// what is wrong with the shape, never what the header holds.
func decodeHeader(header string) ([]byte, error) {
	if header == "" {
		return nil, fmt.Errorf("%w: X-Signature is absent", ErrInvalid)
	}
	if len(header) != hexLen {
		return nil, fmt.Errorf("%w: X-Signature has %d characters, want %d lowercase hex digits", ErrInvalid, len(header), hexLen)
	}
	for i := 0; i < len(header); i++ {
		c := header[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return nil, fmt.Errorf("%w: X-Signature is not lowercase hex", ErrInvalid)
		}
	}
	b, err := hex.DecodeString(header)
	if err != nil { // unreachable after the loop above; kept so a change there fails closed
		return nil, fmt.Errorf("%w: X-Signature is not hex", ErrInvalid)
	}
	return b, nil
}

// CheckTimestamp refuses a timestamp (milliseconds since the epoch) lying more than
// Window before or after now (rules LIM-1 GAME-13).
//
// The window is symmetric: ambiguity AMB-26 leaves open whether future timestamps
// pass, and this package takes the first reading, so a sender whose clock runs more
// than 5 minutes ahead is refused just like a stale or replayed request. A distance of
// exactly Window is accepted; the distance is measured against now at its full
// precision.
func CheckTimestamp(ms int64, now time.Time) error {
	// time.Time.Sub saturates instead of overflowing, so extreme values of ms are
	// simply far away.
	d := now.Sub(time.UnixMilli(ms))
	switch {
	case d > Window:
		return fmt.Errorf("%w: timestamp is %s older than the clock, more than %s", ErrInvalid, d.Truncate(time.Millisecond), Window)
	case d < -Window:
		return fmt.Errorf("%w: timestamp is %s ahead of the clock, more than %s", ErrInvalid, (-d).Truncate(time.Millisecond), Window)
	}
	return nil
}

// VerifyRequest is the whole check of a signed request body: Verify over the raw
// bytes, then the "timestamp" member of the body's top-level JSON object, which must be
// an integer number of milliseconds, then CheckTimestamp against now (rules AUTH-3
// AUTH-4 LIM-1). Nothing of the body is decoded before its signature is checked.
//
// The timestamp must be present once, as a JSON integer (no fraction, no exponent, no
// quotes, no null), and the body must be one well-formed JSON object. The key is
// matched exactly ("Timestamp" is another member).
func VerifyRequest(secret, body []byte, header string, now time.Time) error {
	if err := Verify(secret, body, header); err != nil {
		return err
	}
	ms, err := Timestamp(body)
	if err != nil {
		return err
	}
	return CheckTimestamp(ms, now)
}

// Timestamp reads the top-level "timestamp" member of a JSON object, which must
// be present once as a JSON integer (ErrInvalid otherwise). The body is
// first checked whole by json.Valid, so the scan below walks well-formed JSON only
// and needs no allocation; a key written with escapes ("time\u0073tamp") is
// unquoted before it is compared.
func Timestamp(body []byte) (int64, error) {
	if !json.Valid(body) {
		return 0, fmt.Errorf("%w: body is not valid JSON", ErrInvalid)
	}
	i := skipSpace(body, 0)
	if body[i] != '{' {
		return 0, fmt.Errorf("%w: body is not a JSON object", ErrInvalid)
	}
	i = skipSpace(body, i+1)
	var (
		raw   []byte
		found bool
	)
	for body[i] != '}' {
		keyEnd := stringEnd(body, i)
		key := body[i:keyEnd]
		i = skipSpace(body, keyEnd) // at ':'
		i = skipSpace(body, i+1)    // at the value
		valueEnd := valueEnd(body, i)
		if isTimestampKey(key) {
			if found {
				return 0, fmt.Errorf("%w: body has timestamp twice", ErrInvalid)
			}
			found, raw = true, body[i:valueEnd]
		}
		i = skipSpace(body, valueEnd) // at ',' or '}'
		if body[i] == ',' {
			i = skipSpace(body, i+1)
		}
	}
	if !found {
		return 0, fmt.Errorf("%w: body has no timestamp", ErrInvalid)
	}
	// A string, null, a fraction, an exponent or a value out of the int64
	// range is refused.
	ms, err := jsonint.Parse(raw)
	if err != nil {
		return 0, fmt.Errorf("%w: timestamp is not an integer number of milliseconds", ErrInvalid)
	}
	return ms, nil
}

// isTimestampKey reports whether a quoted JSON key (quotes included) is exactly
// "timestamp".
func isTimestampKey(quoted []byte) bool {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted) == `"timestamp"`
	}
	var key string
	return json.Unmarshal(quoted, &key) == nil && key == "timestamp"
}

// The helpers below walk JSON that json.Valid has accepted; on such input they
// never index past the end.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just after the string that starts at b[i] == '"'.
func stringEnd(b []byte, i int) int {
	for i++; b[i] != '"'; i++ {
		if b[i] == '\\' {
			i++
		}
	}
	return i + 1
}

// valueEnd returns the index just after the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	default: // number, true, false, null
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' &&
			b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
			i++
		}
		return i
	}
}

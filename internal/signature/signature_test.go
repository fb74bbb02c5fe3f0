package signature_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/signature"
)

var (
	secret = []byte("acme-shared-secret-0123456789")
	// tsMs is the timestamp in the test bodies; now is the receiver clock at that instant.
	tsMs = int64(1767225600000)
	now  = time.UnixMilli(tsMs)
	body = []byte(`{"operator":"acme","timestamp":1767225600000,"currency":"BRL"}`)
)

type vector struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
	Body   string `json:"body"`
	Hex    string `json:"hex"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	data, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatalf("read vectors: %v", err)
	}
	var vs []vector
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatalf("decode vectors: %v", err)
	}
	if len(vs) < 5 {
		t.Fatalf("only %d vectors in testdata/vectors.json", len(vs))
	}
	return vs
}

// Rule AUTH-1 AUTH-2 AUTH-3
func TestSignAndVerifyOpenSSLVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			if got := signature.Sign([]byte(v.Secret), []byte(v.Body)); got != v.Hex {
				t.Errorf("Sign = %s, want %s (openssl)", got, v.Hex)
			}
			if err := signature.Verify([]byte(v.Secret), []byte(v.Body), v.Hex); err != nil {
				t.Errorf("Verify(openssl signature) = %v, want nil", err)
			}
		})
	}
}

// Rule AUTH-1 AUTH-3 AUTH-9 GAME-13
func TestVerifyRefuses(t *testing.T) {
	t.Parallel()
	good := signature.Sign(secret, body)

	altered := bytes.Clone(body)
	altered[len(altered)-3] ^= 0x01 // "BRL" becomes "BSL"

	var parsed map[string]any
	if err := json.Unmarshal(body, &parsed); err != nil {
		t.Fatal(err)
	}
	reencoded, err := json.Marshal(parsed) // same content, keys sorted
	if err != nil {
		t.Fatal(err)
	}
	indented, err := json.MarshalIndent(parsed, "", "  ")
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		secret []byte
		body   []byte
		header string
	}{
		{"altered byte", secret, altered, good},
		{"byte appended", secret, append(bytes.Clone(body), '\n'), good},
		{"byte removed", secret, body[:len(body)-1], good},
		{"other secret", []byte("other-secret-with-the-same-body-x"), body, good},
		{"empty secret", nil, body, signature.Sign(nil, body)},
		{"re-encoded json, keys sorted", secret, reencoded, good},
		{"re-encoded json, indented", secret, indented, good},
		{"same content, other key order", secret, []byte(`{"timestamp":1767225600000,"operator":"acme","currency":"BRL"}`), good},
		{"same content, other whitespace", secret, []byte(`{"operator": "acme", "timestamp": 1767225600000, "currency": "BRL"}`), good},
		{"uppercase hex", secret, body, strings.ToUpper(good)},
		{"one uppercase digit", secret, body, strings.ToUpper(good[:1]) + good[1:]},
		{"truncated header", secret, body, good[:len(good)-1]},
		{"half header", secret, body, good[:32]},
		{"header too long", secret, body, good + "0"},
		{"trailing space", secret, body, good + " "},
		{"leading space", secret, body, " " + good},
		{"sha256= prefix", secret, body, "sha256=" + good},
		{"base64 of the mac", secret, body, "omzobKw7HUxaIfVKz+DRivOTuQJZcjqtOQ8oqgrck+g="},
		{"not hex", secret, body, strings.Repeat("g", 64)},
		{"empty header", secret, body, ""},
		{"other body's signature", secret, body, signature.Sign(secret, []byte(`{}`))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := signature.Verify(tt.secret, tt.body, tt.header)
			if !errors.Is(err, signature.ErrInvalid) {
				t.Fatalf("Verify = %v, want ErrInvalid", err)
			}
			assertNoSignatureInError(t, err, tt.header, good, signature.Sign(tt.secret, tt.body))
		})
	}
}

// assertNoSignatureInError fails when the error text holds a signature, received
// or computed (project rule: never log full signatures).
func assertNoSignatureInError(t *testing.T, err error, sigs ...string) {
	t.Helper()
	for _, s := range sigs {
		if len(s) >= 16 && strings.Contains(err.Error(), strings.TrimSpace(s)) {
			t.Errorf("error %q contains a signature", err)
		}
	}
}

// Rule LIM-1 GAME-13
func TestCheckTimestamp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		ms     int64
		now    time.Time
		accept bool
	}{
		{"same instant", tsMs, now, true},
		{"4:59 old", tsMs, now.Add(4*time.Minute + 59*time.Second), true},
		{"4:59 ahead", tsMs, now.Add(-(4*time.Minute + 59*time.Second)), true},
		{"exactly 5:00 old", tsMs, now.Add(5 * time.Minute), true},
		{"exactly 5:00 ahead", tsMs, now.Add(-5 * time.Minute), true},
		{"5:00.001 old", tsMs, now.Add(5*time.Minute + time.Millisecond), false},
		{"5:00.001 ahead", tsMs, now.Add(-5*time.Minute - time.Millisecond), false},
		{"5:00 and a nanosecond old", tsMs, now.Add(5*time.Minute + time.Nanosecond), false},
		{"5:01 old", tsMs, now.Add(5*time.Minute + time.Second), false},
		// AMB-26: the window is symmetric, so a clock far ahead is refused too.
		{"5:01 ahead", tsMs, now.Add(-(5*time.Minute + time.Second)), false},
		{"seconds instead of milliseconds", tsMs / 1000, now, false},
		{"microseconds instead of milliseconds", tsMs * 1000, now, false},
		{"zero", 0, now, false},
		{"negative", -1, now, false},
		{"min int64", math.MinInt64, now, false},
		{"max int64", math.MaxInt64, now, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := signature.CheckTimestamp(tt.ms, tt.now)
			if tt.accept && err != nil {
				t.Fatalf("CheckTimestamp = %v, want accepted", err)
			}
			if !tt.accept && !errors.Is(err, signature.ErrInvalid) {
				t.Fatalf("CheckTimestamp = %v, want ErrInvalid", err)
			}
		})
	}
}

// Rule AUTH-3 AUTH-4 AUTH-9 LIM-1 GAME-13
func TestVerifyRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   string
		now    time.Time
		accept bool
	}{
		{"valid", string(body), now, true},
		{"valid with whitespace and unicode", "{\n\t\"player_name\": \"João 🚀\",\r\n \"timestamp\" : 1767225600000 }\n", now, true},
		{"valid, timestamp 4:59 old", string(body), now.Add(4*time.Minute + 59*time.Second), true},
		{"valid, timestamp 4:59 ahead", string(body), now.Add(-(4*time.Minute + 59*time.Second)), true},
		{"timestamp exactly 5:00 old", string(body), now.Add(5 * time.Minute), true},
		{"timestamp exactly 5:00 ahead", string(body), now.Add(-5 * time.Minute), true},
		{"timestamp 5:01 old", string(body), now.Add(5*time.Minute + time.Second), false},
		{"timestamp 5:01 ahead", string(body), now.Add(-(5*time.Minute + time.Second)), false},
		{"missing timestamp", `{"operator":"acme"}`, now, false},
		{"timestamp only in a nested object", `{"operator":"acme","x":{"timestamp":1767225600000}}`, now, false},
		{"timestamp key in other case", `{"Timestamp":1767225600000}`, now, false},
		{"timestamp as float", `{"timestamp":1767225600000.0}`, now, false},
		{"timestamp with fraction", `{"timestamp":1767225600000.5}`, now, false},
		{"timestamp with exponent", `{"timestamp":1.7672256e12}`, now, false},
		{"timestamp as string", `{"timestamp":"1767225600000"}`, now, false},
		{"timestamp null", `{"timestamp":null}`, now, false},
		{"timestamp bool", `{"timestamp":true}`, now, false},
		{"timestamp object", `{"timestamp":{"ms":1767225600000}}`, now, false},
		{"timestamp out of int64 range", `{"timestamp":99999999999999999999}`, now, false},
		{"timestamp in seconds", `{"timestamp":1767225600}`, now, false},
		{"timestamp twice", `{"timestamp":1767225600000,"timestamp":1767225600000}`, now, false},
		{"body is an array", `[{"timestamp":1767225600000}]`, now, false},
		{"body is a number", `1767225600000`, now, false},
		{"empty body", ``, now, false},
		{"invalid json after timestamp", `{"timestamp":1767225600000,"x":}`, now, false},
		{"unterminated object", `{"timestamp":1767225600000`, now, false},
		{"data after the object", `{"timestamp":1767225600000} {}`, now, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := []byte(tt.body)
			sig := signature.Sign(secret, b)
			err := signature.VerifyRequest(secret, b, sig, tt.now)
			if tt.accept {
				if err != nil {
					t.Fatalf("VerifyRequest = %v, want accepted", err)
				}
				return
			}
			if !errors.Is(err, signature.ErrInvalid) {
				t.Fatalf("VerifyRequest = %v, want ErrInvalid", err)
			}
			assertNoSignatureInError(t, err, sig)
		})
	}
}

// Rule AUTH-3 AUTH-9
func TestVerifyRequestChecksSignatureFirst(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   []byte
		header string
	}{
		{"good body, wrong signature", body, signature.Sign([]byte("other-secret-with-the-same-body-x"), body)},
		{"malformed body, wrong signature", []byte(`{"timestamp":`), strings.Repeat("0", 64)},
		{"stale body, no signature", []byte(`{"timestamp":1}`), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := signature.VerifyRequest(secret, tt.body, tt.header, now)
			if !errors.Is(err, signature.ErrInvalid) {
				t.Fatalf("VerifyRequest = %v, want ErrInvalid", err)
			}
			// The body of an unauthenticated request is never read: the refusal is
			// about the signature, not about the timestamp or the JSON.
			if msg := err.Error(); strings.Contains(msg, "timestamp") || strings.Contains(msg, "JSON") {
				t.Errorf("VerifyRequest = %q; the body was inspected before its signature", msg)
			}
		})
	}
}

// FuzzVerifyRequest checks that no input panics, that every refusal is ErrInvalid
// and carries no signature, and that nothing is accepted unless its header is the
// signature this package computes over that exact body with that secret.
func FuzzVerifyRequest(f *testing.F) {
	f.Add(secret, body, signature.Sign(secret, body), tsMs)
	f.Add(secret, []byte(`{"timestamp":1767225600000}`), strings.Repeat("a", 64), tsMs)
	f.Fuzz(func(t *testing.T, secret, body []byte, header string, nowMs int64) {
		now := time.UnixMilli(nowMs)
		want := signature.Sign(secret, body)

		// Rule AUTH-3 AUTH-9
		err := signature.VerifyRequest(secret, body, header, now)
		if err == nil && (header != want || len(secret) == 0) {
			t.Fatalf("accepted header %q that is not Sign(secret, body)", header)
		}
		if err != nil {
			if !errors.Is(err, signature.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			if strings.Contains(err.Error(), want) {
				t.Fatalf("error %q contains the computed signature", err)
			}
		}

		// With the right signature the outcome depends on the body alone, and
		// refusals still never carry the signature.
		err = signature.VerifyRequest(secret, body, want, now)
		if err != nil && (!errors.Is(err, signature.ErrInvalid) || strings.Contains(err.Error(), want)) {
			t.Fatalf("signed body: error %q", err)
		}
		if err == nil && len(secret) == 0 {
			t.Fatal("accepted a body signed with an empty secret")
		}
	})
}

func BenchmarkVerifyRequest(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"operator":"acme","timestamp":1767225600000,"request_id":"3f1c2a9e-7b41-4d2a-9a51-0c6e8f7d2b11",`)
	sb.WriteString(`"currency":"BRL","game_id":"crash","token":"tok_9f8e7d6c5b4a39281706f5e4d3c2b1a0",`)
	sb.WriteString(`"player_id":"player-000123456","transaction_id":"tx-000000000000123456",`)
	sb.WriteString(`"amount":12345,"note":"`)
	for sb.Len() < 298 {
		sb.WriteByte('x')
	}
	sb.WriteString(`"}`)
	b300 := []byte(sb.String())
	if len(b300) != 300 {
		b.Fatalf("body is %d bytes, want 300", len(b300))
	}
	sig := signature.Sign(secret, b300)
	if err := signature.VerifyRequest(secret, b300, sig, now); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(b300)))
	b.ReportAllocs()
	for b.Loop() {
		if err := signature.VerifyRequest(secret, b300, sig, now); err != nil {
			b.Fatal(err)
		}
	}
}

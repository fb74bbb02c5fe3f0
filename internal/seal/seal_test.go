package seal_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/crashstudio/crashgame/internal/seal"
)

func mustSealer(t *testing.T, hexKey string) *seal.Sealer {
	t.Helper()
	key, err := seal.ParseKey(hexKey)
	if err != nil {
		t.Fatal(err)
	}
	s, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSealOpens(t *testing.T) {
	t.Parallel()
	s := mustSealer(t, strings.Repeat("ab", 32))
	plain := []byte("a chain seed of thirty-two bytes")
	sealed, err := s.Seal(plain, "crash-c1")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, plain) {
		t.Fatal("the sealed value contains the plain one")
	}
	again, _ := s.Seal(plain, "crash-c1")
	if bytes.Equal(sealed, again) {
		t.Fatal("two seals of one value are equal: the nonce is not random")
	}
	got, err := s.Open(sealed, "crash-c1")
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	other := mustSealer(t, strings.Repeat("cd", 32))
	altered := bytes.Clone(sealed)
	altered[len(altered)-1] ^= 1
	for name, open := range map[string]func() ([]byte, error){
		"another key":   func() ([]byte, error) { return other.Open(sealed, "crash-c1") },
		"another owner": func() ([]byte, error) { return s.Open(sealed, "crash-c2") },
		"altered":       func() ([]byte, error) { return s.Open(altered, "crash-c1") },
		"truncated":     func() ([]byte, error) { return s.Open(sealed[:10], "crash-c1") },
	} {
		if got, err := open(); !errors.Is(err, seal.ErrOpen) || got != nil {
			t.Errorf("%s: Open = %q, %v; want ErrOpen", name, got, err)
		}
	}
}

func TestParseKeyNeverRepeatsIt(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"", "abc", strings.Repeat("zz", 32), strings.Repeat("ab", 31)} {
		_, err := seal.ParseKey(k)
		if err == nil {
			t.Fatalf("ParseKey(%q) accepted", k)
		}
		if len(k) > 4 && strings.Contains(err.Error(), k) {
			t.Fatalf("the error repeats the key: %v", err)
		}
	}
}

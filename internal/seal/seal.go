// Package seal keeps a secret at rest: it encrypts a hash chain's seed with
// AES-256-GCM under the installation's key (from the environment, never from
// the database), bound to what it belongs to (the chain's id, as additional
// data), so that a reader of the database alone learns nothing of the seed,
// and a sealed seed copied to another chain's row does not open.
//
// It must never log, print or return in an error the key or a plain secret,
// and never store the key.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
)

// KeySize is the length of a key: 32 bytes (AES-256), written as 64 hex digits.
const KeySize = 32

// ErrOpen: a sealed value did not open: another key, another owner, or
// altered bytes.
var ErrOpen = errors.New("seal: the sealed value does not open with this key for this owner")

// Sealer seals and opens values with one key. It is safe for concurrent use.
type Sealer struct {
	aead cipher.AEAD
}

// ParseKey reads a key written as 64 hex digits. The error never repeats it.
func ParseKey(s string) ([]byte, error) {
	if len(s) != 2*KeySize {
		return nil, fmt.Errorf("seal: a key is %d hex digits, got %d characters", 2*KeySize, len(s))
	}
	key, err := hex.DecodeString(s)
	if err != nil {
		return nil, errors.New("seal: the key is not hex")
	}
	return key, nil
}

// New returns a sealer with key (KeySize bytes).
func New(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("seal: a key is %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts plain for owner: a random nonce followed by the ciphertext
// and its tag.
func (s *Sealer) Seal(plain []byte, owner string) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal: nonce: %w", err)
	}
	return s.aead.Seal(nonce, nonce, plain, []byte(owner)), nil
}

// Open decrypts what Seal returned for the same owner; anything else is
// ErrOpen.
func (s *Sealer) Open(sealed []byte, owner string) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return nil, ErrOpen
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(owner))
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}

// Package fairness owns the provably fair part of the game: the SHA-256 hash
// chain that fixes every round's outcome before the first round is played, the
// crash-point formula that turns a round's hash into its crash point, and the
// checks a player or an auditor runs to verify a round afterwards
// (`crashgame verify`). The exact rules, byte encodings included, are the
// Formula constant; the table page and the player API show that same text.
//
// It must never use floating point (every step is integer arithmetic, 128-bit
// where a product exceeds 64 bits, via math/bits), never depend on anything but
// the round hash, the published salt, the RTP and the maximum multiplier, and
// never reveal a hash: a Chain hands a round's hash to its caller, who must not
// show it (nor log it, nor put it in an error) before that round has crashed,
// since a revealed hash gives away its own crash point and SHA-256 of it gives
// away every earlier round's hash. A Chain's String, GoString and LogValue show
// only its length and its (public) terminal hash, and no error of this package
// contains a hash or a seed. The package knows nothing of rounds' timing,
// storage, HTTP or money.
//
// Encodings, pinned:
//   - A hash is 32 raw bytes; it is shown as 64 lowercase hex digits (ParseHash
//     also accepts uppercase).
//   - The chain hashes raw bytes: h(0) = SHA-256(the 32 seed bytes), h(i+1) =
//     SHA-256(the 32 bytes of h(i)), never the hex text.
//   - The HMAC key is the round hash's 32 raw bytes; the message is the salt's
//     UTF-8 bytes exactly as published (no trimming, no normalisation).
//   - r is the HMAC's first 8 bytes read big-endian, shifted right by 12: the
//     top 52 bits, which are the HMAC's first 13 hex digits.
//
// The law the formula gives (TestCrashPointCountIsExact checks it exactly,
// counting over all 2^52 values of r, for every x up to 200.00x and a 5 % sweep
// beyond, for several settings): with M = 2^52, R = rtp_bp and x a multiplier in hundredths with
// 101 <= x <= max_multiplier, exactly floor(R*M / (100*x)) of the M values of r
// give crash >= x, so P(crash >= x) = floor(R*M/(100x))/M, which is RTP/x
// (RTP = R/10000, x read as x/100) up to less than 2^-52, and a cashout at any
// target x returns RTP minus less than x/(100*2^52). A crash of exactly 1.00x
// has probability 1 - P(crash >= 101), about 1 - RTP/1.01 (3.96 % at 97 %).
package fairness

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// Formula is the player-facing statement of the rules, exactly as this package
// computes them. The table page and GET /api/v1/fairness show it verbatim.
const Formula = `Each round's hash is revealed after its crash. A hash is 32 bytes, shown as 64 lowercase hex digits.
Chain: SHA-256 of a round's hash (of its 32 bytes, not of its hex text) is the previous round's hash; SHA-256 of the first round's hash is the terminal hash, published before the first round.
r = the top 52 bits of HMAC-SHA256(key = the round hash's 32 bytes, message = the salt's UTF-8 bytes exactly as published), as an unsigned integer: the first 13 hex digits of the HMAC.
crash point in hundredths = max(100, floor(rtp_bp * 2^52 / (100 * (2^52 - r)))), capped at max_multiplier.
Exact integer arithmetic; 153 means 1.53x. So P(crash point >= x) = RTP / x (to within 2^-52) for every x on the hundredths grid up to max_multiplier.`

const (
	// DrawBits is how many bits of the HMAC make r.
	DrawBits = 52
	// DrawRange is 2^52, the number of values r can take (0 <= r < DrawRange).
	DrawRange = uint64(1) << DrawBits

	// MinCrash is the lowest crash point, 1.00x in hundredths.
	MinCrash = 100
	// MaxRTPBasisPoints is the highest RTP a game may have, 100.00 %.
	MaxRTPBasisPoints = 10000
	// MinMaxMultiplier is the lowest maximum multiplier a game may have, 1.01x:
	// below it every round would crash at 1.00x.
	MinMaxMultiplier = 101
)

// Errors of this package; each returned error wraps one of them.
var (
	ErrInvalidHash   = errors.New("fairness: invalid hash")
	ErrInvalidParams = errors.New("fairness: invalid parameters")
	ErrNoSuchRound   = errors.New("fairness: no such round in the chain")
	ErrNotInChain    = errors.New("fairness: hash does not lead to the terminal hash")
)

// CheckParams reports whether salt, rtpBP and maxMultiplier are a valid setting
// of the formula: a non-empty UTF-8 salt, 1 <= rtpBP <= 10000 and
// maxMultiplier >= 101. The error wraps ErrInvalidParams.
func CheckParams(salt string, rtpBP, maxMultiplier int64) error {
	if salt == "" {
		return fmt.Errorf("%w: the salt is empty", ErrInvalidParams)
	}
	if !utf8.ValidString(salt) {
		return fmt.Errorf("%w: the salt is not valid UTF-8", ErrInvalidParams)
	}
	_, err := checkNumbers(rtpBP, maxMultiplier)
	return err
}

// checkNumbers checks rtpBP and maxMultiplier (see CheckParams) and returns
// rtpBP as the unsigned factor of the formula's numerator.
func checkNumbers(rtpBP, maxMultiplier int64) (uint64, error) {
	if rtpBP < 1 || rtpBP > MaxRTPBasisPoints {
		return 0, fmt.Errorf("%w: rtp_bp %d is outside 1..%d", ErrInvalidParams, rtpBP, MaxRTPBasisPoints)
	}
	if maxMultiplier < MinMaxMultiplier {
		return 0, fmt.Errorf("%w: max_multiplier %d is below %d", ErrInvalidParams, maxMultiplier, MinMaxMultiplier)
	}
	return uint64(rtpBP), nil
}

// RoundHMAC returns HMAC-SHA256 with the round hash's 32 bytes as the key and
// the salt's bytes as the message.
func RoundHMAC(hash [32]byte, salt string) [32]byte {
	m := hmac.New(sha256.New, hash[:])
	m.Write([]byte(salt)) // a hash.Hash never returns an error from Write
	var sum [32]byte
	m.Sum(sum[:0])
	return sum
}

// Draw returns the formula's r for a round: the top 52 bits of
// RoundHMAC(hash, salt), 0 <= r < DrawRange.
func Draw(hash [32]byte, salt string) uint64 {
	mac := RoundHMAC(hash, salt)
	return binary.BigEndian.Uint64(mac[:8]) >> (64 - DrawBits)
}

// CrashPoint returns the crash point, in hundredths, of the round whose hash is
// hash, for a game with the published salt, rtpBP (basis points) and
// maxMultiplier (hundredths). It panics when rtpBP or maxMultiplier is out of
// range (see CheckParams): a game's settings are checked once, at start-up.
func CrashPoint(hash [32]byte, salt string, rtpBP, maxMultiplier int64) int64 {
	return CrashFromDraw(Draw(hash, salt), rtpBP, maxMultiplier)
}

// CrashFromDraw is the arithmetic half of the formula:
// min(maxMultiplier, max(100, floor(rtpBP * 2^52 / (100 * (2^52 - r))))).
// It panics when r >= DrawRange or when rtpBP or maxMultiplier is out of range.
//
// rtpBP * 2^52 reaches 10000 * 2^52 > 2^65, so the numerator is a 128-bit
// product (bits.Mul64) and the division a 128-by-64 one (bits.Div64); the
// divisor 100 * (2^52 - r) is at most 100 * 2^52 < 2^59, and the high word of
// the numerator (rtpBP >> 12 <= 2) is below it, so the quotient fits in 64 bits
// (it is at most maxQuotient = 100 * 2^52 < 2^59, so it also fits in an int64).
func CrashFromDraw(r uint64, rtpBP, maxMultiplier int64) int64 {
	rtp, err := checkNumbers(rtpBP, maxMultiplier)
	if err != nil {
		panic(err)
	}
	if r >= DrawRange {
		panic(fmt.Sprintf("fairness: r = %d is not below 2^52", r))
	}
	hi, lo := bits.Mul64(rtp, DrawRange)
	q, _ := bits.Div64(hi, lo, 100*(DrawRange-r))
	q = min(q, maxQuotient) // changes nothing: it states the bound that makes int64(q) exact
	return min(max(MinCrash, int64(q)), maxMultiplier)
}

// maxQuotient is the largest quotient of CrashFromDraw: rtpBP at
// MaxRTPBasisPoints and r at DrawRange - 1 give 10000 * 2^52 / 100.
const maxQuotient = MaxRTPBasisPoints / 100 * DrawRange

// ParseHash parses a hash written as 64 hex digits (lowercase as published;
// uppercase accepted). The error wraps ErrInvalidHash and does not repeat s.
func ParseHash(s string) ([32]byte, error) {
	var h [32]byte
	if len(s) != hex.EncodedLen(len(h)) {
		return h, fmt.Errorf("%w: want 64 hex digits, got %d characters", ErrInvalidHash, len(s))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		// The length is right, so the only failure is a non-hex character.
		return [32]byte{}, fmt.Errorf("%w: a character is not a hex digit", ErrInvalidHash)
	}
	return h, nil
}

// FormatHash returns h as 64 lowercase hex digits, the published form.
func FormatHash(h [32]byte) string {
	return hex.EncodeToString(h[:])
}

// VerifyRound recomputes a round's crash point from its revealed hash (hex) and
// the game's published salt, rtpBP and maxMultiplier: what `crashgame verify`
// prints. It checks its inputs instead of panicking. To check that the hash
// belongs to the published chain, see ChainPosition.
func VerifyRound(hashHex, salt string, rtpBP, maxMultiplier int64) (crash int64, err error) {
	h, err := ParseHash(hashHex)
	if err != nil {
		return 0, err
	}
	if err := CheckParams(salt, rtpBP, maxMultiplier); err != nil {
		return 0, err
	}
	return CrashPoint(h, salt, rtpBP, maxMultiplier), nil
}

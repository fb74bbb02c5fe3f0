package fairness

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const publishedSalt = "0000000000000000000301e2801a9a9598bfb114e574a91a887f2132f33047e6"

// vectorFile is testdata/vectors.json, written by testdata/vectors.py.
type vectorFile struct {
	About    string `json:"about"`
	Seed     string `json:"seed"`
	Length   int    `json:"length"`
	Terminal string `json:"terminal"`
	Settings []struct {
		Salt          string `json:"salt"`
		RTPBP         int64  `json:"rtp_bp"`
		MaxMultiplier int64  `json:"max_multiplier"`
	} `json:"settings"`
	Rounds []struct {
		Round   int    `json:"round"`
		Hash    string `json:"hash"`
		Results []struct {
			R     uint64 `json:"r"`
			Crash int64  `json:"crash"`
		} `json:"results"`
	} `json:"rounds"`
	Draws []struct {
		Note          string `json:"note"`
		R             uint64 `json:"r"`
		RTPBP         int64  `json:"rtp_bp"`
		MaxMultiplier int64  `json:"max_multiplier"`
		Crash         int64  `json:"crash"`
	} `json:"draws"`
}

func loadVectors(t *testing.T) *vectorFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var v vectorFile
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("testdata/vectors.json: %v", err)
	}
	if v.Length < 1 || len(v.Rounds) != v.Length || len(v.Settings) == 0 || len(v.Draws) == 0 {
		t.Fatalf("testdata/vectors.json: length %d, %d rounds, %d settings, %d draws", v.Length, len(v.Rounds), len(v.Settings), len(v.Draws))
	}
	return &v
}

func mustParse(t *testing.T, s string) [32]byte {
	t.Helper()
	h, err := ParseHash(s)
	if err != nil {
		t.Fatalf("ParseHash(%q): %v", s, err)
	}
	return h
}

// TestVectorsChain: the chain from the script's seed has the script's terminal
// and round hashes.
func TestVectorsChain(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	c := NewChain(mustParse(t, v.Seed), v.Length)
	if c.Len() != v.Length {
		t.Errorf("Len() = %d, want %d", c.Len(), v.Length)
	}
	if got := FormatHash(c.Terminal()); got != v.Terminal {
		t.Errorf("Terminal() = %s, want %s", got, v.Terminal)
	}
	for i, round := range v.Rounds {
		if round.Round != i+1 {
			t.Fatalf("vector %d is round %d", i, round.Round)
		}
		h, err := c.Hash(round.Round)
		if err != nil {
			t.Fatalf("Hash(%d): %v", round.Round, err)
		}
		if got := FormatHash(h); got != round.Hash {
			t.Errorf("Hash(%d) = %s, want %s", round.Round, got, round.Hash)
		}
	}
}

// TestVectorsCrash: every round's r and crash point under every setting, by
// CrashPoint and by VerifyRound.
func TestVectorsCrash(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	var ones, capped int
	for _, round := range v.Rounds {
		h := mustParse(t, round.Hash)
		if len(round.Results) != len(v.Settings) {
			t.Fatalf("round %d: %d results for %d settings", round.Round, len(round.Results), len(v.Settings))
		}
		for i, s := range v.Settings {
			want := round.Results[i]
			if got := Draw(h, s.Salt); got != want.R {
				t.Errorf("round %d, setting %d: Draw = %d, want %d", round.Round, i, got, want.R)
			}
			if got := CrashPoint(h, s.Salt, s.RTPBP, s.MaxMultiplier); got != want.Crash {
				t.Errorf("round %d, setting %d: CrashPoint = %d, want %d", round.Round, i, got, want.Crash)
			}
			got, err := VerifyRound(round.Hash, s.Salt, s.RTPBP, s.MaxMultiplier)
			if err != nil || got != want.Crash {
				t.Errorf("round %d, setting %d: VerifyRound = %d, %v; want %d", round.Round, i, got, err, want.Crash)
			}
			switch want.Crash {
			case MinCrash:
				ones++
			case s.MaxMultiplier:
				capped++
			}
		}
	}
	// Keep the script honest: its rounds must exercise both ends.
	if ones == 0 || capped == 0 {
		t.Errorf("the vectors have %d crashes at 1.00x and %d at the cap; want some of each", ones, capped)
	}
}

// TestVectorsDraws: the script's edge cases of the arithmetic (r = 0, r near
// 2^52, thresholds, exact 100, caps).
func TestVectorsDraws(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	for _, d := range v.Draws {
		if got := CrashFromDraw(d.R, d.RTPBP, d.MaxMultiplier); got != d.Crash {
			t.Errorf("%s: CrashFromDraw(%d, %d, %d) = %d, want %d", d.Note, d.R, d.RTPBP, d.MaxMultiplier, got, d.Crash)
		}
	}
}

// TestVectorsRegenerate: the committed vectors.json is exactly what the
// committed script writes.
func TestVectorsRegenerate(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: not checking that testdata/vectors.py regenerates testdata/vectors.json")
	}
	out := filepath.Join(t.TempDir(), "vectors.json")
	cmd := exec.CommandContext(t.Context(), python, filepath.Join("testdata", "vectors.py"), out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python3 testdata/vectors.py: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("testdata/vectors.py writes something else than the committed testdata/vectors.json; run it and commit both")
	}
}

// TestDrawIsFirst13HexDigits: r is what Formula tells a player to read off the
// HMAC's hex.
func TestDrawIsFirst13HexDigits(t *testing.T) {
	t.Parallel()
	c := NewChain([32]byte{7}, 200)
	for k := 1; k <= c.Len(); k++ {
		h, err := c.Hash(k)
		if err != nil {
			t.Fatal(err)
		}
		mac := RoundHMAC(h, publishedSalt)
		want, err := strconv.ParseUint(FormatHash(mac)[:13], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := Draw(h, publishedSalt); got != want {
			t.Fatalf("round %d: Draw = %d, first 13 hex digits = %d", k, got, want)
		}
	}
}

// bigCount is floor(R * 2^52 / (100 x)), in math/big: the number of r that the
// law says give crash >= x, for 101 <= x <= max_multiplier.
func bigCount(rtpBP, x int64) uint64 {
	n := new(big.Int).Lsh(big.NewInt(rtpBP), DrawBits)
	return n.Quo(n, big100x(x)).Uint64()
}

// big100x is 100*x without overflow.
func big100x(x int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(100), big.NewInt(x))
}

// firstAtLeast is the smallest r with CrashFromDraw(r) >= x, DrawRange if none:
// a binary search, valid because the crash point is non-decreasing in r (the
// numerator is fixed, the denominator 100*(2^52-r) falls as r grows, and
// floor, max and min keep the order).
func firstAtLeast(x, rtpBP, maxMultiplier int64) uint64 {
	lo, hi := uint64(0), DrawRange
	for lo < hi {
		mid := lo + (hi-lo)/2
		if CrashFromDraw(mid, rtpBP, maxMultiplier) >= x {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// TestCrashPointCountIsExact proves the law in the package comment exactly,
// without sampling. Because the crash point is non-decreasing in r, the r giving
// crash >= x are exactly [t, 2^52) with t the first of them, found by binary
// search over the real function; so the count is 2^52 - t, every r counted
// once. That count must equal floor(R*2^52/(100x)) computed independently in
// math/big (the derivation: crash >= x  <=>  R*2^52 >= 100x(2^52-r)  <=>
// r >= 2^52 - R*2^52/(100x), whose smallest integer solution is
// 2^52 - floor(R*2^52/(100x))). Then P(crash >= x) = count/2^52, and the return
// of a cashout at x, (x/100)*count/2^52, lies in (RTP - x/(100*2^52), RTP]:
// in integers, 0 <= R*2^52 - 100*x*count < 100*x. At x <= 100 every r counts;
// above the cap none does.
func TestCrashPointCountIsExact(t *testing.T) {
	t.Parallel()
	var xs []int64
	for x := int64(90); x <= 20000; x++ { // every hundredth up to 200.00x
		xs = append(xs, x)
	}
	for x := int64(20000); x < 1<<40; x += x/20 + 1 { // then 5 % steps, far past any cap
		xs = append(xs, x)
	}
	tests := []struct {
		name          string
		rtpBP, maxMul int64
	}{
		{"97%, 10000x", 9700, 1000000},
		{"99%, 5x", 9900, 500},
		{"100%, uncapped", 10000, math.MaxInt64},
		{"0.01%, 1.01x", 1, 101},
		{"50%, 1000x", 5000, 100000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rm := new(big.Int).Lsh(big.NewInt(tt.rtpBP), DrawBits)
			for _, x := range slices.Concat(xs, []int64{tt.maxMul - 1, tt.maxMul, tt.maxMul + 1}) { // a copy: subtests run in parallel
				if x < 0 { // maxMul+1 overflowed
					continue
				}
				first := firstAtLeast(x, tt.rtpBP, tt.maxMul)
				if first > 0 && CrashFromDraw(first-1, tt.rtpBP, tt.maxMul) >= x {
					t.Fatalf("x = %d: binary search ended at %d, but %d also reaches x", x, first, first-1)
				}
				count := DrawRange - first
				var want uint64
				switch {
				case x <= MinCrash:
					want = DrawRange
				case x > tt.maxMul:
					want = 0
				default:
					want = bigCount(tt.rtpBP, x)
					// The return at x: 0 <= R*2^52 - 100*x*count < 100*x.
					short := new(big.Int).Sub(rm, new(big.Int).Mul(big100x(x), new(big.Int).SetUint64(count)))
					if short.Sign() < 0 || short.Cmp(big100x(x)) >= 0 {
						t.Errorf("x = %d: R*2^52 - 100*x*count = %v, want in [0, %v)", x, short, big100x(x))
					}
				}
				if count != want {
					t.Errorf("x = %d: %d values of r give crash >= x, want %d", x, count, want)
				}
			}
		})
	}
}

func TestCrashFromDrawEdges(t *testing.T) {
	t.Parallel()
	const m = DrawRange
	tests := []struct {
		name          string
		r             uint64
		rtpBP, maxMul int64
		want          int64
	}{
		{"r=0 at 97%", 0, 9700, 1000000, 100},
		{"r=0 at 100% is exactly 100", 0, 10000, math.MaxInt64, 100},
		{"r=0 at 0.01%", 0, 1, 101, 100},
		{"top r capped", m - 1, 9700, 1000000, 1000000},
		{"top r uncapped: 97*2^52", m - 1, 9700, math.MaxInt64, 97 << DrawBits},
		{"top r at 100%: 100*2^52, the largest quotient", m - 1, 10000, math.MaxInt64, 100 << DrawBits},
		{"half way at 100%: exactly 2.00x", m / 2, 10000, math.MaxInt64, 200},
		{"just below half way at 100%", m/2 - 1, 10000, math.MaxInt64, 199},
		{"three quarters at 100%: exactly 4.00x", 3 * m / 4, 10000, math.MaxInt64, 400},
		{"cap of 1.01x", m / 2, 9700, 101, 101},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := CrashFromDraw(tt.r, tt.rtpBP, tt.maxMul); got != tt.want {
				t.Errorf("CrashFromDraw(%d, %d, %d) = %d, want %d", tt.r, tt.rtpBP, tt.maxMul, got, tt.want)
			}
		})
	}
}

func TestCrashFromDrawPanics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		r             uint64
		rtpBP, maxMul int64
	}{
		{"r = 2^52", DrawRange, 9700, 1000000},
		{"r = max", math.MaxUint64, 9700, 1000000},
		{"rtp 0", 0, 0, 1000000},
		{"rtp above 100%", 0, 10001, 1000000},
		{"negative rtp", 0, -9700, 1000000},
		{"max 1.00x", 0, 9700, 100},
		{"negative max", 0, 9700, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				if recover() == nil {
					t.Errorf("CrashFromDraw(%d, %d, %d) did not panic", tt.r, tt.rtpBP, tt.maxMul)
				}
			}()
			CrashFromDraw(tt.r, tt.rtpBP, tt.maxMul)
		})
	}
}

// FuzzCrashFromDraw compares the 128-bit arithmetic with math/big over any r,
// RTP and cap.
func FuzzCrashFromDraw(f *testing.F) {
	f.Add(uint64(0), uint16(9700), uint64(1000000))
	f.Add(DrawRange-1, uint16(10000), uint64(math.MaxInt64))
	f.Add(DrawRange/2, uint16(1), uint64(101))
	f.Fuzz(func(t *testing.T, r uint64, rtp uint16, maxMul uint64) {
		r %= DrawRange
		rtpBP := 1 + int64(rtp)%MaxRTPBasisPoints
		capM := MinMaxMultiplier + int64(maxMul%(math.MaxInt64-MinMaxMultiplier))
		q := new(big.Int).Lsh(big.NewInt(rtpBP), DrawBits)
		q.Quo(q, new(big.Int).Mul(big.NewInt(100), new(big.Int).SetUint64(DrawRange-r)))
		want := q.Int64()
		want = min(max(want, MinCrash), capM)
		if got := CrashFromDraw(r, rtpBP, capM); got != want {
			t.Fatalf("CrashFromDraw(%d, %d, %d) = %d, math/big says %d", r, rtpBP, capM, got, want)
		}
	})
}

func TestParseHash(t *testing.T) {
	t.Parallel()
	const lower = "cd139b161afd30dee3e1924f98dbae55ed2206c803f2a1dff5f4b6b62ce0d9f7"
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"lowercase", lower, true},
		{"uppercase", strings.ToUpper(lower), true},
		{"empty", "", false},
		{"63 digits", lower[:63], false},
		{"65 digits", lower + "0", false},
		{"not hex", "g" + lower[1:], false},
		{"0x prefix", "0x" + lower[2:], false},
		{"surrounding space", " " + lower[1:], false},
		{"32 raw bytes", strings.Repeat("\xff", 32), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := ParseHash(tt.in)
			if !tt.ok {
				if !errors.Is(err, ErrInvalidHash) {
					t.Fatalf("ParseHash(%q) error = %v, want ErrInvalidHash", tt.in, err)
				}
				if tt.in != "" && strings.Contains(err.Error(), tt.in) {
					t.Errorf("the error repeats the input: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseHash(%q): %v", tt.in, err)
			}
			if got := FormatHash(h); got != lower {
				t.Errorf("FormatHash(ParseHash(%q)) = %s, want %s", tt.in, got, lower)
			}
		})
	}
}

func TestVerifyRound(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	good, s := v.Rounds[0], v.Settings[0]
	tests := []struct {
		name, hash, salt string
		rtpBP, maxMul    int64
		want             int64
		err              error
	}{
		{"a vector", good.Hash, s.Salt, s.RTPBP, s.MaxMultiplier, good.Results[0].Crash, nil},
		{"uppercase hash", strings.ToUpper(good.Hash), s.Salt, s.RTPBP, s.MaxMultiplier, good.Results[0].Crash, nil},
		{"short hash", good.Hash[:10], s.Salt, s.RTPBP, s.MaxMultiplier, 0, ErrInvalidHash},
		{"empty salt", good.Hash, "", s.RTPBP, s.MaxMultiplier, 0, ErrInvalidParams},
		{"salt not UTF-8", good.Hash, "\xff\xfe", s.RTPBP, s.MaxMultiplier, 0, ErrInvalidParams},
		{"rtp 0", good.Hash, s.Salt, 0, s.MaxMultiplier, 0, ErrInvalidParams},
		{"rtp 10001", good.Hash, s.Salt, 10001, s.MaxMultiplier, 0, ErrInvalidParams},
		{"max 100", good.Hash, s.Salt, s.RTPBP, 100, 0, ErrInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := VerifyRound(tt.hash, tt.salt, tt.rtpBP, tt.maxMul)
			if !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
				t.Fatalf("VerifyRound error = %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("VerifyRound = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestFormulaStatesTheEncodings: the player-facing text names every choice a
// second implementation needs.
func TestFormulaStatesTheEncodings(t *testing.T) {
	t.Parallel()
	for _, want := range []string{
		"32 bytes", "lowercase hex", "not of its hex text", "terminal hash",
		"top 52 bits", "HMAC-SHA256(key = the round hash's 32 bytes", "UTF-8 bytes exactly as published",
		"first 13 hex digits", "max(100, floor(rtp_bp * 2^52 / (100 * (2^52 - r))))", "capped at max_multiplier",
	} {
		if !strings.Contains(Formula, want) {
			t.Errorf("Formula does not say %q", want)
		}
	}
}

func BenchmarkCrashPoint(b *testing.B) {
	var h [32]byte
	for i := 0; b.Loop(); i++ {
		h[0], h[1], h[2] = byte(i), byte(i>>8), byte(i>>16)
		CrashPoint(h, publishedSalt, 9700, 1000000)
	}
}

// Package beacontest runs a local randomness beacon for tests: an HTTP
// server that answers drand's HTTP API for one network of its own, signing
// each round on demand with a BLS key pair it generates when it starts. Its
// signatures are real (the scheme of beacon.Scheme), so the code under test
// verifies them exactly as it verifies quicknet's; only the key differs, and
// Server.Network names it.
//
// It is for tests only: its private key is in memory, and anyone who can
// reach the server can read every round up to its clock's current one.
package beacontest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cloudflare/circl/sign/bls"

	"github.com/crashstudio/crashgame/internal/beacon"
)

// Options configure a Server. The zero value is a network of 3-second
// rounds (as quicknet) whose genesis is one hour before the server starts,
// on the wall clock.
type Options struct {
	// Period is the time between rounds; 3 s when zero.
	Period time.Duration
	// Genesis is the time of round 1; one hour before now when zero.
	Genesis time.Time
	// Now is the server's clock: it serves a round only once Now has reached
	// the round's time. time.Now when nil.
	Now func() time.Time
}

// Server is a local beacon. Its URL is the relay's base URL: a client asks
// for {URL}/{Network.ChainHash}/public/{round}.
type Server struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:41234.
	URL string
	// Network is the beacon's network: its own public key, chain hash,
	// genesis and period, and beacon.Scheme.
	Network beacon.Network

	key  *bls.PrivateKey[bls.KeyG2SigG1]
	now  func() time.Time
	srv  *httptest.Server
	mu   sync.Mutex
	down bool
	hits int
}

// New starts a beacon with a fresh key pair and stops it when the test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	ikm := make([]byte, 32)
	if _, err := rand.Read(ikm); err != nil {
		t.Fatalf("beacontest: key material: %v", err)
	}
	key, err := bls.KeyGen[bls.KeyG2SigG1](ikm, nil, nil)
	if err != nil {
		t.Fatalf("beacontest: key: %v", err)
	}
	pub, err := key.PublicKey().MarshalBinary()
	if err != nil {
		t.Fatalf("beacontest: public key: %v", err)
	}
	s := &Server{key: key, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	period := opts.Period
	if period == 0 {
		period = 3 * time.Second
	}
	genesis := opts.Genesis
	if genesis.IsZero() {
		genesis = s.now().Add(-time.Hour).Truncate(time.Second)
	}
	// The chain hash is SHA-256 of the public key: unique to this server,
	// not computed the way drand computes its networks' chain hashes.
	hash := sha256.Sum256(pub)
	s.Network = beacon.Network{
		Name:      "beacontest",
		ChainHash: hex.EncodeToString(hash[:]),
		PublicKey: pub,
		Genesis:   genesis,
		Period:    period,
		Scheme:    beacon.Scheme,
	}
	if err := s.Network.Validate(); err != nil {
		t.Fatalf("beacontest: %v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{chain}/info", s.info)
	mux.HandleFunc("GET /{chain}/public/{round}", s.public)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Sign returns round's value, signed with the server's key, whatever its
// clock says: a test uses it to know a value in advance or to build an
// answer of its own.
func (s *Server) Sign(round uint64) beacon.Value {
	msg := beacon.Message(round)
	sig := bls.Sign(s.key, msg[:])
	return beacon.Value{Round: round, Signature: sig, Randomness: beacon.Randomness(sig)}
}

// SetDown makes the server answer every request with 503 Service
// Unavailable while down is true, as an unreachable relay would fail.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Requests returns how many requests the server has answered.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}

// Close stops the server now (New also stops it when the test ends).
func (s *Server) Close() { s.srv.Close() }

// answerable counts the request and reports whether the server is up and
// serves chain.
func (s *Server) answerable(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	s.hits++
	down := s.down
	s.mu.Unlock()
	if down {
		http.Error(w, "beacon down", http.StatusServiceUnavailable)
		return false
	}
	if r.PathValue("chain") != s.Network.ChainHash {
		http.Error(w, "unknown chain", http.StatusNotFound)
		return false
	}
	return true
}

// info answers as drand's /{chain-hash}/info does.
func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	if !s.answerable(w, r) {
		return
	}
	writeJSON(w, map[string]any{
		"public_key":   hex.EncodeToString(s.Network.PublicKey),
		"period":       int64(s.Network.Period / time.Second),
		"genesis_time": s.Network.Genesis.Unix(),
		"hash":         s.Network.ChainHash,
		"schemeID":     s.Network.Scheme,
		"metadata":     map[string]string{"beaconID": s.Network.Name},
	})
}

// public answers as drand's /{chain-hash}/public/{round} does; a round not
// yet emitted by the server's clock is 425 Too Early.
func (s *Server) public(w http.ResponseWriter, r *http.Request) {
	if !s.answerable(w, r) {
		return
	}
	round, err := strconv.ParseUint(r.PathValue("round"), 10, 64)
	if err != nil || round == 0 {
		http.Error(w, "bad round", http.StatusBadRequest)
		return
	}
	if s.now().Before(s.Network.TimeOf(round)) {
		http.Error(w, "round not yet emitted", http.StatusTooEarly)
		return
	}
	v := s.Sign(round)
	writeJSON(w, map[string]any{
		"round":      v.Round,
		"randomness": v.RandomnessHex(),
		"signature":  v.SignatureHex(),
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

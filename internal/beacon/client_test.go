package beacon_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/beacon"
	"github.com/crashstudio/crashgame/internal/beacon/beacontest"
)

func newClient(t *testing.T, relay string, n beacon.Network, opts beacon.ClientOptions) *beacon.Client {
	t.Helper()
	c, err := beacon.NewClient(relay, n, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFetchFromTheTestBeacon(t *testing.T) {
	t.Parallel()
	b := beacontest.New(t, beacontest.Options{})
	c := newClient(t, b.URL, b.Network, beacon.ClientOptions{})
	round := b.Network.RoundAt(time.Now())
	v, err := c.Fetch(context.Background(), round)
	if err != nil {
		t.Fatal(err)
	}
	if want := b.Sign(round); v.Round != round || v.SignatureHex() != want.SignatureHex() || v.Randomness != want.Randomness {
		t.Fatalf("Fetch = %+v, want %+v", v, want)
	}
	// The same value verifies offline, as an auditor would check it.
	if _, err := b.Network.Verify(round, v.Signature); err != nil {
		t.Fatal(err)
	}
	// And not under drand's key: the test beacon's values are its own.
	if _, err := beacon.Quicknet().Verify(round, v.Signature); !errors.Is(err, beacon.ErrInvalid) {
		t.Fatalf("quicknet verified a test beacon's round: %v", err)
	}
}

// TestFetchWaitsForTheRound: a round not yet emitted is ErrNotYet, whether
// the client's clock says so (it does not ask) or the relay does.
func TestFetchWaitsForTheRound(t *testing.T) {
	t.Parallel()
	start := time.Now()
	var serverNow atomic.Int64
	serverNow.Store(start.UnixNano())
	b := beacontest.New(t, beacontest.Options{
		Period:  time.Second,
		Genesis: start.Add(-10 * time.Second),
		Now:     func() time.Time { return time.Unix(0, serverNow.Load()) },
	})
	next := b.Network.FirstRoundAfter(start)

	// The client's clock is the server's: no request for a future round.
	c := newClient(t, b.URL, b.Network, beacon.ClientOptions{Now: func() time.Time { return time.Unix(0, serverNow.Load()) }})
	before := b.Requests()
	if _, err := c.Fetch(context.Background(), next); !errors.Is(err, beacon.ErrNotYet) {
		t.Fatalf("future round: %v, want ErrNotYet", err)
	}
	if b.Requests() != before {
		t.Fatal("the client asked the relay for a round whose time has not come")
	}

	// A client whose clock runs ahead asks, and the relay says 425.
	ahead := newClient(t, b.URL, b.Network, beacon.ClientOptions{Now: func() time.Time { return start.Add(time.Hour) }})
	if _, err := ahead.Fetch(context.Background(), next); !errors.Is(err, beacon.ErrNotYet) || errors.Is(err, beacon.ErrInvalid) {
		t.Fatalf("round refused by the relay: %v, want ErrNotYet", err)
	}
	if b.Requests() != before+1 {
		t.Fatalf("requests = %d, want %d", b.Requests(), before+1)
	}

	// Once the round's time comes, it is there and verifies.
	serverNow.Store(b.Network.TimeOf(next).UnixNano())
	v, err := c.Fetch(context.Background(), next)
	if err != nil || v.Round != next {
		t.Fatalf("after its time: %+v, %v", v, err)
	}
}

// TestFetchFailsWithoutFallingBack: a relay that is down, slow or gone is an
// error that is neither ErrNotYet's wait nor a value.
func TestFetchFailsWithoutFallingBack(t *testing.T) {
	t.Parallel()
	b := beacontest.New(t, beacontest.Options{})
	round := b.Network.RoundAt(time.Now())

	down := beacontest.New(t, beacontest.Options{})
	down.SetDown(true)

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(slow.Close)

	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()

	cases := []struct {
		name    string
		relay   string
		network beacon.Network
	}{
		{"503 from the relay", down.URL, down.Network},
		{"no answer within the timeout", slow.URL, b.Network},
		{"nobody listening", gone.URL, b.Network},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cl := newClient(t, c.relay, c.network, beacon.ClientOptions{Timeout: 200 * time.Millisecond})
			v, err := cl.Fetch(context.Background(), round)
			if err == nil || errors.Is(err, beacon.ErrNotYet) || errors.Is(err, beacon.ErrInvalid) {
				t.Fatalf("Fetch = %+v, %v; want a failure to reach the beacon", v, err)
			}
		})
	}

	t.Run("cancelled context", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		cl := newClient(t, b.URL, b.Network, beacon.ClientOptions{})
		if _, err := cl.Fetch(ctx, round); !errors.Is(err, context.Canceled) {
			t.Fatalf("Fetch = %v, want context.Canceled", err)
		}
	})
}

// relayAnswering serves, for network's chain hash, whatever answer returns
// for the asked round.
func relayAnswering(t *testing.T, chainHash string, answer func(round uint64) (int, string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var round uint64
		if _, err := fmt.Sscanf(r.URL.Path, "/"+chainHash+"/public/%d", &round); err != nil {
			http.NotFound(w, r)
			return
		}
		status, body := answer(round)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func body(round uint64, randomness, signature string) string {
	b, _ := json.Marshal(map[string]any{"round": round, "randomness": randomness, "signature": signature})
	return string(b)
}

// TestFetchRefusesWhatDoesNotVerify: whatever a relay answers, Fetch returns
// a value only when it is the round asked for, signed by the network's key,
// with SHA-256 of the signature as its randomness.
func TestFetchRefusesWhatDoesNotVerify(t *testing.T) {
	t.Parallel()
	b := beacontest.New(t, beacontest.Options{})
	impostor := beacontest.New(t, beacontest.Options{Genesis: b.Network.Genesis})
	round := b.Network.RoundAt(time.Now()) - 5
	good := b.Sign(round)
	flipped := flipBit(good.Signature, 8*47)
	flippedRandomness := beacon.Randomness(flipped)

	cases := []struct {
		name   string
		status int
		body   string
	}{
		{"another round", 200, func() string { v := b.Sign(round + 1); return body(v.Round, v.RandomnessHex(), v.SignatureHex()) }()},
		{"another round's value under this number", 200, func() string { v := b.Sign(round + 1); return body(round, v.RandomnessHex(), v.SignatureHex()) }()},
		{"a changed bit, randomness recomputed", 200, body(round, hex.EncodeToString(flippedRandomness[:]), hex.EncodeToString(flipped))},
		{"randomness not SHA-256 of the signature", 200, body(round, strings.Repeat("ab", 32), good.SignatureHex())},
		{"no randomness", 200, body(round, "", good.SignatureHex())},
		{"another key's signature", 200, func() string { v := impostor.Sign(round); return body(round, v.RandomnessHex(), v.SignatureHex()) }()},
		{"signature not hex", 200, body(round, good.RandomnessHex(), "zz"+good.SignatureHex()[2:])},
		{"no signature", 200, body(round, good.RandomnessHex(), "")},
		{"not JSON", 200, "<html>beacon</html>"},
		{"longer than MaxBody", 200, body(round, good.RandomnessHex(), good.SignatureHex()) + strings.Repeat(" ", beacon.MaxBody)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			relay := relayAnswering(t, b.Network.ChainHash, func(uint64) (int, string) { return c.status, c.body })
			v, err := newClient(t, relay, b.Network, beacon.ClientOptions{}).Fetch(context.Background(), round)
			if !errors.Is(err, beacon.ErrInvalid) {
				t.Fatalf("Fetch = %+v, %v; want ErrInvalid", v, err)
			}
		})
	}

	// The honest answer through the same relay passes, so the refusals above
	// are the answers', not the relay's.
	relay := relayAnswering(t, b.Network.ChainHash, func(uint64) (int, string) {
		return 200, body(round, strings.ToUpper(good.RandomnessHex()), good.SignatureHex())
	})
	if _, err := newClient(t, relay, b.Network, beacon.ClientOptions{}).Fetch(context.Background(), round); err != nil {
		t.Fatalf("the honest answer: %v", err)
	}
}

// TestFetchARealQuicknetRound: the client, configured with drand's quicknet,
// takes a real round (published by the drand-verify Python package's README)
// from a relay that serves it as drand's API does, and nothing else.
func TestFetchARealQuicknetRound(t *testing.T) {
	t.Parallel()
	qn := beacon.Quicknet()
	real := quicknetRounds[1]
	var asked atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.URL.Path)
		if r.URL.Path != "/"+qn.ChainHash+"/public/657413" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body(real.round, real.randomness, real.signature))
	}))
	t.Cleanup(srv.Close)

	c := newClient(t, srv.URL, qn, beacon.ClientOptions{})
	v, err := c.Fetch(context.Background(), real.round)
	if err != nil {
		t.Fatal(err)
	}
	if v.RandomnessHex() != real.randomness {
		t.Fatalf("randomness %s, published %s", v.RandomnessHex(), real.randomness)
	}
	if got := asked.Load(); got != "/52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971/public/657413" {
		t.Fatalf("asked for %v", got)
	}
	// Another round from the same relay is a 404: not yet there (or never).
	if _, err := c.Fetch(context.Background(), real.round+1); !errors.Is(err, beacon.ErrNotYet) {
		t.Fatalf("a round the relay does not have: %v, want ErrNotYet", err)
	}
}

func TestNewClient(t *testing.T) {
	t.Parallel()
	qn := beacon.Quicknet()
	broken := qn
	broken.PublicKey = broken.PublicKey[:48]
	cases := []struct {
		name    string
		relay   string
		network beacon.Network
		url     string // URL(5) when accepted
	}{
		{"drand's relay", "https://api.drand.sh", qn, "https://api.drand.sh/" + qn.ChainHash + "/public/5"},
		{"trailing slash", "https://api.drand.sh/", qn, "https://api.drand.sh/" + qn.ChainHash + "/public/5"},
		{"a path prefix", "http://relay.internal:8080/drand", qn, "http://relay.internal:8080/drand/" + qn.ChainHash + "/public/5"},
		{"no scheme", "api.drand.sh", qn, ""},
		{"ftp", "ftp://api.drand.sh", qn, ""},
		{"a query", "https://api.drand.sh/?chain=quicknet", qn, ""},
		{"user information", "https://user:secret@api.drand.sh", qn, ""},
		{"empty", "", qn, ""},
		{"an invalid network", "https://api.drand.sh", broken, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cl, err := beacon.NewClient(c.relay, c.network, beacon.ClientOptions{})
			if c.url == "" {
				if err == nil {
					t.Fatal("accepted")
				}
				if strings.Contains(err.Error(), "secret") {
					t.Fatalf("the error repeats a password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cl.URL(5); got != c.url {
				t.Fatalf("URL(5) = %s, want %s", got, c.url)
			}
		})
	}
}

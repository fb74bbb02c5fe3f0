package beacontest_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/beacon"
	"github.com/crashstudio/crashgame/internal/beacon/beacontest"
)

func get(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, m
}

// TestServerSpeaksDrandsAPI: the test beacon answers drand's HTTP API (v1)
// with values that verify under its own key only.
func TestServerSpeaksDrandsAPI(t *testing.T) {
	t.Parallel()
	now := time.Now()
	b := beacontest.New(t, beacontest.Options{Period: time.Second, Genesis: now.Add(-time.Minute), Now: func() time.Time { return now }})
	other := beacontest.New(t, beacontest.Options{})
	current := b.Network.RoundAt(now)
	base := b.URL + "/" + b.Network.ChainHash

	status, info := get(t, base+"/info")
	if status != http.StatusOK || info["public_key"] != hex.EncodeToString(b.Network.PublicKey) ||
		info["schemeID"] != beacon.Scheme || info["hash"] != b.Network.ChainHash ||
		info["genesis_time"] != float64(b.Network.Genesis.Unix()) || info["period"] != float64(1) {
		t.Fatalf("info: %d %v", status, info)
	}

	status, round := get(t, base+"/public/"+strconv.FormatUint(current, 10))
	if status != http.StatusOK || round["round"] != float64(current) {
		t.Fatalf("round %d: %d %v", current, status, round)
	}
	sig, err := hex.DecodeString(round["signature"].(string))
	if err != nil {
		t.Fatal(err)
	}
	v, err := b.Network.Verify(current, sig)
	if err != nil {
		t.Fatal(err)
	}
	if round["randomness"] != v.RandomnessHex() {
		t.Fatalf("randomness %v, SHA-256 of the signature is %s", round["randomness"], v.RandomnessHex())
	}
	if _, err := other.Network.Verify(current, sig); !errors.Is(err, beacon.ErrInvalid) {
		t.Fatalf("another test beacon's key verified this one's round: %v", err)
	}
	if b.Network.ChainHash == other.Network.ChainHash {
		t.Fatal("two test beacons share a chain hash")
	}

	cases := []struct {
		name   string
		url    string
		status int
	}{
		{"the next round", base + "/public/" + strconv.FormatUint(current+1, 10), http.StatusTooEarly},
		{"round 0", base + "/public/0", http.StatusBadRequest},
		{"not a number", base + "/public/latest", http.StatusBadRequest},
		{"another chain", b.URL + "/" + other.Network.ChainHash + "/public/1", http.StatusNotFound},
	}
	for _, c := range cases {
		if status, _ := get(t, c.url); status != c.status {
			t.Errorf("%s: %d, want %d", c.name, status, c.status)
		}
	}

	b.SetDown(true)
	if status, _ := get(t, base+"/public/1"); status != http.StatusServiceUnavailable {
		t.Errorf("down: %d, want 503", status)
	}
	b.SetDown(false)
	if status, _ := get(t, base+"/public/1"); status != http.StatusOK {
		t.Errorf("up again: %d, want 200", status)
	}
}

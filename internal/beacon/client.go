package beacon

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ErrNotYet: the round asked for is not available yet. Either its time has
// not come by the caller's clock (no request is made), or the relay answered
// 404 Not Found or 425 Too Early for it. The caller waits and asks again.
// A relay that never has the round (a wrong chain hash, say) also answers
// 404; the error then names the round's time, which has passed.
var ErrNotYet = errors.New("beacon: the round is not available yet")

// MaxBody is the largest answer a client reads from a relay. A quicknet
// round's answer is about 250 bytes.
const MaxBody = 16 << 10

// DefaultTimeout bounds one request when Client.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Client fetches rounds of one network from one drand HTTP relay (API v1)
// and verifies them. It is safe for concurrent use once built.
type Client struct {
	network Network
	base    *url.URL
	http    *http.Client
	now     func() time.Time
	timeout time.Duration
}

// ClientOptions are optional settings of a Client.
type ClientOptions struct {
	// HTTP is the client that sends requests; http.DefaultClient when nil.
	HTTP *http.Client
	// Timeout bounds one request, from sending it to reading its whole
	// answer; DefaultTimeout when zero.
	Timeout time.Duration
	// Now is the caller's clock, used to skip asking for a round whose time
	// has not come; time.Now when nil.
	Now func() time.Time
}

// NewClient returns a client of relay, a base URL such as
// https://api.drand.sh, for network. It refuses a network that does not
// validate and a URL that is not absolute http or https, or that has a
// query, a fragment or user information. Its errors never repeat the URL,
// which could hold a credential.
func NewClient(relay string, network Network, opts ClientOptions) (*Client, error) {
	if err := network.Validate(); err != nil {
		return nil, err
	}
	u, err := url.Parse(relay)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("beacon: the relay URL must be an absolute http or https URL, such as https://api.drand.sh")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, errors.New("beacon: the relay URL must have no query, fragment or user information")
	}
	c := &Client{network: network, base: u, http: opts.HTTP, now: opts.Now, timeout: opts.Timeout}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	return c, nil
}

// Network returns the client's network.
func (c *Client) Network() Network { return c.network }

// URL returns where the client asks for round: {relay}/{chain hash}/public/{round}.
func (c *Client) URL(round uint64) string {
	return c.base.JoinPath(c.network.ChainHash, "public", strconv.FormatUint(round, 10)).String()
}

// answer is a relay's JSON answer for a round; drand adds previous_signature
// for chained networks, which this scheme does not use.
type answer struct {
	Round      uint64 `json:"round"`
	Randomness string `json:"randomness"`
	Signature  string `json:"signature"`
}

// Fetch returns round's value once it verifies. It returns an error wrapping
// ErrNotYet when the round is not available yet, one wrapping ErrInvalid
// when the relay answered a value that must not be used (another round, a
// signature that does not verify, a randomness that is not SHA-256 of the
// signature, or an answer that is not the API's), and another error when the
// relay could not be asked or failed.
func (c *Client) Fetch(ctx context.Context, round uint64) (Value, error) {
	if round == 0 {
		return Value{}, errors.New("beacon: round 0 is not a round")
	}
	due := c.network.TimeOf(round)
	if now := c.now(); now.Before(due) {
		return Value{}, fmt.Errorf("%w: %s round %d is due at %s, in %s",
			ErrNotYet, c.network.Name, round, due.UTC().Format(time.RFC3339), due.Sub(now).Round(time.Millisecond))
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL(round), nil)
	if err != nil {
		return Value{}, fmt.Errorf("beacon: round %d: %w", round, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return Value{}, fmt.Errorf("beacon: asking %s for %s round %d: %w", c.base.Redacted(), c.network.Name, round, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return Value{}, fmt.Errorf("beacon: reading %s round %d from %s: %w", c.network.Name, round, c.base.Redacted(), err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusTooEarly:
		return Value{}, fmt.Errorf("%w: %s answered %d for %s round %d, due at %s",
			ErrNotYet, c.base.Redacted(), resp.StatusCode, c.network.Name, round, due.UTC().Format(time.RFC3339))
	case resp.StatusCode != http.StatusOK:
		return Value{}, fmt.Errorf("beacon: %s answered %d for %s round %d", c.base.Redacted(), resp.StatusCode, c.network.Name, round)
	case len(body) > MaxBody:
		return Value{}, fmt.Errorf("%w: %s round %d: the answer is longer than %d bytes", ErrInvalid, c.network.Name, round, MaxBody)
	}
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		return Value{}, fmt.Errorf("%w: %s round %d: the answer is not the API's JSON: %v", ErrInvalid, c.network.Name, round, err)
	}
	if a.Round != round {
		return Value{}, fmt.Errorf("%w: asked for %s round %d, the answer is round %d", ErrInvalid, c.network.Name, round, a.Round)
	}
	sig, err := hex.DecodeString(a.Signature)
	if err != nil {
		return Value{}, fmt.Errorf("%w: %s round %d: the signature is not hex", ErrInvalid, c.network.Name, round)
	}
	v, err := c.network.Verify(round, sig)
	if err != nil {
		return Value{}, err
	}
	if r, err := hex.DecodeString(a.Randomness); err != nil || !bytes.Equal(r, v.Randomness[:]) {
		return Value{}, fmt.Errorf("%w: %s round %d: the randomness is not SHA-256 of the signature", ErrInvalid, c.network.Name, round)
	}
	return v, nil
}

package walletcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/crashstudio/crashgame/internal/jsonint"
	"github.com/crashstudio/crashgame/internal/signature"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// maxAnswer is the largest answer body kept.
const maxAnswer = 1 << 20

// exchange is one request and its answer, as they travelled.
type exchange struct {
	route   string
	request []byte
	status  int
	answer  []byte
}

// recorder is the transport of every request of the run, the wallet
// client's included: it keeps each exchange for the checks that look at all
// answers (GEN-2, GEN-4, ENV-19).
type recorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	log  []exchange
}

func (rt *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			reqBody, _ = io.ReadAll(rc)
			_ = rc.Close()
		}
	}
	resp, err := rt.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	_ = resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the answer: %w", err)
	}
	rt.mu.Lock()
	rt.log = append(rt.log, exchange{route: req.URL.Path, request: reqBody, status: resp.StatusCode, answer: body})
	rt.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

func (rt *recorder) exchanges() []exchange {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return append([]exchange(nil), rt.log...)
}

// rawAnswer is an answer to a request the battery built itself.
type rawAnswer struct {
	HTTPStatus int    // 0: no answer
	Err        error  // transport failure
	JSON       bool   // the body is a JSON object
	Status     string // the body's status
	ErrorCode  string
	Balance    *int64
}

func parseRaw(status int, body []byte) rawAnswer {
	a := rawAnswer{HTTPStatus: status}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil || fields == nil {
		return a
	}
	a.JSON = true
	_ = json.Unmarshal(fields["status"], &a.Status)
	_ = json.Unmarshal(fields["error_code"], &a.ErrorCode)
	if raw, ok := fields["balance"]; ok && jsonint.Is(raw) {
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			a.Balance = &n
		}
	}
	return a
}

// refusedForSignature is the answer AUTH-15 asks of a refused key or
// signature: 401, status = error, INVALID_SIGNATURE.
func (a rawAnswer) refusedForSignature() bool {
	return a.HTTPStatus == http.StatusUnauthorized && a.Status == "error" && a.ErrorCode == wallet.CodeInvalidSignature
}

func (a rawAnswer) accepted() bool {
	return a.HTTPStatus >= 200 && a.HTTPStatus < 300 && a.Status == "ok"
}

func (a rawAnswer) String() string {
	if a.HTTPStatus == 0 {
		return "no answer (" + transportError(a.Err) + ")"
	}
	s := "HTTP " + strconv.Itoa(a.HTTPStatus)
	switch {
	case !a.JSON:
		s += " (body not a JSON object)"
	case a.Status == "error":
		s += " error " + printable(a.ErrorCode)
	case a.Status != "":
		s += " " + printable(a.Status)
	default:
		s += " (no status)"
	}
	if a.Balance != nil {
		s += " balance " + strconv.FormatInt(*a.Balance, 10)
	}
	return s
}

// send posts body to route with the given Authorization and X-Signature
// values; an empty value leaves the header out.
func (r *runner) send(ctx context.Context, route string, body []byte, authorization, sig string) rawAnswer {
	u := strings.TrimRight(r.t.WalletURL, "/") + route
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return rawAnswer{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if authorization != "" {
		req.Header.Set(wallet.AuthorizationHeader, authorization)
	}
	if sig != "" {
		req.Header.Set(wallet.SignatureHeader, sig)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return rawAnswer{Err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return rawAnswer{HTTPStatus: resp.StatusCode, Err: err}
	}
	return parseRaw(resp.StatusCode, b)
}

// bearer is the Authorization value of the configured key (AUTH-11).
func (r *runner) bearer() string { return "Bearer " + string(r.t.APIKey) }

// sign is X-Signature over exactly these bytes with the configured secret.
func (r *runner) sign(body []byte) string { return signature.Sign(r.t.Secret.Bytes(), body) }

// balanceRequest is a /balance body, in the order the game writes it.
type balanceRequest struct {
	Operator  string  `json:"operator"`
	Timestamp int64   `json:"timestamp"`
	RequestID string  `json:"request_id"`
	Currency  string  `json:"currency"`
	GameID    *string `json:"game_id,omitempty"`
	Token     string  `json:"token"`
}

// balanceBody is a compact /balance body for token, with a timestamp shifted
// by skewMS from now.
func (r *runner) balanceBody(token string, skewMS int64) balanceRequest {
	b := balanceRequest{Operator: r.t.Operator, Timestamp: r.now().UnixMilli() + skewMS,
		RequestID: r.id("probe"), Currency: r.currency, Token: token}
	if r.t.GameID != "" {
		g := r.t.GameID
		b.GameID = &g
	}
	return b
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // the values are plain structs and maps of strings and numbers
		panic(fmt.Sprintf("walletcheck: encode a request: %v", err))
	}
	return b
}

// describe is one wallet client result as evidence.
func describe(res wallet.Result) string {
	if res.HTTPStatus == 0 {
		return "no answer (" + res.Reason + ")"
	}
	s := "HTTP " + strconv.Itoa(res.HTTPStatus)
	switch {
	case res.Outcome == wallet.Success:
		s += " ok"
	case res.ErrorCode != "":
		s += " error " + printable(res.ErrorCode)
	default:
		s += " (" + res.Reason + ")"
	}
	if res.HasBalance {
		s += " balance " + strconv.FormatInt(res.Balance, 10)
	}
	return s
}

// errorBody reports whether the answer was a status = error body with a
// code, whatever its HTTP status.
func errorBody(res wallet.Result) bool {
	switch res.Reason {
	case wallet.ReasonFinalCode, wallet.ReasonRetryableCode, wallet.ReasonInvalidSignature:
		return true
	case wallet.ReasonWin4xx, wallet.ReasonBalance401:
		return res.ErrorCode != ""
	}
	return false
}

func transportError(err error) string {
	if err == nil {
		return "transport"
	}
	s := err.Error()
	if strings.Contains(s, "Client.Timeout") || strings.Contains(s, "deadline exceeded") {
		return "timeout"
	}
	return "transport: " + printable(s)
}

// printable keeps operator-supplied text short and on one line.
func printable(s string) string {
	const max = 60
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, s)
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

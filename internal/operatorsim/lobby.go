package operatorsim

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"

	"github.com/crashstudio/crashgame/gen/game"
	"github.com/crashstudio/crashgame/internal/signature"
	"github.com/crashstudio/crashgame/internal/store/ledger"
)

//go:embed lobby.html
var lobbyHTML string

// lobbyMovements is how many of the last movements the lobby shows.
const lobbyMovements = 50

// lobby is the operator's page: its players, a Play button per player (issue
// a session token, launch the game server to server, redirect the browser to
// the URL the game returns) and the ledger. It is a development tool with no
// login: listen on loopback.
type lobby struct {
	s    *Sim
	tmpl *template.Template
}

type lobbyData struct {
	Operator, GameURL, GameID, Error string
	Players                          []PlayerView
	Movements                        []Movement
}

func (s *Sim) lobby() (*lobby, error) {
	tmpl, err := template.New("lobby").Funcs(template.FuncMap{
		"money": formatCents,
		"deref": func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		},
	}).Parse(lobbyHTML)
	if err != nil {
		return nil, fmt.Errorf("parse lobby page: %w", err)
	}
	return &lobby{s: s, tmpl: tmpl}, nil
}

// formatCents writes cents as units with two decimals (1234 -> 12.34).
func formatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

func (lb *lobby) page() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lb.render(w, r, http.StatusOK, "")
	})
}

func (lb *lobby) render(w http.ResponseWriter, r *http.Request, status int, msg string) {
	ctx := r.Context()
	data := lobbyData{Operator: lb.s.cfg.Operator, GameURL: lb.s.cfg.GameURL, GameID: lb.s.cfg.GameID, Error: msg}
	ps, err := lb.s.ledger.players(ctx)
	if err == nil {
		for i := range ps {
			data.Players = append(data.Players, playerView(&ps[i]))
		}
		var ms []ledger.MovementRecord
		ms, err = lb.s.ledger.movements(ctx, "", lobbyMovements)
		for i := len(ms) - 1; i >= 0; i-- { // newest first
			data.Movements = append(data.Movements, movementView(&ms[i]))
		}
	}
	if err != nil {
		lb.s.logger.ErrorContext(ctx, "operator-sim: lobby", "err", err)
		http.Error(w, "operator-sim: the ledger could not be read", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := lb.tmpl.Execute(&buf, data); err != nil {
		lb.s.logger.ErrorContext(ctx, "operator-sim: lobby template", "err", err)
		http.Error(w, "operator-sim: the lobby could not be drawn", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// sameSite refuses a form posted from another site (the lobby has no login,
// so a foreign page must not be able to open sessions through it).
func sameSite(r *http.Request) bool {
	site := r.Header.Get("Sec-Fetch-Site")
	return site == "" || site == "same-origin" || site == "none"
}

// play issues a session token for the player and launches the game.
func (lb *lobby) play() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameSite(r) {
			http.Error(w, "operator-sim: cross-site form refused", http.StatusForbidden)
			return
		}
		ctx := r.Context()
		p, err := lb.s.ledger.player(ctx, r.PostFormValue("player_id"))
		if err != nil {
			lb.render(w, r, http.StatusNotFound, "Unknown player.")
			return
		}
		if p.Blocked {
			lb.render(w, r, http.StatusForbidden, "This player is blocked.")
			return
		}
		sess, err := lb.s.ledger.issueToken(ctx, p.PlayerID, 0)
		if err != nil {
			lb.s.logger.ErrorContext(ctx, "operator-sim: lobby: issue token", "err", err)
			lb.render(w, r, http.StatusInternalServerError, "The session could not be opened.")
			return
		}
		req := game.LaunchRequest{
			GameId:   lb.s.cfg.GameID,
			Token:    &sess.Token,
			PlayerId: &p.PlayerID,
			Currency: &p.Currency,
		}
		if p.Name != "" {
			req.PlayerName = &p.Name
		}
		lb.launch(w, r, req)
	})
}

// demo launches the game in demo mode: no token, no player.
func (lb *lobby) demo() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameSite(r) {
			http.Error(w, "operator-sim: cross-site form refused", http.StatusForbidden)
			return
		}
		demo := true
		lb.launch(w, r, game.LaunchRequest{GameId: lb.s.cfg.GameID, Demo: &demo})
	})
}

func (lb *lobby) launch(w http.ResponseWriter, r *http.Request, req game.LaunchRequest) {
	ctx := r.Context()
	if lb.s.cfg.GameURL == "" {
		lb.render(w, r, http.StatusServiceUnavailable, "No game configured: start operator-sim with --game-url.")
		return
	}
	lobbyURL := "http://" + r.Host + "/"
	req.LobbyUrl = &lobbyURL
	if r.PostFormValue("responsible_gambling") == "on" {
		// What a regulated market switches on, with a reality check every
		// minute so that a newcomer sees it quickly; Deposit leads back here.
		req.DepositUrl = &lobbyURL
		req.ResponsibleGambling = &game.ResponsibleGambling{
			SessionClock: ptr(true), RealityCheckMinutes: ptr(int32(1)), InactivityTimeoutMinutes: ptr(int32(30)),
		}
	}
	target, err := lb.s.launchGame(ctx, req)
	if err != nil {
		lb.s.logger.WarnContext(ctx, "operator-sim: launch failed", "err", err)
		lb.render(w, r, http.StatusBadGateway, "The game refused the launch: "+err.Error())
		return
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func ptr[T any](v T) *T { return &v }

// details opens the game's support page of a ledger row's round for its
// player, through the signed link route: what the operator's support staff
// would open from their own back office.
func (lb *lobby) details() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameSite(r) {
			http.Error(w, "operator-sim: cross-site form refused", http.StatusForbidden)
			return
		}
		if lb.s.cfg.GameURL == "" {
			lb.render(w, r, http.StatusServiceUnavailable, "No game configured: start operator-sim with --game-url.")
			return
		}
		target, err := lb.s.supportLink(r.Context(), r.PostFormValue("round_id"), r.PostFormValue("player_id"))
		if err != nil {
			lb.s.logger.WarnContext(r.Context(), "operator-sim: support link refused", "err", err)
			lb.render(w, r, http.StatusBadGateway, "The game refused the support link: "+err.Error())
			return
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
	})
}

// launchGame sends a signed POST /v1/launch to the game and returns the URL
// it answers.
func (s *Sim) launchGame(ctx context.Context, req game.LaunchRequest) (string, error) {
	req.Operator, req.Timestamp = s.cfg.Operator, s.cfg.Now().UnixMilli()
	var ok game.LaunchResponse
	if err := s.callGame(ctx, "/v1/launch", req, &ok); err != nil {
		return "", err
	}
	return httpURL(ok.Url)
}

// supportLink asks the game for the support page of a round and a player
// (POST /v1/rounds/support-link) and returns its URL.
func (s *Sim) supportLink(ctx context.Context, roundID, playerID string) (string, error) {
	req := game.RoundDetailsRequest{Operator: s.cfg.Operator, Timestamp: s.cfg.Now().UnixMilli(), RoundId: roundID, PlayerId: &playerID}
	var ok game.LinkResponse
	if err := s.callGame(ctx, "/v1/rounds/support-link", req, &ok); err != nil {
		return "", err
	}
	return httpURL(ok.Url)
}

// callGame sends req to the game's operator route path, signed (X-Signature
// over the exact bytes sent; AUTH-2), and decodes its 200 answer into out.
func (s *Sim) callGame(ctx context.Context, path string, req, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.GameURL+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s request: %w", path, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set(SignatureHeader, signature.Sign([]byte(s.cfg.Secret), body))
	resp, err := s.cfg.HTTPClient.Do(hreq)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes))
	if err != nil {
		return fmt.Errorf("read %s answer: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			ErrorCode    string `json:"error_code"`
			ErrorMessage string `json:"error_message"`
		}
		_ = json.Unmarshal(raw, &e)
		return fmt.Errorf("HTTP %d %s %s", resp.StatusCode, e.ErrorCode, e.ErrorMessage)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode %s answer: %w", path, err)
	}
	return nil
}

// httpURL checks that the game answered an http(s) URL.
func httpURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("the game answered a URL that is not http(s)")
	}
	return raw, nil
}

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/crashstudio/crashgame/internal/secret"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// The floor of a bet (issue 14): in the same run as the game, after its
// rounds, a process of the load tool's own (`loadgen floor-serve`) does only
// the irreducible work of one bet, on the game's core when --pin is set:
// accept the player's HTTP request, sign and send one /bet to the same
// operator-sim through the game's wallet client, group-commit one row through
// the game's store (a ticket row: the store's group-committed insert, same
// SQLite settings) and answer. The load tool sends it as many bets as the
// game accepted, in the same bursts, and the report gives the game's CPU per
// accepted bet as a ratio of the floor's CPU per bet.

// floorCommand is the load tool's subcommand that serves the floor.
const floorCommand = "floor-serve"

// floorResult is the floor's part of the result.
type floorResult struct {
	calls
	PID        int     `json:"pid"`
	OK         int     `json:"ok"`
	CPUSeconds float64 `json:"cpu_s"`
	CPUPerBet  float64 `json:"cpu_us_per_bet"`
	// GameRatio is the game's CPU per accepted bet in its betting windows
	// over the floor's CPU per bet (the goal: at most 1.5).
	GameRatio float64 `json:"game_cpu_ratio"`
}

// floorServe is `loadgen floor-serve`: it serves POST /bet until SIGTERM.
func floorServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet(floorCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to serve on")
	walletURL := fs.String("wallet", "", "operator-sim's wallet address")
	operator := fs.String("operator", "load", "the operator id")
	key := fs.String("api-key", "", "the operator's wallet API key")
	sec := fs.String("secret", "", "the operator's HMAC secret")
	db := fs.String("db", "", "the SQLite file of the floor's rows")
	gameID := fs.String("game", "crash", "the game_id of the bets")
	currency := fs.String("currency", "BRL", "the bets' currency")
	raw := fs.Bool("raw", false, "the raw floor: the same work with none of the game's code (floor_raw.go)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	mux := http.NewServeMux()
	if *raw {
		db, rows, err := openRawFloor(ctx, *db)
		if err != nil {
			return err
		}
		defer db.Close()
		f := &rawFloor{hc: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1024, MaxIdleConns: 1024}},
			walletURL: *walletURL, operator: *operator, apiKey: *key, gameID: *gameID, currency: *currency, secret: []byte(*sec), rows: rows}
		mux.HandleFunc("POST /bet", f.bet)
	} else {
		logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		st, err := store.Open(ctx, "sqlite://"+*db)
		if err != nil {
			return err
		}
		defer st.Close()
		if err := st.Migrate(ctx); err != nil {
			return err
		}
		client, err := wallet.NewClient(wallet.Settings{Operator: *operator, URL: *walletURL,
			Secret: secret.Secret(*sec), APIKey: secret.Secret(*key)}, wallet.WithLogger(logger))
		if err != nil {
			return err
		}
		f := &floor{store: st, wallet: client, operator: *operator, gameID: *gameID, currency: *currency}
		mux.HandleFunc("POST /bet", f.bet)
	}
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// floor is the floor's bet handler and what it uses.
type floor struct {
	store                      *store.Store
	wallet                     *wallet.Client
	operator, gameID, currency string
}

// floorBet is the floor's request: the player's own fields of a bet.
type floorBet struct {
	PlayerID string `json:"player_id"`
	Token    string `json:"token"`
	Amount   int64  `json:"amount"`
}

// readFloorBet reads a floor's request and gives it a new transaction id
// starting with prefix; false once it has answered 400 (no bet).
func readFloorBet(w http.ResponseWriter, r *http.Request, prefix string) (floorBet, string, bool) {
	var req floorBet
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&req); err != nil || req.Amount <= 0 {
		http.Error(w, `{"error_code":"BAD_REQUEST"}`, http.StatusBadRequest)
		return floorBet{}, "", false
	}
	var raw [12]byte
	_, _ = rand.Read(raw[:])
	return req, prefix + hex.EncodeToString(raw[:]), true
}

func (f *floor) bet(w http.ResponseWriter, r *http.Request) {
	req, id, ok := readFloorBet(w, r, "fl_")
	if !ok {
		return
	}
	res, err := f.wallet.Bet(r.Context(), wallet.BetCall{PlayerID: req.PlayerID, Token: req.Token, Currency: f.currency,
		GameID: f.gameID, Amount: req.Amount, TransactionID: id, RoundID: "floor"})
	if res.Outcome != wallet.Success {
		status := http.StatusServiceUnavailable
		if res.Outcome == wallet.Refused {
			status = http.StatusConflict
		}
		code := res.ErrorCode
		if code == "" && err != nil {
			code = "WALLET_UNAVAILABLE"
		}
		http.Error(w, fmt.Sprintf(`{"error_code":%q}`, code), status)
		return
	}
	hash := sha256.Sum256([]byte(id))
	now := time.Now()
	rec := store.TicketRecord{Hash: hash[:], Operator: f.operator, GameID: f.gameID, Token: req.Token, PlayerID: req.PlayerID,
		Currency: f.currency, Language: "en", CreatedAt: store.MillisOf(now), ExpiresAt: store.MillisOf(now.Add(time.Minute))}
	if err := f.store.InsertTicket(r.Context(), &rec); err != nil {
		http.Error(w, `{"error_code":"COMMIT_FAILED"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{"transaction_id": id, "balance": res.Balance})
}

// runFloor starts the floor (on the game's core with --pin), sends it n bets
// in the run's rounds, each round's bets at random within the bet spread, as
// the players sent theirs, and measures its CPU from /proc.
func (lg *loadgen) runFloor(ctx context.Context, admin *http.Client, players []*player, n int, raw bool, stdout io.Writer) (floorResult, error) {
	o := lg.o
	var fr floorResult
	if n == 0 {
		return fr, errors.New("no bet was accepted: the floor has nothing to match")
	}
	exe, err := os.Executable()
	if err != nil {
		return fr, err
	}
	addr := freeAddr()
	name, label := "floor", "floor"
	if raw {
		name, label = "floor-raw", "raw floor"
	}
	path, args := o.onGameCPU(exe, floorCommand, "--listen", addr, "--wallet", o.operatorURL, "--operator", o.operator,
		"--api-key", loadAPIKey, "--secret", o.secret, "--db", filepath.Join(o.data, name+".db"),
		"--game", o.gameID, "--currency", o.currency, fmt.Sprintf("--raw=%t", raw))
	p, err := startProcess(path, filepath.Join(o.data, name+".log"), args...)
	if err != nil {
		return fr, err
	}
	defer stopProcess(p)
	fr.PID = p.cmd.Process.Pid
	base := "http://" + addr
	if err := waitAnswer(ctx, base+"/readyz", 30*time.Second); err != nil {
		return fr, err
	}
	tokens, err := lg.floorTokens(ctx, admin, players)
	if err != nil {
		return fr, err
	}
	fmt.Fprintf(stdout, "%s: %d bets in %d rounds of %s against the same operator-sim...\n", label, n, o.rounds, o.betSpread)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1024, MaxIdleConns: 1024}}
	cpu0, _, err := readProc(fr.PID)
	if err != nil {
		return fr, err
	}
	samples := lg.floorBets(ctx, hc, base, tokens, n)
	cpu1, _, err := readProc(fr.PID)
	if err != nil {
		return fr, err
	}
	fr.calls = summarise(samples)
	fr.OK = fr.Outcomes["201"]
	fr.CPUSeconds = cpu1 - cpu0
	if fr.OK > 0 {
		fr.CPUPerBet = fr.CPUSeconds * 1e6 / float64(fr.OK)
	}
	return fr, nil
}

// floorTokens issues one fresh token a player at operator-sim, for the
// floor's bets (the game's tokens are the game's sessions').
func (lg *loadgen) floorTokens(ctx context.Context, admin *http.Client, players []*player) ([]floorBet, error) {
	o := lg.o
	tokens := make([]floorBet, 0, len(players))
	for _, pl := range players {
		if pl == nil {
			continue
		}
		var tok struct {
			Token string `json:"token"`
		}
		if err := signedPost(ctx, admin, o.operatorURL, "/admin/tokens/issue", o.secret, map[string]any{"player_id": pl.id}, &tok); err != nil {
			return nil, fmt.Errorf("floor: token for %s: %w", pl.id, err)
		}
		tokens = append(tokens, floorBet{PlayerID: pl.id, Token: tok.Token, Amount: floorStake})
	}
	return tokens, nil
}

// floorBets sends the floor at base n bets of tokens, shared out over the
// run's rounds, each round's bets at random within the bet spread, and
// returns their samples.
func (lg *loadgen) floorBets(ctx context.Context, hc *http.Client, base string, tokens []floorBet, n int) []sample {
	o := lg.o
	var (
		mu      sync.Mutex
		samples []sample
	)
	start := time.Now()
	for round := range o.rounds {
		count := n / o.rounds
		if round < n%o.rounds {
			count++
		}
		var wg sync.WaitGroup
		for i := range count {
			at := time.Duration(mrand.Int64N(int64(o.betSpread)))
			req := tokens[(round*count+i)%len(tokens)]
			wg.Go(func() {
				select {
				case <-time.After(at):
				case <-ctx.Done():
					return
				}
				s := floorCall(ctx, hc, base, req)
				s.at = time.Since(start).Seconds()
				mu.Lock()
				samples = append(samples, s)
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	return samples
}

// floorStake is the floor's stake in cents: the load's minimum bet.
const floorStake = 100

func floorCall(ctx context.Context, hc *http.Client, base string, b floorBet) sample {
	raw, _ := json.Marshal(b)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/bet", bytes.NewReader(raw))
	if err != nil {
		return sample{outcome: "error"}
	}
	req.Header.Set("Content-Type", "application/json")
	t0 := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return sample{outcome: "error"}
	}
	var body struct {
		Code string `json:"error_code"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	out := fmt.Sprint(resp.StatusCode)
	if body.Code != "" {
		out += " " + body.Code
	}
	return sample{ms: float64(time.Since(t0).Microseconds()) / 1000, outcome: out}
}

// ratio is a/b, or 0 when b is 0 (no figure rather than infinity).
func ratio(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) {
		return 0
	}
	return a / b
}

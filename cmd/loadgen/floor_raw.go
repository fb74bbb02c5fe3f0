package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	_ "modernc.org/sqlite" // database/sql's "sqlite" driver, the one the game's store uses
)

// The raw floor (issue 30, item 1): a bet's irreducible work written with
// none of the game's code, `loadgen floor-serve --raw`. It answers the same
// POST /bet as the floor (floor.go), and does:
//   - one net/http handler;
//   - one /bet to the same operator-sim, its body signed with crypto/hmac
//     (X-Signature: the lowercase hex of HMAC-SHA256 over the body's bytes,
//     the contract's "Authentication"), sent once with net/http's client;
//   - one row through one prepared INSERT, in a transaction that a batcher
//     shares between the bets waiting for it (database/sql and the same
//     SQLite driver and settings: WAL, synchronous FULL, one connection).
//
// The floor does the same work through the game's wallet client and store;
// the game's CPU per bet against the two floors, in the same run, splits
// the game's cost into the machine's limit for this work (the raw floor) and
// the cost of the game's own components (the floor over the raw floor).

// rawBatch is the most rows one transaction of the raw floor commits.
const rawBatch = 256

// rawFloor is the raw floor's handler and what it holds.
type rawFloor struct {
	hc                                  *http.Client
	walletURL, operator, apiKey, gameID string
	currency                            string
	secret                              []byte
	rows                                chan rawRow
}

// rawRow is one bet's row, and where its commit's outcome goes.
type rawRow struct {
	id, playerID string
	amount       int64
	at           int64 // Unix milliseconds
	done         chan error
}

// openRawFloor opens the raw floor's SQLite file with the game's settings,
// makes its one table, and starts its batcher, which stops when ctx ends.
func openRawFloor(ctx context.Context, path string) (*sql.DB, chan rawRow, error) {
	db, err := sql.Open("sqlite", "file:"+path+
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(5000)&_txlock=immediate")
	if err != nil {
		return nil, nil, fmt.Errorf("raw floor: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS floor_bets (
		id TEXT NOT NULL PRIMARY KEY, player_id TEXT NOT NULL, amount INTEGER NOT NULL, created_at INTEGER NOT NULL) STRICT`); err != nil {
		_ = db.Close()
		return nil, nil, fmt.Errorf("raw floor: create its table: %w", err)
	}
	insert, err := db.PrepareContext(ctx, `INSERT INTO floor_bets (id, player_id, amount, created_at) VALUES (?, ?, ?, ?)`)
	if err != nil {
		_ = db.Close()
		return nil, nil, fmt.Errorf("raw floor: prepare its insert: %w", err)
	}
	rows := make(chan rawRow, 4*rawBatch)
	go batchRows(ctx, db, insert, rows)
	return db, rows, nil
}

// batchRows commits the rows it receives, each transaction holding every
// row waiting when it began (at most rawBatch), until ctx ends.
func batchRows(ctx context.Context, db *sql.DB, insert *sql.Stmt, rows <-chan rawRow) {
	batch := make([]rawRow, 0, rawBatch)
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-rows:
			batch = append(batch[:0], r)
		}
	more:
		for len(batch) < rawBatch {
			select {
			case r := <-rows:
				batch = append(batch, r)
			default:
				break more
			}
		}
		err := commitRows(ctx, db, insert, batch)
		for _, r := range batch {
			r.done <- err
		}
	}
}

// commitRows inserts batch in one transaction.
func commitRows(ctx context.Context, db *sql.DB, insert *sql.Stmt, batch []rawRow) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	st := tx.StmtContext(ctx, insert)
	for _, r := range batch {
		if _, err := st.ExecContext(ctx, r.id, r.playerID, r.amount, r.at); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// rawWalletAnswer is what the raw floor reads of the wallet's answer.
type rawWalletAnswer struct {
	Status    string `json:"status"`
	Balance   int64  `json:"balance"`
	ErrorCode string `json:"error_code"`
}

func (f *rawFloor) bet(w http.ResponseWriter, r *http.Request) {
	req, id, ok := readFloorBet(w, r, "fr_")
	if !ok {
		return
	}
	ans, err := f.debit(r.Context(), req, id)
	switch {
	case err != nil:
		http.Error(w, `{"error_code":"WALLET_UNAVAILABLE"}`, http.StatusServiceUnavailable)
		return
	case ans.Status != "ok":
		http.Error(w, fmt.Sprintf(`{"error_code":%q}`, ans.ErrorCode), http.StatusConflict)
		return
	}
	done := make(chan error, 1)
	select {
	case f.rows <- rawRow{id: id, playerID: req.PlayerID, amount: req.Amount, at: time.Now().UnixMilli(), done: done}:
	case <-r.Context().Done():
		return
	}
	if err := <-done; err != nil {
		http.Error(w, `{"error_code":"COMMIT_FAILED"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{"transaction_id": id, "balance": ans.Balance})
}

// debit sends one signed /bet for req under the transaction id id.
func (f *rawFloor) debit(ctx context.Context, req floorBet, id string) (rawWalletAnswer, error) {
	var rid [8]byte
	_, _ = rand.Read(rid[:])
	body, err := json.Marshal(map[string]any{
		"operator": f.operator, "timestamp": time.Now().UnixMilli(), "request_id": hex.EncodeToString(rid[:]),
		"currency": f.currency, "game_id": f.gameID, "player_id": req.PlayerID, "token": req.Token,
		"amount": req.Amount, "transaction_id": id, "round_id": "floor", "freebet_id": nil,
	})
	if err != nil {
		return rawWalletAnswer{}, err
	}
	mac := hmac.New(sha256.New, f.secret)
	mac.Write(body)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, f.walletURL+"/bet", bytes.NewReader(body))
	if err != nil {
		return rawWalletAnswer{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Authorization", "Bearer "+f.apiKey)
	hr.Header.Set("X-Signature", hex.EncodeToString(mac.Sum(nil)))
	resp, err := f.hc.Do(hr)
	if err != nil {
		return rawWalletAnswer{}, err
	}
	defer resp.Body.Close()
	var ans rawWalletAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&ans); err != nil {
		return rawWalletAnswer{}, fmt.Errorf("raw floor: /bet answered %d: %w", resp.StatusCode, err)
	}
	if ans.Status == "" {
		return rawWalletAnswer{}, errors.New("raw floor: /bet answered without a status")
	}
	return ans, nil
}

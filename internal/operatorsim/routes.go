package operatorsim

import (
	"encoding/json"
	"net/http"

	"github.com/crashstudio/crashgame/gen/wallet"
)

// routes assembles the handler:
//
//	POST /balance /bet /win /rollback   wallet routes: authenticate -> validate -> faults -> generated strict server
//	POST /admin/...                     admin API, signed (admin.go)
//	GET  /                              lobby page; POST /lobby/play, /lobby/demo, /lobby/details (lobby.go)
//	GET  /healthz                       {"status":"ok"}
//
// Anything else answers 404 in the wallet's error shape.
func (s *Sim) routes() (http.Handler, error) {
	v, err := newValidator()
	if err != nil {
		return nil, err
	}
	strict := wallet.NewStrictHandlerWithOptions(walletServer{s: s}, nil, wallet.StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  s.requestError,
		ResponseErrorHandlerFunc: s.responseError,
	})
	generated := wallet.HandlerWithOptions(strict, wallet.StdHTTPServerOptions{ErrorHandlerFunc: s.requestError})
	walletRoutes := s.authenticate(v.validate(s.withFaults(generated)))

	lobby, err := s.lobby()
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	for _, p := range []string{"/balance", "/bet", "/win", "/rollback"} {
		mux.Handle("POST "+p, walletRoutes)
	}
	mux.Handle("POST /admin/", s.adminRoutes())
	mux.Handle("GET /{$}", lobby.page())
	mux.Handle("POST /lobby/play", lobby.play())
	mux.Handle("POST /lobby/demo", lobby.demo())
	mux.Handle("POST /lobby/details", lobby.details())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok"})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeWalletError(w, http.StatusNotFound, codeInternalError, "no such route: "+r.Method+" "+r.URL.Path, nil)
	})
	return mux, nil
}

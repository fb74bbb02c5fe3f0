package table

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/crashstudio/crashgame/gen/table"
)

// web holds the page: index.html and, under static/, its styles, modules and
// the dictionaries static/i18n/{pt,en,es}.json. The dictionaries are the one
// source of every player-facing text, the API's error messages included
// (keys "error.<CODE>").
//
//go:embed web
var web embed.FS

// languages are the languages of the page's dictionaries: the contract's
// (LANG-1).
var languages = []string{"pt", "en", "es"}

// messages maps language -> key -> text.
type messages map[string]map[string]string

func loadMessages() (messages, error) {
	m := messages{}
	for _, lang := range languages {
		raw, err := web.ReadFile("web/static/i18n/" + lang + ".json")
		if err != nil {
			return nil, fmt.Errorf("table: dictionary %s: %w", lang, err)
		}
		var d map[string]string
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("table: dictionary %s: %w", lang, err)
		}
		m[lang] = d
	}
	return m, nil
}

// text returns the message of an error code in lang (English as a last resort,
// which a test keeps from happening).
func (m messages) text(lang string, code table.ErrorCode) string {
	key := "error." + string(code)
	if t := m[lang][key]; t != "" {
		return t
	}
	if t := m["en"][key]; t != "" {
		return t
	}
	return string(code)
}

// pageRoutes serves the page at / and its assets under /static/.
func (s *Server) pageRoutes() map[string]http.Handler {
	static, _ := fs.Sub(web, "web/static")
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	return map[string]http.Handler{
		"GET /{$}": s.page("web/index.html"),
		"GET /static/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Cache-Control", "no-cache")
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "no-referrer")
			files.ServeHTTP(w, r)
		}),
	}
}

// page serves an HTML page file of the embedded web folder: the table, the
// public chains page, a round's support page (their data come from their
// own routes).
func (s *Server) page(file string) http.HandlerFunc {
	body, _ := web.ReadFile(file)
	csp := s.contentSecurityPolicy()
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		// The launch URL carries the ticket (?sid=), a support page's the
		// link's credential: never send them on as a referrer.
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", csp)
		_, _ = w.Write(body)
	}
}

// chainsPageOr serves the public chains page to a browser (wantsPage) and
// json, the list itself, to anyone else.
func (s *Server) chainsPageOr(json http.HandlerFunc) http.HandlerFunc {
	page := s.page("web/chains.html")
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Vary", "Accept") // one address, two documents
		if wantsPage(r) {
			page(w, r)
			return
		}
		json(w, r)
	}
}

// contentSecurityPolicy lets the page load only its own files and talk only to
// its own origin (the stream included); any site may frame it (operators embed
// the game in an iframe).
func (s *Server) contentSecurityPolicy() string {
	connect := []string{"'self'"}
	for _, o := range slices.Sorted(maps.Keys(s.origins)) {
		switch {
		case strings.HasPrefix(o, "https://"):
			connect = append(connect, "wss://"+strings.TrimPrefix(o, "https://"))
		case strings.HasPrefix(o, "http://"):
			connect = append(connect, "ws://"+strings.TrimPrefix(o, "http://"))
		}
	}
	return "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src " + strings.Join(connect, " ") + "; base-uri 'none'; form-action 'none'; object-src 'none'"
}

package table

import (
	"html"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"

	documents "github.com/crashstudio/crashgame/api"
)

func dictionaries(t *testing.T) messages {
	t.Helper()
	m, err := loadMessages()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func enumOf(t *testing.T, schema string) []string {
	t.Helper()
	raw, err := documents.Documents.ReadFile("table.v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	// An open set lists its known values in x-extensible-enum (no enum).
	s := doc.Components.Schemas[schema].Value
	values := s.Enum
	if known, ok := s.Extensions["x-extensible-enum"].([]any); ok {
		values = known
	}
	var out []string
	for _, v := range values {
		out = append(out, v.(string))
	}
	if len(out) == 0 {
		t.Fatalf("no enum or x-extensible-enum in %s", schema)
	}
	return out
}

// Rule LANG-1: every text exists in pt, en and es.
func TestDictionariesComplete(t *testing.T) {
	t.Parallel()
	m := dictionaries(t)
	for _, lang := range languages {
		for _, other := range languages {
			for key := range m[other] {
				if strings.TrimSpace(m[lang][key]) == "" {
					t.Errorf("%s has no text for %q (present in %s)", lang, key, other)
				}
			}
		}
		// The API's messages: one per error code of the document.
		for _, code := range enumOf(t, "ErrorCode") {
			if m[lang]["error."+code] == "" {
				t.Errorf("%s has no message for error %s", lang, code)
			}
		}
		for _, status := range enumOf(t, "BetStatus") {
			if m[lang]["status."+status] == "" {
				t.Errorf("%s has no text for bet status %s", lang, status)
			}
		}
	}
	// The translations are translations, not copies of English (spot check).
	if m["pt"]["error.BETTING_CLOSED"] == m["en"]["error.BETTING_CLOSED"] || m["es"]["panel.cancel"] == m["en"]["panel.cancel"] {
		t.Error("pt or es repeats the English text")
	}
}

var (
	i18nAttr  = regexp.MustCompile(`data-i18n="([^"]+)"`)
	i18nAttrs = regexp.MustCompile(`data-i18n-attr="([^"]+)"`)
	jsKey     = regexp.MustCompile(`\b(?:t|setText\([^,]+,)\s*\(?\s*'([a-zA-Z][\w.]*)'`)
	tags      = regexp.MustCompile(`(?s)<script.*?</script>|<style.*?</style>|<!--.*?-->|<[^>]*>`)
	visible   = regexp.MustCompile(`\s(title|placeholder|alt|aria-label|value)="([^"]*)"`)
	jsLiteral = regexp.MustCompile("(?:textContent|innerText|title|placeholder)\\s*=\\s*(['\"`])([^'\"`]*)['\"`]")
)

// The page shows no text of its own: every visible string comes from the
// dictionary (keys that all exist), in HTML and in the modules.
func TestPageHasNoHardCodedText(t *testing.T) {
	t.Parallel()
	m := dictionaries(t)
	keys := map[string]bool{}
	// Every page: the table, the public chains page, a round's support page.
	for _, file := range []string{"web/index.html", "web/chains.html", "web/support.html"} {
		page, err := web.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		src := string(page)
		for _, k := range i18nAttr.FindAllStringSubmatch(src, -1) {
			keys[k[1]] = true
		}
		for _, k := range i18nAttrs.FindAllStringSubmatch(src, -1) {
			for _, pair := range strings.Split(k[1], ";") {
				if _, key, ok := strings.Cut(pair, ":"); ok {
					keys[key] = true
				}
			}
		}
		text := html.UnescapeString(tags.ReplaceAllString(src, " "))
		for _, r := range text {
			if unicode.IsLetter(r) {
				t.Fatalf("%s shows text outside the dictionary: %q", file, strings.Join(strings.Fields(text), " "))
			}
		}
		for _, a := range visible.FindAllStringSubmatch(src, -1) {
			if strings.IndexFunc(a[2], unicode.IsLetter) >= 0 {
				t.Errorf("%s has a visible attribute outside the dictionary: %s=%q", file, a[1], a[2])
			}
		}
	}

	err := fs.WalkDir(web, "web/static", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".js") {
			return err
		}
		raw, err := web.ReadFile(path)
		if err != nil {
			return err
		}
		js := string(raw)
		if strings.Contains(js, "innerHTML") || strings.Contains(js, "insertAdjacentHTML") || strings.Contains(js, "document.write") {
			t.Errorf("%s writes HTML", path)
		}
		for _, lit := range jsLiteral.FindAllStringSubmatch(js, -1) {
			if strings.IndexFunc(lit[2], unicode.IsLetter) >= 0 {
				t.Errorf("%s sets visible text outside the dictionary: %q", path, lit[0])
			}
		}
		for _, k := range jsKey.FindAllStringSubmatch(js, -1) {
			keys[k[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 50 {
		t.Fatalf("found only %d dictionary keys in the page: the scan is broken", len(keys))
	}
	for key := range keys {
		if strings.HasSuffix(key, ".") {
			continue // a prefix completed at run time (status.<BetStatus>), checked above
		}
		for _, lang := range languages {
			if m[lang][key] == "" {
				t.Errorf("the page uses %q, missing in %s", key, lang)
			}
		}
	}
}

func TestPageServed(t *testing.T) {
	t.Parallel()
	s := &Server{origins: map[string]bool{"https://games.example.com": true}}
	mux := http.NewServeMux()
	for p, h := range s.pageRoutes() {
		mux.Handle(p, h)
	}
	cases := []struct{ path, ctype string }{
		{"/?sid=tk_x&lang=pt&cur=BRL", "text/html"},
		{"/static/app.js", "javascript"},
		{"/static/app.css", "text/css"},
		{"/static/i18n/pt.json", "application/json"},
	}
	for _, tc := range cases {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Type"), tc.ctype) {
			t.Errorf("GET %s: %d %s", tc.path, rec.Code, rec.Header().Get("Content-Type"))
		}
		// The launch URL carries the ticket: no referrer ever leaves the page.
		if rec.Header().Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s: Referrer-Policy %q", tc.path, rec.Header().Get("Referrer-Policy"))
		}
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "wss://games.example.com") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP = %q", csp)
	}
}

// The browser's verification (fairness.js, WebCrypto and BigInt) agrees with
// the independent vectors of package fairness. It runs where node exists.
func TestBrowserVerificationMatchesVectors(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the browser verification is checked by the browser test only")
	}
	dir := t.TempDir()
	js, err := web.ReadFile("web/static/fairness.js")
	if err != nil {
		t.Fatal(err)
	}
	vectors, err := os.ReadFile(filepath.Join("..", "fairness", "testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fairness.mjs"), js, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vectors.json"), vectors, 0o600); err != nil {
		t.Fatal(err)
	}
	runner := `
import * as fair from './fairness.mjs';
import { readFileSync } from 'node:fs';
const v = JSON.parse(readFileSync(new URL('./vectors.json', import.meta.url)));
let n = 0;
for (const round of v.rounds) {
  for (let i = 0; i < v.settings.length; i++) {
    const s = v.settings[i], want = round.results[i];
    const r = await fair.draw(round.hash, s.salt);
    const c = await fair.crashPoint(round.hash, s.salt, s.rtp_bp, s.max_multiplier);
    if (r !== BigInt(want.r) || c !== BigInt(want.crash)) throw new Error('round ' + round.round + ' setting ' + i + ': ' + r + ' ' + c);
    n++;
  }
}
for (let i = 0; i + 1 < v.rounds.length; i++) {
  if (v.rounds[i + 1].round === v.rounds[i].round + 1 && await fair.previousHash(v.rounds[i + 1].hash) !== v.rounds[i].hash) throw new Error('chain at ' + i);
}
for (const d of v.draws) {
  if (fair.crashFromDraw(BigInt(d.r), d.rtp_bp, d.max_multiplier) !== BigInt(d.crash)) throw new Error('draw ' + d.r);
  n++;
}
console.log(n);
`
	if err := os.WriteFile(filepath.Join(dir, "run.mjs"), []byte(runner), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join(dir, "run.mjs")).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if n := strings.TrimSpace(string(out)); n == "0" || n == "" {
		t.Fatalf("no vector checked: %q", out)
	}
}

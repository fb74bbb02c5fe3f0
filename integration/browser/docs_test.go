//go:build integration

package browser

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"gopkg.in/yaml.v3"

	"github.com/crashstudio/crashgame/api"
)

// TestAPIReferenceInChromium opens the game's /docs as an operator would,
// follows the index to each published document's page and finds there, in
// the operations' headings, every operation the document declares: method
// and path for the OpenAPI documents, operation, action and channel address
// for the stream's AsyncAPI document. The stylesheet applies, a document's
// YAML shows as text, and no request of the tab leaves the game's origin.
func TestAPIReferenceInChromium(t *testing.T) {
	chrome := requireChromium(t)
	srv := startDev(t, buildCrashgame(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	logs := &testLog{t: t}
	defer logs.close()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1280, 800))...)
	defer cancelAlloc()
	tab, closeTab := chromedp.NewContext(allocCtx, chromedp.WithErrorf(logs.errorf))
	defer closeTab()
	watch := watchTab(tab)

	do(t, tab, "open /docs", chromedp.Navigate(srv.GameURL+"/docs"), chromedp.WaitVisible(chromedp.CSS("table.documents")))
	if loc, err := chromedp.Run(tab, chromedp.Location()); err != nil || loc != srv.GameURL+"/docs/" {
		t.Fatalf("/docs led to %q (%v), want %s/docs/", loc, err, srv.GameURL)
	}
	pages, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('table.documents td:first-child a')).map((a) => a.href)`))
	if err != nil {
		t.Fatal(err)
	}

	names, err := documentNames()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		want, err := declaredOperations(name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		page := srv.GameURL + "/docs/" + name
		if !slices.Contains(pages, page) {
			t.Errorf("the index does not link %s (it links %v)", page, pages)
			continue
		}
		do(t, tab, "open "+page, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#operations h3")))
		headings, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#operations h3')).map((h) => h.innerText.replace(/\s+/g, ' ').trim())`))
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range want {
			if !slices.Contains(headings, op) {
				t.Errorf("/docs/%s shows no operation %q (its operations: %q)", name, op, headings)
			}
		}
		// The stylesheet, from the game, applies: a method is a coloured badge.
		colour, err := chromedp.Run(tab, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('#operations .method')).backgroundColor`))
		if err != nil || colour == "" || colour == "rgba(0, 0, 0, 0)" {
			t.Errorf("/docs/%s: a method's background is %q (%v): the stylesheet did not apply", name, colour, err)
		}
		t.Logf("/docs/%s: %d operations found", name, len(want))
	}

	// A document as written shows in the tab as text; it is not downloaded.
	do(t, tab, "open a document's YAML", chromedp.Navigate(srv.GameURL+"/openapi/game.v1.yaml"), chromedp.WaitReady(chromedp.CSS("body")))
	shown, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.contentType + ' ' + document.body.innerText.slice(0, 40)`))
	if err != nil || !strings.HasPrefix(shown, "text/plain openapi: 3.0.3") {
		t.Errorf("/openapi/game.v1.yaml in the tab: %q (%v), want text/plain starting with openapi: 3.0.3", shown, err)
	}

	game, err := url.Parse(srv.GameURL)
	if err != nil {
		t.Fatal(err)
	}
	requests := watch.urls()
	if len(requests) == 0 {
		t.Fatal("no request recorded: the network events did not arrive")
	}
	for _, u := range requests {
		p, err := url.Parse(u)
		if err != nil || p.Scheme != game.Scheme || p.Host != game.Host {
			t.Errorf("a request left the game's origin %s: %s", srv.GameURL, u)
		}
	}
	if ex := watch.exceptions(); len(ex) > 0 {
		t.Errorf("JavaScript exceptions: %v", ex)
	}
	// Chromium asks the origin for /favicon.ico for a page that names no icon
	// (the YAML, shown as text, cannot name one); the game has none, and
	// its 404 is the one error expected.
	problems := slices.DeleteFunc(watch.errors(), func(p string) bool {
		return strings.Contains(p, "404") && strings.HasSuffix(p, game.Host+"/favicon.ico")
	})
	if len(problems) > 0 {
		t.Errorf("the tab reported errors (a load the page's policy blocked would be one): %v", problems)
	}
	t.Logf("%d requests, all to %s", len(requests), srv.GameURL)
}

// documentNames lists the published documents without extension.
func documentNames() ([]string, error) {
	entries, err := api.Documents.ReadDir(".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return names, nil
}

// declaredOperations reads a published document on its own and lists its
// operations as their headings read: "POST /v1/games", or for AsyncAPI
// "sendEvents send /api/v1/stream".
func declaredOperations(file string) ([]string, error) {
	raw, err := api.Documents.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc struct {
		AsyncAPI   string                              `yaml:"asyncapi"`
		Paths      yaml.Node                           `yaml:"paths"`
		Channels   map[string]struct{ Address string } `yaml:"channels"`
		Operations yaml.Node                           `yaml:"operations"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	var out []string
	if doc.AsyncAPI != "" {
		for i := 0; i+1 < len(doc.Operations.Content); i += 2 {
			var op struct {
				Action  string
				Channel struct {
					Ref string `yaml:"$ref"`
				}
			}
			if err := doc.Operations.Content[i+1].Decode(&op); err != nil {
				return nil, err
			}
			address := doc.Channels[strings.TrimPrefix(op.Channel.Ref, "#/channels/")].Address
			out = append(out, doc.Operations.Content[i].Value+" "+op.Action+" "+address)
		}
		return out, nil
	}
	for i := 0; i+1 < len(doc.Paths.Content); i += 2 {
		path, item := doc.Paths.Content[i].Value, doc.Paths.Content[i+1]
		for j := 0; j+1 < len(item.Content); j += 2 {
			switch m := item.Content[j].Value; m {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				out = append(out, strings.ToUpper(m)+" "+path)
			}
		}
	}
	return out, nil
}

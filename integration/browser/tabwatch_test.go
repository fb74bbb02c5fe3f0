//go:build integration

package browser

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// tabWatch records what a tab did that a failed wait should show: its
// uncaught exceptions, its console and browser-log errors, and its requests
// (which were answered, which failed and why, which never finished). A page
// that stops short (a module that did not load, a fetch that hangs) is then
// diagnosed from the test's output, not guessed at.
type tabWatch struct {
	mu       sync.Mutex
	thrown   []string
	problems []string
	requests map[network.RequestID]*tabRequest
	order    []network.RequestID
	// lost are the page's scripts that Chromium aborted because the host's
	// network changed (netNetworkChanged), not yet taken by lostScript.
	lost []string
}

// netNetworkChanged is Chromium's error for a request it aborted because the
// host's network interfaces changed. On CI the other suites' containers
// start and stop beside the browser, and each adds or removes an interface:
// a page's module script aborted so leaves the page stopped before it
// starts (seen on 27 November: the support page's http.js). It is the
// host's doing, not the page's.
const netNetworkChanged = "net::ERR_NETWORK_CHANGED"

type tabRequest struct {
	method, url string
	status      int64
	done        bool
	failed      string
}

// watched maps a tab (its chromedp context) to its watch, for waitJS.
var watched sync.Map

// watchTab starts recording tab's exceptions, errors and requests. Call it
// before the tab navigates.
func watchTab(tab context.Context) *tabWatch {
	w := &tabWatch{requests: map[network.RequestID]*tabRequest{}}
	if err := chromedp.Listen(tab, w.event); err != nil {
		w.problems = append(w.problems, "listen: "+err.Error())
	}
	watched.Store(chromedp.FromContext(tab), w)
	return w
}

// event runs on the tab's reading goroutine: it only records.
func (w *tabWatch) event(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		text := ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil && ev.ExceptionDetails.Exception.Description != "" {
			text += " " + ev.ExceptionDetails.Exception.Description
		}
		w.thrown = append(w.thrown, text)
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, strings.TrimSpace(a.Description+" "+string(a.Value)))
			}
			w.problems = append(w.problems, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(parts, " ")))
		}
	case *cdplog.EventEntryAdded:
		if e := ev.Entry; e != nil && (e.Level == cdplog.EntryLevelError || e.Level == cdplog.EntryLevelWarning) {
			w.problems = append(w.problems, fmt.Sprintf("log %s %s: %s %s", e.Level, e.Source, e.Text, e.URL))
		}
	case *network.EventRequestWillBeSent:
		if _, ok := w.requests[ev.RequestID]; !ok {
			w.order = append(w.order, ev.RequestID)
		}
		w.requests[ev.RequestID] = &tabRequest{method: ev.Request.Method, url: ev.Request.URL}
	case *network.EventResponseReceived:
		if r := w.requests[ev.RequestID]; r != nil && ev.Response != nil {
			r.status = ev.Response.Status
		}
	case *network.EventLoadingFinished:
		if r := w.requests[ev.RequestID]; r != nil {
			r.done = true
		}
	case *network.EventLoadingFailed:
		if r := w.requests[ev.RequestID]; r != nil {
			r.done, r.failed = true, ev.ErrorText
			if ev.Canceled {
				r.failed += " (canceled)"
			}
			if u, _, _ := strings.Cut(r.url, "?"); ev.ErrorText == netNetworkChanged && strings.HasSuffix(u, ".js") {
				w.lost = append(w.lost, u)
			}
		}
	}
}

// lostScript returns a script of the page that Chromium aborted because the
// host's network changed, once: the caller reloads the page.
func (w *tabWatch) lostScript() (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lost) == 0 {
		return "", false
	}
	u := w.lost[0]
	w.lost = w.lost[1:]
	return u, true
}

// exceptions returns the page's uncaught JavaScript exceptions so far.
func (w *tabWatch) exceptions() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.thrown)
}

// urls returns the URL of every request of the tab so far, in order.
func (w *tabWatch) urls() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.order))
	for _, id := range w.order {
		out = append(out, w.requests[id].url)
	}
	return out
}

// errors returns the console and browser-log errors and warnings so far.
func (w *tabWatch) errors() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.problems)
}

// String is the record for a failure message: every request of the tab with
// its outcome, then the exceptions and the errors. A URL's query (a launch
// ticket, a support link's token is in its path) is cut.
func (w *tabWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests:", len(w.order))
	for _, id := range w.order {
		r := w.requests[id]
		u, _, _ := strings.Cut(r.url, "?")
		outcome := fmt.Sprintf("%d", r.status)
		switch {
		case r.failed != "":
			outcome = "FAILED " + r.failed
		case !r.done && r.status == 0:
			outcome = "NO ANSWER"
		case !r.done:
			outcome += " (body not finished)"
		}
		fmt.Fprintf(&b, "\n  %s %s -> %s", r.method, u, outcome)
	}
	for _, e := range w.thrown {
		fmt.Fprintf(&b, "\n  exception: %s", e)
	}
	for _, p := range w.problems {
		fmt.Fprintf(&b, "\n  %s", p)
	}
	return b.String()
}

// watchOf returns the watch of tab, or nil when none was started.
func watchOf(tab context.Context) *tabWatch {
	if w, ok := watched.Load(chromedp.FromContext(tab)); ok {
		return w.(*tabWatch)
	}
	return nil
}

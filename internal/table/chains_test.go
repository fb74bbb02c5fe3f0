package table_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/fairness"
)

// The public fairness routes, without a session: the chain's document and
// its round list agree with the verification `crashgame verify` and the
// page run (fairness.VerifyChainRound) for every ended round; a browser gets
// the page at the list's address; refusals are in the document's shape.
func TestPublicChainsVerify(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{betting: 300 * time.Millisecond})
	first := e.waitPhase(t, engine.PhaseBetting, 0)
	for e.waitPhase(t, engine.PhaseBetting, 0).Seq < first.Seq+3 {
		e.waitPhase(t, engine.PhaseCrashed, 0)
	}
	list := decode[table.ChainList](t, e.call(t, "GET", "/fairness/chains?game_id=crash", "", nil))
	if len(list.Items) != 1 || list.Items[0].Status != table.ChainStatusActive || list.Items[0].Salt == nil ||
		list.Items[0].SaltSource == nil || *list.Items[0].SaltSource != table.ChainSaltSourceGameDraw || len(list.Items[0].Contributions) != 1 {
		t.Fatalf("chains = %+v", list.Items)
	}
	chain := decode[table.Chain](t, e.call(t, "GET", "/fairness/chains/"+list.Items[0].ChainId, "", nil))
	rounds := decode[table.ChainRoundList](t, e.call(t, "GET", "/fairness/chains/"+chain.ChainId+"/rounds", "", nil))
	if len(rounds.Items) < 3 || rounds.NextFrom != nil {
		t.Fatalf("rounds = %+v", rounds)
	}
	doc := fairness.ChainDocument{Terminal: chain.TerminalHash, Salt: *chain.Salt, RTPBasisPoints: int64(chain.RtpBp),
		MaxMultiplier: chain.MaxMultiplier, Length: chain.Length, Checkpoints: map[int64]string{}}
	for _, c := range chain.Contributions {
		doc.Contributions = append(doc.Contributions, *c.Value)
	}
	for i, r := range rounds.Items {
		res, err := fairness.VerifyChainRound(r.Hash, doc)
		if err != nil || res.CrashPoint != r.CrashPoint || res.Position != r.Position || r.Position != int64(i+1) ||
			r.Seq != chain.FirstSeq+r.Position-1 {
			t.Fatalf("round %s: verified %+v, %v; listed %+v", r.RoundId, res, err, r)
		}
	}
	// Paging by position neither skips nor repeats.
	page := decode[table.ChainRoundList](t, e.call(t, "GET", "/fairness/chains/"+chain.ChainId+"/rounds?limit=2", "", nil))
	if len(page.Items) != 2 || page.NextFrom == nil || *page.NextFrom != 3 {
		t.Fatalf("a page of 2 = %+v", page)
	}
	next := decode[table.ChainRoundList](t, e.call(t, "GET", fmt.Sprintf("/fairness/chains/%s/rounds?from=%d&limit=2", chain.ChainId, *page.NextFrom), "", nil))
	if len(next.Items) == 0 || next.Items[0].Position != 3 {
		t.Fatalf("the next page = %+v", next)
	}

	req := httptest.NewRequest(http.MethodGet, "/fairness/chains", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") || !strings.Contains(rec.Body.String(), "/static/chains.js") ||
		rec.Header().Get("Vary") != "Accept" {
		t.Fatalf("the page: %d %s %q", rec.Code, rec.Header(), rec.Body.String()[:min(200, rec.Body.Len())])
	}
	for _, tc := range []struct {
		path   string
		status int
		code   table.ErrorCode
	}{
		{"/fairness/chains/nope", 404, table.ErrorCodeUnknownChain},
		{"/fairness/chains/nope/rounds", 404, table.ErrorCodeUnknownChain},
		{"/fairness/chains?before=nope", 404, table.ErrorCodeUnknownChain},
		{"/fairness/chains?limit=0", 400, table.ErrorCodeBadRequest},
		{"/fairness/chains/" + chain.ChainId + "/rounds?limit=1001", 400, table.ErrorCodeBadRequest},
		{"/fairness/chains/" + chain.ChainId + "/rounds?from=0", 400, table.ErrorCodeBadRequest},
	} {
		r := e.call(t, "GET", tc.path, "", nil)
		if got := decode[table.Error](t, r); r.Code != tc.status || got.ErrorCode != tc.code {
			t.Errorf("GET %s: %d %+v, want %d %s", tc.path, r.Code, got, tc.status, tc.code)
		}
	}
}

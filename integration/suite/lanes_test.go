//go:build integration

package suite

import (
	"sync"
	"testing"
)

// A lane is a queue of scenarios that run one after another while the other
// lanes run theirs: each scenario has its own Env (its own network and
// containers), so scenarios of different lanes share nothing but the
// machine. Most of a scenario's time is waiting on the game's clock (betting
// windows, flights, back-offs, a frozen wallet), not computing.
//
// Three lanes keep apart what must not share the machine with its like; run
// one after another, their scenarios took about 360 s, 425 s and 237 s on 2
// cores:
//
//   - laneCluster: the cluster scenarios (three replicas, NATS and a load
//     balancer each, the heaviest);
//   - laneSingle: the scenarios on one game, TestGameKilled (twenty kills and
//     restarts, the single game's heaviest) among them;
//   - laneBackoff: TestSupportFixesAParkedWin, which waits minutes for a win
//     to exhaust its twenty attempts and plays nothing meanwhile.
//
// A test joins its lane first thing (before Start). Without -parallel at
// least the number of scenarios (the Makefile passes it), go test runs as
// many at once as -parallel allows (GOMAXPROCS by default) and a scenario
// may wait for its lane while holding one of those slots: the package is
// then no slower than with its scenarios one after another, never wrong. A test that joins no lane runs alone,
// before every lane starts.
type lane struct{ sync.Mutex }

var (
	laneCluster = &lane{}
	laneSingle  = &lane{}
	laneBackoff = &lane{}
)

// join makes t a parallel test that runs when its lane is free, and frees
// the lane once t's cleanups are done: the cleanup registered here runs
// after those Start registers later (removal of the containers), so the next
// scenario of the lane starts on a machine where this one's are gone.
func (l *lane) join(t *testing.T) {
	t.Helper()
	t.Parallel()
	l.Lock()
	t.Cleanup(l.Unlock)
}

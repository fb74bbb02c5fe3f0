package beacon_test

import (
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/beacon"
)

// A chain whose seeding window ends at 12:30:45 UTC names the first
// quicknet round emitted strictly after that instant.
func ExampleNetwork_FirstRoundAfter() {
	qn := beacon.Quicknet()
	windowEnds := time.Date(2026, 4, 20, 12, 30, 45, 0, time.UTC)
	round := qn.FirstRoundAfter(windowEnds)
	fmt.Println(round, qn.TimeOf(round).Format(time.RFC3339))
	// Output: 27961628 2026-04-20T12:30:48Z
}

// Verifying a real quicknet round, as an auditor would: its signature and
// its randomness, SHA-256 of the signature.
func ExampleNetwork_Verify() {
	sig, _ := hexDecode("b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b")
	v, err := beacon.Quicknet().Verify(657413, sig)
	fmt.Println(v.RandomnessHex(), err)
	// Output: fc1873a13f3545aeade8401532ef5519920652eee6b0d2b19ca12643b87b3587 <nil>
}

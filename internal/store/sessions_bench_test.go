package store_test

import (
	"fmt"
	"testing"

	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
)

// BenchmarkWriteSessionStates: one flush of the display balances of 2,000
// players (each with one session), as the sessions' flush loop writes them
// once a second while they play, on a SQLite file: one op is one flush.
func BenchmarkWriteSessionStates(b *testing.B) {
	const players = 2000
	s, err := store.Open(b.Context(), storetest.SQLite(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	at := store.MillisOf(t0)
	balances := make([]store.SessionBalance, players)
	for i := range players {
		r := newSession(fmt.Sprint(i))
		r.PlayerID = fmt.Sprintf("p-%d", i)
		if err := s.InsertSession(b.Context(), r, nil); err != nil {
			b.Fatal(err)
		}
		balances[i] = store.SessionBalance{Operator: r.Operator, PlayerID: r.PlayerID, Currency: r.Currency, At: at}
	}
	n := int64(0)
	for b.Loop() {
		n++
		for i := range balances {
			balances[i].Balance = n
		}
		if err := s.WriteSessionStates(b.Context(), balances, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*players), "µs/player")
}

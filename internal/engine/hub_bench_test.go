package engine

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHubBroadcast is the stream fan-out: one event broadcast to 10,000
// subscribers, each drained by its own goroutine as the table's streams do.
// One op is one broadcast until every subscriber received it. With
// consumer=marshal each subscriber also encodes the event as JSON, as every
// stream of the table package does for itself; the event is a round's full
// board (BoardSize items, what a busy round sends at every flush). With
// consumer=shared the subscribers share one encoding (Event.Encoded), as the
// table's streams do now.
func BenchmarkHubBroadcast(b *testing.B) {
	const subscribers = 10_000
	items := make([]BetItem, BoardSize)
	for i := range items {
		items[i] = BetItem{BetID: fmt.Sprintf("b_%026d", i), Name: "p***", Currency: "BRL", Amount: 1000, Multiplier: 153, Payout: 1530}
	}
	for _, consumer := range []string{"drain", "marshal", "shared"} {
		b.Run(fmt.Sprintf("subscribers=%d/consumer=%s", subscribers, consumer), func(b *testing.B) {
			h := newHub()
			var wg sync.WaitGroup
			var bytes atomic.Int64
			var consumers sync.WaitGroup
			for i := range subscribers {
				s := h.add(fmt.Appendf(nil, "%032d", i), 128, RoundView{})
				consumers.Go(func() {
					for ev := range s.C {
						switch consumer {
						case "marshal":
							raw, _ := json.Marshal(ev)
							bytes.Add(int64(len(raw)))
						case "shared":
							raw := ev.Encoded(func(e *Event) []byte { b, _ := json.Marshal(e); return b })
							bytes.Add(int64(len(raw)))
						}
						wg.Done()
					}
				})
			}
			b.Cleanup(func() {
				h.mu.RLock()
				all := make([]*Subscription, 0, len(h.all))
				for s := range h.all {
					all = append(all, s)
				}
				h.mu.RUnlock()
				for _, s := range all {
					s.Close()
				}
				consumers.Wait()
			})
			var enqueue time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				wg.Add(subscribers)
				ev := &Event{Type: EventBets, Items: items, Round: RoundView{RoundID: "crash-42", Seq: 42, Phase: PhaseFlying}}
				t0 := time.Now()
				h.broadcast(ev)
				enqueue += time.Since(t0)
				wg.Wait()
			}
			if n := h.count(); n != subscribers {
				b.Fatalf("%d subscribers dropped", subscribers-n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*subscribers), "ns/delivery")
			b.ReportMetric(float64(enqueue.Microseconds())/float64(b.N)/1000, "broadcast-ms")
			if consumer != "drain" {
				b.ReportMetric(float64(bytes.Load())/float64(b.N), "json-B/op")
			}
		})
	}
}

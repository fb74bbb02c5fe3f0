package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/cluster/natstest"
)

// The NATS traffic over the rounds is the difference of two /varz
// readings, and per accepted bet that difference over the run's bets.
func TestNATSOverTheRounds(t *testing.T) {
	t.Parallel()
	var in, out int64 = 1_000, 2_500
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/varz" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		// A few of the server's other fields, which the tool ignores.
		_, _ = w.Write([]byte(`{"server_id":"N1","in_msgs":` + strconv.FormatInt(in, 10) + `,"out_msgs":` + strconv.FormatInt(out, 10) +
			`,"in_bytes":` + strconv.FormatInt(in*100, 10) + `,"out_bytes":1,"connections":3}`))
	}))
	defer srv.Close()
	from, err := readVarz(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	in, out = 1_000+1_100, 2_500+2_900
	to, err := readVarz(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	to.at = from.at.Add(10 * time.Second)
	got := natsOver(from, to, 100)
	want := natsTraffic{Seconds: 10, In: 1_100, Out: 2_900, InBytes: 110_000, InPerBet: 11, OutPerBet: 29}
	if *got != want {
		t.Fatalf("natsOver = %+v, want %+v", *got, want)
	}
	if none := natsOver(from, to, 0); none.InPerBet != 0 || none.OutPerBet != 0 {
		t.Fatalf("with no bet accepted: %+v", none)
	}
	if _, err := readVarz(context.Background(), srv.URL+"/nothing"); err == nil {
		t.Fatal("a monitoring address that answers 404 was read")
	}
}

// nats-bench delivers every published message to every subscriber and
// counts each once in and once out a subscriber.
func TestNATSBench(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := natsBench(ctx, srv.URL(), 3, 3_000, 500)
	if err != nil {
		t.Fatal(err)
	}
	if r.Messages != 3_000 || r.Subscribers != 3 || r.Received != 9_000 || r.Took <= 0 {
		t.Fatalf("natsBench = %+v, want 3,000 messages delivered to each of 3 subscribers", r)
	}
	if got, want := r.inOutPerSecond(), 12_000/r.Took.Seconds(); got != want {
		t.Fatalf("in and out a second %v, want %v", got, want)
	}
}

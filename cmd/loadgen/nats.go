package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// natsTraffic is what the NATS server carried while the players played
// (--nats-monitor: its /varz read when the rounds start and when they end):
// the messages it received from publishers (in) and delivered to
// subscribers (out), time-driven traffic included (the board, the replicas'
// health probes). A message every replica subscribes to is in once and out
// once per replica; a request or reply, in once and out once; so with R
// replicas the messages published to every replica number (out − in) /
// (R − 1), and docs/capacity.md's model scales them with R.
type natsTraffic struct {
	Seconds float64 `json:"seconds"`
	In      int64   `json:"in_msgs"`
	Out     int64   `json:"out_msgs"`
	InBytes int64   `json:"in_bytes"`
	// Per accepted bet of the run, when it accepted any.
	InPerBet  float64 `json:"in_msgs_per_accepted_bet,omitempty"`
	OutPerBet float64 `json:"out_msgs_per_accepted_bet,omitempty"`
}

// varz is the part of NATS's /varz the load tool reads.
type varz struct {
	InMsgs  int64 `json:"in_msgs"`
	OutMsgs int64 `json:"out_msgs"`
	InBytes int64 `json:"in_bytes"`
	at      time.Time
}

// readVarz reads the NATS server's /varz at base (its monitoring address).
func readVarz(ctx context.Context, base string) (varz, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/varz", nil)
	if err != nil {
		return varz{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return varz{}, fmt.Errorf("NATS /varz: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return varz{}, fmt.Errorf("NATS /varz: %s", resp.Status)
	}
	var v varz
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return varz{}, fmt.Errorf("NATS /varz: %w", err)
	}
	v.at = time.Now()
	return v, nil
}

// natsOver is the traffic between two readings, per accepted bet of the
// run as well.
func natsOver(from, to varz, accepted int) *natsTraffic {
	t := &natsTraffic{Seconds: to.at.Sub(from.at).Seconds(), In: to.InMsgs - from.InMsgs, Out: to.OutMsgs - from.OutMsgs,
		InBytes: to.InBytes - from.InBytes}
	if accepted > 0 {
		t.InPerBet, t.OutPerBet = float64(t.In)/float64(accepted), float64(t.Out)/float64(accepted)
	}
	return t
}

// describe is the summary's line of t.
func (t *natsTraffic) describe() string {
	return fmt.Sprintf("NATS over the rounds (%.0f s): %d messages in, %d out (%.0f and %.0f a second); per accepted bet %.1f in, %.1f out",
		t.Seconds, t.In, t.Out, float64(t.In)/t.Seconds, float64(t.Out)/t.Seconds, t.InPerBet, t.OutPerBet)
}

// readNATS reads the cluster's NATS server's /varz (--nats-monitor); the
// zero varz without it.
func (lg *loadgen) readNATS(ctx context.Context) (varz, error) {
	if lg.o.natsMonitor == "" {
		return varz{}, nil
	}
	return readVarz(ctx, lg.o.natsMonitor)
}

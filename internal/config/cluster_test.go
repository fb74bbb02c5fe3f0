package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/config"
)

const clusterBase = `
base_url: https://games.example.com
fairness: {seed_key: abababababababababababababababababababababababababababababababab}
database: postgres://crash:hunter2hunter2@db:5432/crash
games:
  - {game_id: crash, name: Crash, studio: S, category: crash}
operators:
  - {operator: demo, games: [crash]}
`

// The cluster section: absent, one process; present, the replica's name,
// the NATS servers and the lease settings, with their defaults.
func TestCluster(t *testing.T) {
	t.Parallel()
	if c := mustParse(t, clusterBase); c.Cluster != nil {
		t.Fatalf("no cluster section gave %+v", c.Cluster)
	}
	c := mustParse(t, clusterBase+"cluster:\n  replica: game-1\n  nats: nats://n1:4222, nats://user:s3cr3tpass@n2:4222\n")
	want := config.Cluster{Replica: "game-1", NATS: []string{"nats://n1:4222", "nats://user:s3cr3tpass@n2:4222"}, LeaseTTLMS: 2000, LeaseRenewMS: 500}
	if got := *c.Cluster; got.Replica != want.Replica || strings.Join(got.NATS, " ") != strings.Join(want.NATS, " ") ||
		got.LeaseTTLMS != want.LeaseTTLMS || got.LeaseRenewMS != want.LeaseRenewMS {
		t.Fatalf("cluster %+v, want %+v", got, want)
	}
	if c.Cluster.LeaseTTL() != 2*time.Second || c.Cluster.LeaseRenew() != 500*time.Millisecond || c.Cluster.Drain() != 2500*time.Millisecond {
		t.Fatalf("durations %v %v %v", c.Cluster.LeaseTTL(), c.Cluster.LeaseRenew(), c.Cluster.Drain())
	}
	c = mustParse(t, clusterBase+"cluster:\n  nats: nats://n1:4222\n  lease_ttl_ms: 5000\n  lease_renew_ms: 1000\n  drain_ms: 0\n")
	if c.Cluster.Replica == "" || c.Cluster.LeaseTTLMS != 5000 || c.Cluster.LeaseRenewMS != 1000 || c.Cluster.DrainMS != 0 {
		t.Fatalf("cluster %+v: the host name is the default replica", c.Cluster)
	}
}

func TestClusterRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file string
		want       []string
	}{
		{"sqlite", strings.Replace(clusterBase, "postgres://crash:hunter2hunter2@db:5432/crash", "sqlite://data/c.db", 1) + "cluster:\n  nats: nats://n1:4222\n",
			[]string{"a cluster needs PostgreSQL"}},
		{"no nats", clusterBase + "cluster:\n  replica: game-1\n",
			[]string{"nats is missing"}},
		{"bad nats", clusterBase + "cluster:\n  nats: http://user:s3cr3tpass@n1:4222\n",
			[]string{"not nats://HOST:PORT", "[redacted]@n1:4222"}},
		{"renew too slow", clusterBase + "cluster:\n  nats: nats://n1:4222\n  lease_ttl_ms: 1000\n  lease_renew_ms: 600\n",
			[]string{"at most half of lease_ttl_ms"}},
		{"ttl out of range", clusterBase + "cluster:\n  nats: nats://n1:4222\n  lease_ttl_ms: 100\n",
			[]string{"lease_ttl_ms 100 is outside 200..60000"}},
		{"drain out of range", clusterBase + "cluster:\n  nats: nats://n1:4222\n  drain_ms: 60000\n",
			[]string{"drain_ms 60000 is outside 0..30000"}},
		{"replica with a space", clusterBase + "cluster:\n  nats: nats://n1:4222\n  replica: game 1\n",
			[]string{"without spaces"}},
		{"unknown key", clusterBase + "cluster:\n  nats: nats://n1:4222\n  leader: yes\n",
			[]string{"leader"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse([]byte(tt.file), nil)
			if err == nil {
				t.Fatalf("accepted:\n%s", tt.file)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "s3cr3tpass") || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error reveals a credential:\n%v", err)
			}
		})
	}
}

// trusted_proxies: addresses and CIDR ranges of the load balancers.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	c := mustParse(t, clusterBase+"trusted_proxies: [10.0.0.7, 172.16.0.0/12, \"2001:db8::/32\"]\n")
	var got []string
	for _, p := range c.TrustedProxies {
		got = append(got, p.String())
	}
	if strings.Join(got, " ") != "10.0.0.7/32 172.16.0.0/12 2001:db8::/32" {
		t.Fatalf("trusted proxies %v", got)
	}
	_, err := config.Parse([]byte(clusterBase+"trusted_proxies: [lb.example]\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "neither an address nor a CIDR range") {
		t.Fatalf("a host name was accepted: %v", err)
	}
}

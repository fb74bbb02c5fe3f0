package table

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

// Behind a trusted load balancer the per-address limits count the client
// that X-Forwarded-For names, never the balancer, and never an address a
// client wrote itself to the left of what the balancers appended.
func TestClientAddress(t *testing.T) {
	t.Parallel()
	lb := []netip.Prefix{netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("10.0.0.7/32")}
	tests := []struct {
		name, peer string
		xff        []string
		trusted    []netip.Prefix
		want       string
	}{
		{"no proxies trusted", "172.18.0.5:4000", []string{"203.0.113.9"}, nil, "172.18.0.5"},
		{"direct client", "198.51.100.4:4000", nil, lb, "198.51.100.4"},
		{"client forging the header, direct", "198.51.100.4:4000", []string{"1.2.3.4"}, lb, "198.51.100.4"},
		{"behind the balancer", "172.18.0.5:4000", []string{"203.0.113.9"}, lb, "203.0.113.9"},
		{"forged left part ignored", "172.18.0.5:4000", []string{"1.2.3.4, 203.0.113.9"}, lb, "203.0.113.9"},
		{"two balancers", "10.0.0.7:4000", []string{"203.0.113.9, 172.18.0.5"}, lb, "203.0.113.9"},
		{"two header lines", "172.18.0.5:4000", []string{"1.2.3.4", "203.0.113.9"}, lb, "203.0.113.9"},
		{"garbage appended by a proxy", "172.18.0.5:4000", []string{"not-an-ip"}, lb, "172.18.0.5"},
		{"no header from the balancer", "172.18.0.5:4000", nil, lb, "172.18.0.5"},
		{"IPv6 client", "172.18.0.5:4000", []string{"2001:db8::1"}, lb, "2001:db8::1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("GET", "/api/v1/stream", nil)
			r.RemoteAddr = tt.peer
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientAddress(r, tt.trusted); got != tt.want {
				t.Fatalf("clientAddress = %q, want %q", got, tt.want)
			}
		})
	}
}

package freebets

import (
	"encoding/json"
	"strconv"
	"testing"
)

// Rule FB-11 FB-12 FB-14 GEN-4
func TestParseWhole(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want int64
		res  wholeResult
	}{
		{"500", 500, wholeOK},
		{"1", 1, wholeOK},
		{"500.0", 500, wholeOK},
		{"500.000", 500, wholeOK},
		{"5e2", 500, wholeOK},
		{"5E+2", 500, wholeOK},
		{"1.50e2", 150, wholeOK},
		{"0.5e1", 5, wholeOK},
		{"50000e-2", 500, wholeOK},
		{"9223372036854775807", 9223372036854775807, wholeOK},
		{"9223372036854775808", 0, wholeOverflow},
		{"1e19", 0, wholeOverflow},
		{"1e18", 1_000_000_000_000_000_000, wholeOK},
		{"1e1001", 0, wholeOverflow},
		{"1e99999999999999999999", 0, wholeOverflow},
		{"5.5", 0, wholeFraction},
		{"0.01", 0, wholeFraction},
		{"5e-1", 0, wholeFraction},
		{"1e-99999999999999999999", 0, wholeFraction},
		{"0", 0, wholeNotPositive},
		{"-0", 0, wholeNotPositive},
		{"0.0e10", 0, wholeNotPositive},
		{"-1", 0, wholeNotPositive},
		{"-0.5", 0, wholeNotPositive},
		{`"500"`, 0, wholeNotNumber},
		{"true", 0, wholeNotNumber},
		{"null", 0, wholeNotNumber},
		{"[500]", 0, wholeNotNumber},
		{`{"v":500}`, 0, wholeNotNumber},
	}
	for _, tc := range cases {
		got, res := parseWhole(json.RawMessage(tc.in))
		if got != tc.want || res != tc.res {
			t.Errorf("parseWhole(%s) = %d, %d; want %d, %d", tc.in, got, res, tc.want, tc.res)
		}
	}
}

// FuzzParseEntry: any entry is either discarded with a reason or valid with a
// non-empty id, a positive amount within the bounds and a quantity in 1..1000;
// an integer literal amount is taken as exactly that many cents.
func FuzzParseEntry(f *testing.F) {
	for _, s := range []string{
		`{"id":"camp-7","quantity":3,"amount":500}`,
		`{"id":"x","amount":5.5}`,
		`{"id":"x","amount":5e2,"quantity":1.0}`,
		`{"id":"\u00e9#1","amount":100}`,
		`{"id":"","amount":1}`,
		`[1]`,
		`null`,
		`{"id":"x","amount":1e-9999999999}`,
	} {
		f.Add([]byte(s))
	}
	lo, hi := int64(100), int64(1_000_000)
	limits := Limits{MinBet: &lo, MaxBet: &hi}
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, _, reason := parseEntry(raw, limits)
		if reason != "" {
			return
		}
		if e.id == "" || e.amount < lo || e.amount > hi || e.quantity < 1 || e.quantity > MaxQuantity {
			t.Fatalf("parseEntry(%s) accepted %+v", raw, e)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			t.Fatalf("accepted a non-object %s", raw)
		}
		if n, err := strconv.ParseInt(string(fields["amount"]), 10, 64); err == nil && n != e.amount {
			t.Fatalf("amount %s read as %d", fields["amount"], e.amount)
		}
	})
}

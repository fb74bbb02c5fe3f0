package freebets

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Reason is why an entry was discarded; it is the label of the discard metric.
type Reason string

// Reasons an entry is discarded (see the package documentation).
const (
	ReasonNotObject         Reason = "not_object"
	ReasonID                Reason = "id"
	ReasonAmountMissing     Reason = "amount_missing"
	ReasonAmountInvalid     Reason = "amount_invalid"
	ReasonAmountNotPositive Reason = "amount_not_positive"
	ReasonAmountFraction    Reason = "amount_fraction"
	ReasonQuantity          Reason = "quantity"
	ReasonBelowMinBet       Reason = "below_min_bet"
	ReasonAboveMaxBet       Reason = "above_max_bet"
	ReasonCurrency          Reason = "currency"
)

// Reasons lists every Reason.
var Reasons = []Reason{
	ReasonNotObject, ReasonID, ReasonAmountMissing, ReasonAmountInvalid, ReasonAmountNotPositive,
	ReasonAmountFraction, ReasonQuantity, ReasonBelowMinBet, ReasonAboveMaxBet, ReasonCurrency,
}

// Limits are the bet limits of the session currency, in cents, that a grant's
// amount must fall within. A nil limit is unknown and checks nothing.
type Limits struct {
	MinBet *int64
	MaxBet *int64
}

// entry is a valid /balance freebet entry.
type entry struct {
	id       string
	amount   int64 // cents, > 0
	quantity int   // 1..MaxQuantity
}

// parseEntry validates one raw entry against the limits of the session
// currency. It returns the first reason that discards it, or "" and the entry.
// id is the entry's id when it could be read (for the log), even when discarded.
func parseEntry(raw json.RawMessage, limits Limits) (e entry, id string, reason Reason) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return entry{}, "", ReasonNotObject // also null, arrays, scalars, trailing data
	}

	id, ok := readString(fields["id"])
	if !ok || id == "" {
		return entry{}, "", ReasonID // FB-10; absent, null or not a string is no id
	}

	rawAmount, ok := fields["amount"]
	if !ok || isNull(rawAmount) {
		return entry{}, id, ReasonAmountMissing // FB-11
	}
	amount, r := parseWhole(rawAmount)
	switch r {
	case wholeOK:
	case wholeNotNumber, wholeOverflow:
		return entry{}, id, ReasonAmountInvalid
	case wholeFraction:
		return entry{}, id, ReasonAmountFraction // FB-12
	case wholeNotPositive:
		return entry{}, id, ReasonAmountNotPositive // FB-11
	}

	quantity := int64(1) // LIM-6: absent means 1
	if rawQty, ok := fields["quantity"]; ok && !isNull(rawQty) {
		q, r := parseWhole(rawQty)
		if r != wholeOK || q > MaxQuantity {
			return entry{}, id, ReasonQuantity // FB-5
		}
		quantity = q
	}

	// FB-9 LIM-7 AMB-21: inclusive bounds; an unknown bound does not limit.
	if limits.MinBet != nil && amount < *limits.MinBet {
		return entry{}, id, ReasonBelowMinBet
	}
	if limits.MaxBet != nil && amount > *limits.MaxBet {
		return entry{}, id, ReasonAboveMaxBet
	}
	return entry{id: id, amount: amount, quantity: int(quantity)}, id, ""
}

// isNull reports whether a value decoded from an object is JSON null (values
// of a map[string]json.RawMessage carry no surrounding space).
func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// readString returns the value if it is a JSON string.
func readString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true // no escapes: the common case
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// wholeResult classifies a number read by parseWhole.
type wholeResult int

const (
	wholeOK          wholeResult = iota
	wholeNotNumber               // not a JSON number (a string, a boolean, an object...)
	wholeOverflow                // a whole number beyond int64
	wholeFraction                // positive, with a non-zero fraction
	wholeNotPositive             // zero or negative
)

// maxExponent bounds the exponent parseWhole accepts, so that a hostile
// 1e999999999 costs nothing: any non-zero value beyond it is out of int64 range
// (or, negative, a fraction).
const maxExponent = 1000

// parseWhole reads a JSON number exactly, without floats: an integer literal,
// or a literal with a fraction or an exponent whose exact value is a whole
// number (5.0, 5e2, 1.50e2). Negative and zero values are wholeNotPositive,
// whatever their fraction.
//
// raw is one valid JSON value, as decoded from an object.
func parseWhole(raw json.RawMessage) (int64, wholeResult) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, wholeNotNumber // a string, a boolean, an object, an array, null
	}
	s := string(raw) // a valid JSON number: -?int(.frac)?([eE][+-]?digits)?

	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, expStr, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, fracPart, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+fracPart, "0")
	if digits == "" || neg {
		return 0, wholeNotPositive // zero (0, 0.0, 0e5) or negative
	}
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(strings.TrimPrefix(expStr, "+"))
		switch {
		case (err != nil || e < -maxExponent) && strings.HasPrefix(expStr, "-"):
			return 0, wholeFraction // 1e-999999999
		case err != nil || e > maxExponent:
			return 0, wholeOverflow // 1e999999999
		}
		exp = e
	}
	// value = digits × 10^shift
	shift := exp - len(fracPart)
	trimmed := strings.TrimRight(digits, "0")
	shift += len(digits) - len(trimmed)
	digits = trimmed
	switch {
	case shift < 0:
		return 0, wholeFraction
	case len(digits)+shift > 19: // int64 has 19 digits at most
		return 0, wholeOverflow
	}
	v64, err := strconv.ParseInt(digits+strings.Repeat("0", shift), 10, 64)
	if err != nil {
		return 0, wholeOverflow
	}
	return v64, wholeOK
}

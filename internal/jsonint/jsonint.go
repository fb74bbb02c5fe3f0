// Package jsonint reads what the contract calls an integer in JSON: an
// optional minus and digits, with neither a fraction nor an exponent, that
// fits int64 (GEN-4, GEN-5). Money amounts in cents and millisecond
// timestamps are read through it, in both directions.
//
// It never rounds, and never takes a string, a fraction or an exponent for an
// integer: 356 is 356 cents, while 3.56, 3.56e2 and "356" are refused.
package jsonint

import (
	"bytes"
	"errors"
	"strconv"
)

// Errors of Parse.
var (
	ErrNotInteger = errors.New("not a JSON integer")
	ErrRange      = errors.New("integer out of the int64 range")
)

// Is reports whether raw, a JSON value that json.Valid accepts, is a number
// with neither a fraction nor an exponent.
func Is(raw []byte) bool {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return false
	}
	return !bytes.ContainsAny(raw, ".eE")
}

// Parse reads raw, a JSON value that json.Valid accepts, as an integer:
// ErrNotInteger for anything Is refuses, ErrRange for one that does not fit
// int64.
func Parse(raw []byte) (int64, error) {
	if !Is(raw) {
		return 0, ErrNotInteger
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, ErrRange
	}
	return n, nil
}

package jsonint_test

import (
	"errors"
	"testing"

	"github.com/crashstudio/crashgame/internal/jsonint"
)

// Rule GEN-4 GEN-5: an amount is an integer number of cents; a float, an
// exponent or a string is never read as one.
func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want int64
		err  error
	}{
		{raw: `356`, want: 356},
		{raw: `0`, want: 0},
		{raw: `-25`, want: -25},
		{raw: `9223372036854775807`, want: 9223372036854775807},
		{raw: `-9223372036854775808`, want: -9223372036854775808},
		{raw: `9223372036854775808`, err: jsonint.ErrRange},
		{raw: `3.56`, err: jsonint.ErrNotInteger},
		{raw: `356.0`, err: jsonint.ErrNotInteger},
		{raw: `3.56e2`, err: jsonint.ErrNotInteger},
		{raw: `356E0`, err: jsonint.ErrNotInteger},
		{raw: `"356"`, err: jsonint.ErrNotInteger},
		{raw: `null`, err: jsonint.ErrNotInteger},
		{raw: `true`, err: jsonint.ErrNotInteger},
		{raw: `[356]`, err: jsonint.ErrNotInteger},
		{raw: ``, err: jsonint.ErrNotInteger},
	}
	for _, tt := range tests {
		got, err := jsonint.Parse([]byte(tt.raw))
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("Parse(%s) = %d, %v; want %d, %v", tt.raw, got, err, tt.want, tt.err)
		}
		if is := jsonint.Is([]byte(tt.raw)); is != (tt.err != jsonint.ErrNotInteger) {
			t.Errorf("Is(%s) = %t", tt.raw, is)
		}
	}
}

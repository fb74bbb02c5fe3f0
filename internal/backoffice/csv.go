package backoffice

import "strconv"

// CSVText returns s as a cell of a CSV export that a spreadsheet opens as the
// text it is, never as a formula (CSV injection, OWASP): a cell that begins
// with '=', '+', '-', '@', a tab or a carriage return gets a leading single
// quote, so `=1+1` is written `'=1+1`. Every text cell of an export goes
// through it: ids, names and messages come from operators' wallets and
// players, and finance staff open the file in Excel, LibreOffice or Google
// Sheets. encoding/csv then quotes what needs quoting.
//
// The quote is part of the cell's value for a program that reads the file
// too, not only for a spreadsheet.
func CSVText(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// CSVInt returns n as a cell of a CSV export, in decimal, not neutralised: a
// plain integer that we write (an amount in cents, a count) is not a formula,
// and a quote before a negative amount such as -500 would turn the number
// into text. Use it only for int64 values, never for text that looks like a
// number (a player id "-500" is text: CSVText).
func CSVInt(n int64) string {
	return strconv.FormatInt(n, 10)
}

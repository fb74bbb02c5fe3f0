package operatorapi

import "time"

// page is what a request of the back office's lists asks for
// (/v1/bets/history and /v1/transactions, and the range and status of
// /v1/transactions/export), read the one way the document says.
type page struct {
	from, to time.Time
	status   string // "": every status
	cursor   string // "": the first page
	// limit 0 is the default; a request's limit of 0 is out of range, as
	// the document says, and becomes -1 so that the query refuses it.
	limit int
}

// pageOf reads a list request's fields; a route without a status, a cursor
// or a limit passes nil.
func pageOf[S ~string](from, to int64, status *S, cursor *string, limit *int32) page {
	p := page{from: time.UnixMilli(from), to: time.UnixMilli(to)}
	if status != nil {
		p.status = string(*status)
	}
	if cursor != nil {
		p.cursor = *cursor
	}
	if limit != nil {
		p.limit = int(*limit)
		if p.limit == 0 {
			p.limit = -1
		}
	}
	return p
}

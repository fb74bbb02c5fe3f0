// Package leadership holds the lease by which one process of many leads a
// game's table: it takes the lease in the database, renews it, steps down
// before the database may let another process take it, releases it when
// its owner hands it over, and announces each change (leading at epoch N,
// not leading) to its subscribers: the engine's table loop, which plays
// rounds only within a term, and the cluster's replica, which serves the
// table's actions while it leads.
//
// What it keeps:
//   - A term's deadline is counted from just before the statement that took
//     or last renewed the lease, less an eighth of the TTL, on the injected
//     clock (the database's clock runs on real time in production): however
//     slow an answer, the process stops leading before the database lets
//     another take the lease.
//   - A lease whose taking answered after that deadline (a database stall)
//     is released at once and never announced: no term that is already over
//     is led.
//   - A write bounded by a term (Term.Bound) ends at the first deadline that
//     passes with no renewal landed, never at one that a renewal moved: a slow
//     statement does not end a term whose lease is kept.
//   - A term ends (its Done channel closes, its Context ends) when the lease
//     was taken over, when a renewal cannot land before the deadline, when
//     its owner ends or releases it, or when Run returns.
//   - After a term ends the elector lets the others try first (Retry), so a
//     hand-over at a round boundary hands the table to another process.
//
// The fencing epoch the lease carries is checked by the owner's own
// transactions (the store's CheckLease), not here. It must never decide
// anything of a round, write anything but the lease, read the time other
// than from its Clock, or block on a subscriber.
package leadership

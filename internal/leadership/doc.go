// Package leadership holds the lease by which one process of many leads a
// game's table: it takes the lease in the database, renews it, steps down
// when it is lost (or cannot be known kept), releases it when its owner
// hands it over, and announces each change (leading at epoch N,
// not leading) to its subscribers: the engine's table loop, which plays
// rounds only within a term, and the cluster's replica, which serves the
// table's actions while it leads.
//
// What it keeps:
//   - The lease's expiry is the database's: the TTL counted on its clock
//     from a moment no earlier than the start of the statement that took or
//     last renewed it. The process counts its own, less an eighth of the
//     TTL, from just before that statement, on the injected clock.
//   - A term ends when its lease is known lost: a renewal answers that
//     another holder has it (or it was released), or the owner's write was
//     fenced (Term.End). It ends at that expiry when this process chose not
//     to renew (not Able) or the database answered its renewals with
//     errors. A renewal that has not answered holds the term up to its
//     deadline (Settings.Hold from the same start, 2×TTL by default), and
//     its answer decides: a starved process or a slow database does not end
//     a term whose lease nobody took, so it voids no round.
//   - Between the lease's expiry in the database and the end of the hold,
//     another process may take the lease and lead: every write of a term is
//     fenced by its epoch (the store's CheckLease), so none commits once
//     another took over, and the first renewal that lands says so.
//   - A lease whose taking answered after its expiry (a database stall) is
//     released at once and never announced: no term that is already over
//     is led.
//   - A write bounded by a term (Term.Bound) ends at the first deadline that
//     passes with no renewal landed, never at one that a renewal moved: a slow
//     statement does not end a term whose lease is kept.
//   - A term ends (its Done channel closes, its Context ends) as above, when
//     its owner ends or releases it, or when Run returns.
//   - A process that owns its database alone (Settings.Sole: one process on
//     a SQLite file it locked) takes the lease for its epoch and never
//     renews it: its term has no deadline and ends only when its owner ends
//     it, so a slow database never ends it.
//   - After a term ends the elector lets the others try first (Retry), so a
//     hand-over at a round boundary hands the table to another process.
//
// The fencing epoch the lease carries is checked by the owner's own
// transactions (the store's CheckLease), not here. It must never decide
// anything of a round, write anything but the lease, read the time other
// than from its Clock, or block on a subscriber.
package leadership

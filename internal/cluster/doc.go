// Package cluster is the transport between the replicas of `crashgame serve`
// in cluster mode: one NATS connection per replica (a Bus) that carries two
// things and nothing else.
//
//   - Player actions to a table's leader, by request/reply. The replica that
//     received a bet, a cashout or a cancel and does not lead the table calls
//     Request on the table's ActionSubject of the current term (a subject per
//     fencing epoch); the leader of that term answers with Serve. The
//     requester learns one of four outcomes: the leader's answer, the leader's
//     own refusal (*HandlerError, its code and message), ErrNoLeader (nobody
//     serves the subject now: nothing was executed) or ErrUnavailable (not
//     connected, timed out, or the connection was lost while waiting: the
//     action may or may not have been executed, and the caller must say so).
//   - A table's events to every replica, fire and forget (core NATS, no
//     JetStream): the leader's, and those of the cashouts other replicas
//     commit. Publish stamps each event with its publisher's identity and a
//     sequence number per subject; Subscribe follows each publisher's
//     numbering and tells its handler when continuity is not proven (a gap),
//     so a replica that missed events resynchronises its streams. An event
//     for one addressee (PublishFor: a session's) names it in a header, and
//     a subscriber that holds only some addressees (SubscribeFor) skips the
//     others' unread, its gaps carried by the next event it is handed.
//
// What crosses is bytes: this package knows no engine, table or round type,
// and encodes nothing but its own headers.
//
// Nothing is buffered for later: the connection is made with
// nats.ReconnectBufSize(-1), so a message published while the connection is
// down fails at once instead of waiting in a buffer and being sent after the
// reconnect. A buffered request would reach the leader after its requester had
// already given up and reported an unknown outcome: the player retries, and
// the bet is placed twice. For the same reason a request carries the time its
// requester will still wait (a header); the leader does not start a handler
// whose requester has already given up, and the handler's context carries that
// deadline. What stays possible, and what ErrUnavailable means, is that the
// leader executed an action whose answer was lost: idempotency of an action
// belongs to its handler, which is why the callers must word that error as
// "outcome unknown", never as a refusal.
//
// Leadership is not decided here. A leader serves its own term's action
// subjects, in one queue group, so that a request is delivered to one server
// only; the requester names the term it knows (its caller learns terms from
// the database and the leader's events), so a former leader still subscribed
// to its old term's subjects gets nothing sent for the new one. Whether the
// one that answers may still act is for the fencing epoch in PostgreSQL to
// decide.
//
// Subjects: every subject starts with SubjectPrefix and names the table by
// its game id, escaped into one subject token (see GameToken), so that no game
// id can add a token or a wildcard to a subject.
//
// What it must never do: hold a rule of the game, decide anything about money,
// or be the durable truth (PostgreSQL is: an event lost on the way is
// recovered from there, never from here); retry a request (the caller decides,
// knowing the outcome may be unknown); log a payload, a credential or a URL's
// user information.
package cluster

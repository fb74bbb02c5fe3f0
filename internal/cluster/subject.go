package cluster

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SubjectPrefix starts every subject this package names: a table's subjects
// are SubjectPrefix.<game token>.action.<action>.<epoch> and
// SubjectPrefix.<game token>.events.
const SubjectPrefix = "crashgame.table"

// The player actions a leader serves, one subject each (ActionSubject). They
// are also the values of the kind label of crashgame_cluster_forward_seconds.
const (
	ActionAdmit   = "admit"   // a bet's place in the round
	ActionDecide  = "decide"  // the outcome of an admitted bet's debit
	ActionRelease = "release" // an admitted bet whose intent did not commit
	ActionCashout = "cashout" // a cashout the leader prices (a demo bet's; a replica whose clock is not known precisely)
	ActionCashed  = "cashed"  // a cashout another replica priced and committed, for the leader's round and board
	ActionCancel  = "cancel"
)

// ActionSubject is the subject on which the leader of gameID's table in the
// term of fencing epoch serves action (ActionAdmit, ActionDecide,
// ActionRelease, ActionCashout, ActionCashed, ActionCancel). A subject per
// term: a former leader that still serves its own term's subjects (cut off
// from NATS, whose server has not yet dropped its subscriptions; a leader
// that has not yet learnt it lost the lease) gets no request that names the
// current term.
func ActionSubject(gameID, action string, epoch int64) string {
	return SubjectPrefix + "." + GameToken(gameID) + ".action." + action + "." + strconv.FormatInt(epoch, 10)
}

// EventSubject is the subject on which the leader of gameID's table publishes
// every event of the table, in order, one sequence for all of them.
func EventSubject(gameID string) string {
	return SubjectPrefix + "." + GameToken(gameID) + ".events"
}

// GameToken is gameID as one subject token. Letters, digits, '_' and '-'
// stay as they are; every other byte becomes '%' and two upper-case hex
// digits, '%' included, so the mapping is one to one and the token holds no
// '.', '*', '>' or white space. The installation file allows '.' in game ids
// (internal/config: letters, digits, '.', '_' and '-'): "crash.v2" is the
// token "crash%2Ev2", never two tokens. An empty id gives an empty token,
// which makes the subject invalid: Serve, Request, Publish and Subscribe
// refuse it.
func GameToken(gameID string) string {
	if !strings.ContainsFunc(gameID, func(r rune) bool { return !plainByte(r) }) {
		return gameID
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(gameID) + 8)
	for i := range len(gameID) {
		c := gameID[i]
		if plainByte(rune(c)) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0x0f])
	}
	return b.String()
}

func plainByte(r rune) bool {
	return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
}

// errSubject is wrapped by every refusal of a malformed subject.
var errSubject = errors.New("invalid subject")

// checkSubject refuses a subject NATS would misread: empty, an empty token,
// white space or a control character, '*' or '>' inside a token. Whole-token
// wildcards ('*' anywhere, '>' last) are allowed only when wildcards is true
// (a subscription); a publication's subject is literal.
func checkSubject(subject string, wildcards bool) error {
	if subject == "" {
		return fmt.Errorf("%w: empty", errSubject)
	}
	start := 0
	for i := 0; i <= len(subject); i++ {
		if i < len(subject) && subject[i] != '.' {
			if c := subject[i]; c <= ' ' || c == 0x7f {
				return fmt.Errorf("%w %q: white space or a control character", errSubject, subject)
			}
			continue
		}
		tok := subject[start:i]
		last := i == len(subject)
		start = i + 1
		switch {
		case tok == "":
			return fmt.Errorf("%w %q: an empty token", errSubject, subject)
		case tok == "*" || tok == ">":
			if !wildcards {
				return fmt.Errorf("%w %q: a wildcard where a literal subject is needed", errSubject, subject)
			}
			if tok == ">" && !last {
				return fmt.Errorf("%w %q: '>' before the last token", errSubject, subject)
			}
		case strings.ContainsAny(tok, "*>"):
			return fmt.Errorf("%w %q: '*' or '>' inside a token", errSubject, subject)
		}
	}
	return nil
}

// kindOf is the kind label of a request's subject: the action of an
// ActionSubject when it is one short lower-case word followed by an epoch,
// "other" for anything else, so a label never holds an id.
func kindOf(subject string) string {
	rest, ok := strings.CutPrefix(subject, SubjectPrefix+".")
	if !ok {
		return "other"
	}
	_, rest, ok = strings.Cut(rest, ".action.")
	if !ok {
		return "other"
	}
	action, epoch, ok := strings.Cut(rest, ".")
	if !ok || action == "" || len(action) > 16 || epoch == "" {
		return "other"
	}
	for i := range len(action) {
		if c := action[i]; c < 'a' || c > 'z' {
			return "other"
		}
	}
	for i := range len(epoch) {
		if c := epoch[i]; c < '0' || c > '9' {
			return "other"
		}
	}
	return action
}

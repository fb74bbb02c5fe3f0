package fairness_test

import (
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/crashstudio/crashgame/internal/fairness"
)

// A commit_reveal chain verifies when each revealed value hashes to its
// commitment and each withheld one is its commitment (which the salt then
// takes); a revealed value that is not its commitment's, or a withheld one
// that is not the commitment, fails with ErrCommitmentMismatch, even when
// the salt was made of it.
func TestCommittedContributions(t *testing.T) {
	t.Parallel()
	revealed := sha256.Sum256([]byte("acme's value"))
	withheld := sha256.Sum256([]byte("zeta's value"))
	revealedCommit, withheldCommit := sha256.Sum256(revealed[:]), sha256.Sum256(withheld[:])
	other := sha256.Sum256([]byte("another value"))
	for _, tt := range []struct {
		name     string
		values   [][32]byte // what the salt is made of, as published
		commits  []string
		withheld []bool
		want     error
	}{
		{"revealed and withheld", [][32]byte{revealed, withheldCommit},
			[]string{fairness.FormatHash(revealedCommit), fairness.FormatHash(withheldCommit)}, []bool{false, true}, nil},
		{"a revealed value that is not the committed one", [][32]byte{other, withheldCommit},
			[]string{fairness.FormatHash(revealedCommit), fairness.FormatHash(withheldCommit)}, []bool{false, true}, fairness.ErrCommitmentMismatch},
		{"a withheld value that is not the commitment", [][32]byte{revealed, withheld},
			[]string{fairness.FormatHash(revealedCommit), fairness.FormatHash(withheldCommit)}, []bool{false, true}, fairness.ErrCommitmentMismatch},
		{"plain contributions carry no commitment", [][32]byte{revealed, other}, []string{"", ""}, []bool{false, false}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := publish(sha256.Sum256([]byte("seed")), 50, 5, tt.values, 9700, 100000, 1000)
			p.doc.Commitments, p.doc.Withheld = tt.commits, tt.withheld
			if err := verifyAll(p); !errors.Is(err, tt.want) {
				t.Fatalf("verify = %v, want %v", err, tt.want)
			}
		})
	}
}

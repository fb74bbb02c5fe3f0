//go:build race

package fairness

// raceEnabled is true under -race, where instrumented code runs about 8 times
// slower: the distribution test then simulates fewer rounds (its tolerance is
// computed from the number of rounds, so it stays as strict in standard errors).
const raceEnabled = true

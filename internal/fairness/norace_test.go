//go:build !race

package fairness

// raceEnabled is false without -race; see race_test.go.
const raceEnabled = false

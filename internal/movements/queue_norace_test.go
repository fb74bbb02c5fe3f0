//go:build !race

package movements_test

// mqRace is true under the race detector (see queue_race_test.go).
const mqRace = false

//go:build !race

package wallet

// mqRace is true under the race detector (see queue_race_test.go).
const mqRace = false

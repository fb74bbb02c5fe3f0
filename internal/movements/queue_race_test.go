//go:build race

package movements_test

// mqRace is true under the race detector, which makes SQLite (pure Go) an
// order of magnitude slower: the 100,000-movement restart test then uses a
// smaller backlog on SQLite.
const mqRace = true

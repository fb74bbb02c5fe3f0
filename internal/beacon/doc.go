// Package beacon reads a public randomness beacon that nobody, the house
// included, can know in advance: drand's quicknet network, run by the League
// of Entropy. Each new hash chain names a round of it emitted after the
// chain's reveal window (package engine), and the chain's salt takes that
// round's value once it verifies, so that the salt cannot be chosen before
// every contribution is fixed.
//
// It owns three things:
//   - a network's published facts (chain hash, public key, genesis time,
//     period, scheme) and the arithmetic of its rounds: the round at a time,
//     the time of a round, and the first round emitted strictly after an
//     instant;
//   - the verification of a round's value: a BLS12-381 signature on G1 of
//     the round number under the network's public key on G2, and the
//     randomness, which is SHA-256 of the signature;
//   - a client that fetches a round from a beacon's HTTP relay and returns
//     it only once it verifies.
//
// It must never return, and never let a caller use, a value whose signature
// does not verify under the configured network's public key, whose round is
// not the one asked for, or whose randomness is not SHA-256 of its
// signature. It must never fall back to another source of randomness, and
// never hide that a round is not yet available: that is ErrNotYet, so the
// caller can wait and say so. It holds no secret: the test beacon's private
// key lives only in package beacontest, for tests.
package beacon

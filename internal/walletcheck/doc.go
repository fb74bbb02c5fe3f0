// Package walletcheck is the contract battery that `crashgame wallet-check`
// runs against an operator's seamless wallet (POST /balance, /bet, /win,
// /rollback of api/wallet.v1.yaml): it plays a short, fixed script of wallet
// calls on one test player's session and judges each answer against the
// operator-enforced rules of the integration contract (rules.md IDs: BAL-7,
// BAL-8, BET-3, BET-5, BET-6, BET-8..11, WIN-10, WIN-11, WIN-13..15, RB-8..13,
// AUTH-3, AUTH-9, AUTH-12, AUTH-15, AUTH-19, ENV-6, ENV-12, ENV-14, ENV-17..19,
// GEN-2, GEN-4, LIM-1, LIM-5, WERR-1, WERR-2, WERR-4, WERR-5, WERR-7, BAL-13),
// and that a request field it does not know is ignored (VER in
// docs/ambiguities.md).
//
// It then sends, correctly signed, what a broken or hostile game could send
// (hostile.go): negative, zero and over-int64 amounts on /bet, /win and
// /rollback, a missing freebet_id, null required members, values of the
// wrong JSON type, another currency than the player's, a win on a bet rolled
// back, a win repeating its transaction_id with another amount, and a
// duplicate amount key (GEN-2, GEN-4, GEN-5, GEN-6, BET-4, BET-12, ENV-9,
// ENV-11, ENV-12, ENV-15, WIN-5, WIN-7, WIN-10, WIN-17, WIN-19, WERR-13,
// WERR-17, RB-9, RB-10, AMB-12). Each is judged by the balance /balance
// reads before and after it: a wallet that moves money where it should have
// refused fails with "MONEY MOVED", the rule, the amount and a fix.
//
// Then the fault probes (faults.go) play the mistakes operators' wallets
// were measured making: 10 bets at once on a balance that covers 3 (WC-1),
// a bet, a win and a rollback sent again after Options.RetryDelay (WC-2), a
// second settlement of one debit under a fresh transaction_id in every order
// (WC-3), signatures cut short or made longer (AUTH-1, AUTH-15), movements
// naming another player than their debit's, with Target.SecondToken's player
// watched too (WC-4), transaction_ids that differ only in case (WC-5) and a
// freebet grant used twice (WC-6). The WC IDs are the readings of
// docs/ambiguities.md, where the contract does not say what the wallet
// answers: those probes judge by the money moved, and give back what a faulty
// wallet moved, so that the balances end where they started.
//
// What it owns: the script (checks.go, auth.go), the raw requests the game's
// client would never send (a wrong key, a lowercase bearer, a re-encoded
// body, a stale timestamp, a field it does not declare: http.go, auth.go), and the Report with its table and JSON
// forms (report.go). Ordinary movements go through package wallet's Client,
// so that each answer is also classified the way the game will classify it.
//
// Where the contract reads two ways (rules.md, Ambiguities), a check passes
// either reading and its evidence says which one the wallet took; elsewhere it
// follows the choices written in api/wallet.v1.yaml.
//
// Money: the battery moves real balance on the session's player. Stakes are
// Options.Stake (default 100 cents); at most six stakes are debited at once
// (a hostile probe holds one, and rolls it back before the next unless the
// wallet refuses that rollback), except that the concurrency probe (WC-1)
// bets, for a moment, all of the balance but three and a half stakes, so that
// its ten bets race for a balance that covers three;
// every debit is won back or rolled back, wins above and below the stake
// cancel out, and the last check verifies that the player's balance ends where
// it started. Transaction ids are random per run and start with "wc-".
//
// What it must never do:
//   - run against a production player: it is meant for a dedicated test
//     player, and the command refuses a non-loopback wallet without --yes;
//   - put the HMAC secret, an API key, a session token or a full signature
//     into a report, an error or a log line (evidence shows HTTP statuses,
//     error codes and balances only);
//   - leave a debit open: whatever failed, open bets are rolled back before
//     the report is returned;
//   - retry: every call is one attempt, so the evidence is what the wallet
//     answered to that attempt.
package walletcheck

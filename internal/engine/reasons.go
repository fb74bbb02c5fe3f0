package engine

// The reasons the game gives a /rollback (RB-11: diagnostic only; the
// operator handles every rollback the same way). api/wallet.v1.yaml and
// docs/failover.md list every one of them, RollbackReasons in that order.
const (
	reasonCancelled          = "cancelled by the player"
	reasonDebitUnknown       = "debit outcome unknown at take-off"
	reasonDebitLate          = "debit confirmed after take-off"
	reasonTakeOffFailed      = "take-off failed"
	reasonInterruptedBetting = "round interrupted before take-off"
	reasonInterruptedFlight  = "round interrupted in flight"
	reasonInterruptedPending = "debit outcome unknown when the round was interrupted"
	reasonPendingAfterRound  = "debit outcome unknown after its round"
)

// RollbackReasons lists every reason the game sends with a /rollback.
var RollbackReasons = []string{
	reasonCancelled, reasonDebitUnknown, reasonDebitLate, reasonTakeOffFailed,
	reasonInterruptedBetting, reasonInterruptedFlight, reasonInterruptedPending, reasonPendingAfterRound,
}

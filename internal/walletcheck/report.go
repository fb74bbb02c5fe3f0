package walletcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteTable writes the report for people: a heading, a fixed-width table
// RULES | CHECK | RESULT | EVIDENCE, and a summary line.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "wallet-check %s (operator %s, run %s", r.WalletURL, r.Operator, r.RunID)
	if r.PlayerID != "" {
		fmt.Fprintf(&b, ", player %s", r.PlayerID)
	}
	if r.Currency != "" {
		fmt.Fprintf(&b, ", %s", r.Currency)
	}
	fmt.Fprintf(&b, ", stake %d)\n\n", r.Stake)

	rules := make([]string, len(r.Checks))
	wRules, wName := len("RULES"), len("CHECK")
	for i, c := range r.Checks {
		rules[i] = strings.Join(c.Rules, " ")
		if rules[i] == "" {
			rules[i] = "-"
		}
		wRules = max(wRules, len(rules[i]))
		wName = max(wName, len(c.Name))
	}
	row := func(rules, name, result, evidence string) {
		fmt.Fprintf(&b, "%-*s | %-*s | %-6s | %s\n", wRules, rules, wName, name, result, evidence)
	}
	row("RULES", "CHECK", "RESULT", "EVIDENCE")
	fmt.Fprintf(&b, "%s-+-%s-+-%s-+-%s\n", strings.Repeat("-", wRules), strings.Repeat("-", wName), strings.Repeat("-", 6), strings.Repeat("-", 8))
	for i, c := range r.Checks {
		row(rules[i], c.Name, strings.ToUpper(string(c.Result)), c.Evidence)
	}
	b.WriteString("\n")
	b.WriteString(r.Summary())
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary is the one-line verdict: counts, the failed rules, the balance.
func (r *Report) Summary() string {
	var b strings.Builder
	if r.OK() {
		b.WriteString("PASS: ")
	} else {
		b.WriteString("FAIL: ")
	}
	fmt.Fprintf(&b, "%d passed, %d failed, %d skipped", r.Passed, r.Failed, r.Skipped)
	if rules := r.FailedRules(); len(rules) > 0 {
		fmt.Fprintf(&b, "; failed rules: %s", strings.Join(rules, " "))
	}
	for _, c := range r.Checks {
		if c.Result == Fail && len(c.Rules) == 0 {
			fmt.Fprintf(&b, "; failed: %s", c.Name)
		}
	}
	switch {
	case r.BalanceBefore != nil && r.BalanceAfter != nil:
		fmt.Fprintf(&b, "; balance %d -> %d", *r.BalanceBefore, *r.BalanceAfter)
	case r.BalanceBefore != nil:
		fmt.Fprintf(&b, "; balance %d -> unknown", *r.BalanceBefore)
	}
	return b.String()
}

// WriteJSON writes the report for machines, indented.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("walletcheck: encode the report: %w", err)
	}
	return nil
}

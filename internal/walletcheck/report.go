package walletcheck

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
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

// Files written by WriteDir.
const (
	ResultFile  = "result.json"
	JUnitFile   = "junit.xml"
	SummaryFile = "summary.html"
)

// RuleVerdict is the verdict of one rule over the checks that name it: fail
// when one of them failed, else pass when one passed, else skip.
type RuleVerdict struct {
	Rule   string   `json:"rule"`
	Result Result   `json:"result"`
	Checks []string `json:"checks"`
}

// Rules is the verdict of each rule the checks name, in report order.
func (r *Report) Rules() []RuleVerdict {
	var out []RuleVerdict
	at := map[string]int{}
	for _, c := range r.Checks {
		for _, id := range c.Rules {
			i, seen := at[id]
			if !seen {
				i = len(out)
				at[id] = i
				out = append(out, RuleVerdict{Rule: id, Result: Skip})
			}
			rv := &out[i]
			rv.Checks = append(rv.Checks, c.Name)
			switch {
			case c.Result == Fail:
				rv.Result = Fail
			case c.Result == Pass && rv.Result == Skip:
				rv.Result = Pass
			}
		}
	}
	return out
}

// result is the document of result.json: the report, the verdict of each
// rule, and the exit status the command gives it.
type result struct {
	*Report
	ExitCode int           `json:"exit_code"`
	Rules    []RuleVerdict `json:"rules"`
}

// WriteResult writes result.json's document: every check with its rules,
// verdict, evidence and fix, then each rule's verdict.
func (r *Report) WriteResult(w io.Writer) error {
	code := 0
	if !r.OK() {
		code = 1
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(result{Report: r, ExitCode: code, Rules: r.Rules()}); err != nil {
		return fmt.Errorf("walletcheck: encode the result: %w", err)
	}
	return nil
}

// The JUnit XML schema as CI servers read it (Jenkins, GitLab, GitHub
// actions): one testsuite, one testcase per check, a failure or a skipped
// element on the cases that did not pass.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr,omitempty"`
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitMessage `xml:"failure"`
		Skipped   *junitMessage `xml:"skipped"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitMessage struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes the report as JUnit XML for the operator's CI: a
// testcase per check, named by the check and classed by its rules.
func (r *Report) WriteJUnit(w io.Writer) error {
	seconds := fmt.Sprintf("%.3f", float64(r.DurationMS)/1000)
	suite := junitSuite{Name: "wallet-check", Tests: len(r.Checks), Failures: r.Failed, Skipped: r.Skipped, Time: seconds,
		Properties: []junitProperty{{"wallet_url", r.WalletURL}, {"operator", r.Operator}, {"run_id", r.RunID},
			{"player_id", r.PlayerID}, {"currency", r.Currency}, {"stake", fmt.Sprint(r.Stake)}}}
	for _, c := range r.Checks {
		class := "wallet-check"
		if len(c.Rules) > 0 {
			class += "." + strings.Join(c.Rules, ".")
		}
		tc := junitCase{Name: c.Name, Classname: class, Time: "0"}
		switch c.Result {
		case Fail:
			msg := c.Evidence
			if problems, _, found := strings.Cut(c.Evidence, " | "); found {
				msg = problems
			}
			tc.Failure = &junitMessage{Message: msg, Type: "wallet-check", Text: c.Evidence}
		case Skip:
			tc.Skipped = &junitMessage{Message: c.Evidence}
		default:
			tc.SystemOut = c.Evidence
		}
		suite.Cases = append(suite.Cases, tc)
	}
	doc := junitSuites{Name: "wallet-check", Tests: len(r.Checks), Failures: r.Failed, Skipped: r.Skipped, Time: seconds,
		Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("walletcheck: write the JUnit XML: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("walletcheck: encode the JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// summaryPage is the one-page HTML summary: html/template escapes every
// value, the evidence the wallet wrote included.
var summaryPage = template.Must(template.New("summary").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>wallet-check {{if .OK}}PASS{{else}}FAIL{{end}}: {{.WalletURL}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1a1a1a; }
h1 { font-size: 1.4rem; margin: 0 0 .3rem; }
.verdict { display: inline-block; padding: .1rem .5rem; border-radius: .3rem; font-weight: 600; }
.pass { background: #d7f5dd; color: #0b5d1e; } .fail { background: #fddcdc; color: #8a1111; } .skip { background: #eceff3; color: #4a5260; }
table { border-collapse: collapse; width: 100%; margin-top: 1rem; }
th, td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid #e2e5ea; }
th { background: #f5f6f8; } td.rules { white-space: nowrap; font-family: ui-monospace, monospace; font-size: 12px; }
td.evidence { font-family: ui-monospace, monospace; font-size: 12px; word-break: break-word; }
.fix { font-weight: 600; }
</style>
</head>
<body>
<h1>wallet-check {{if .OK}}<span class="verdict pass">PASS</span>{{else}}<span class="verdict fail">FAIL</span>{{end}}</h1>
<p id="summary">{{.Summary}}</p>
<p>Wallet {{.WalletURL}}, operator {{.Operator}}, run {{.RunID}}{{with .PlayerID}}, player {{.}}{{end}}{{with .Currency}}, {{.}}{{end}}, stake {{.Stake}} cents, retries after {{.RetryDelayMS}} ms.</p>
<table id="checks">
<thead><tr><th>Rules</th><th>Check</th><th>Result</th><th>Evidence</th></tr></thead>
<tbody>
{{range .Checks}}<tr class="{{.Result}}">
<td class="rules">{{range .Rules}}{{.}} {{else}}-{{end}}</td>
<td>{{.Name}}</td>
<td><span class="verdict {{.Result}}">{{.Result}}</span></td>
<td class="evidence">{{with .Fix}}<div class="fix">{{.}}</div>{{end}}{{.Evidence}}</td>
</tr>
{{end}}</tbody>
</table>
</body>
</html>
`))

// WriteHTML writes the one-page HTML summary.
func (r *Report) WriteHTML(w io.Writer) error {
	if err := summaryPage.Execute(w, r); err != nil {
		return fmt.Errorf("walletcheck: write the HTML summary: %w", err)
	}
	return nil
}

// WriteDir writes result.json, junit.xml and summary.html into dir, which
// it creates when missing.
func (r *Report) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("walletcheck: the report directory: %w", err)
	}
	for name, write := range map[string]func(io.Writer) error{
		ResultFile: r.WriteResult, JUnitFile: r.WriteJUnit, SummaryFile: r.WriteHTML,
	} {
		if err := writeFile(filepath.Join(dir, name), write); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, write func(io.Writer) error) (err error) {
	f, err := os.Create(path) //nolint:gosec // G304: a file of the report directory the operator named (--report)
	if err != nil {
		return fmt.Errorf("walletcheck: create %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("walletcheck: write %s: %w", path, cerr)
		}
	}()
	return write(f)
}

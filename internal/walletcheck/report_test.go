package walletcheck_test

import (
	"encoding/json"
	"encoding/xml"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crashstudio/crashgame/internal/walletcheck"
)

// The JUnit XML schema as CI servers read it (the Ant/Jenkins
// testsuites/testsuite/testcase schema), written here apart from the
// package's own types, so that the test reads the file the way a CI server
// does, not the way it was written.
type (
	junitTestsuites struct {
		XMLName    xml.Name         `xml:"testsuites"`
		Tests      int              `xml:"tests,attr"`
		Failures   int              `xml:"failures,attr"`
		Testsuites []junitTestsuite `xml:"testsuite"`
	}
	junitTestsuite struct {
		Name       string `xml:"name,attr"`
		Tests      int    `xml:"tests,attr"`
		Failures   int    `xml:"failures,attr"`
		Errors     int    `xml:"errors,attr"`
		Skipped    int    `xml:"skipped,attr"`
		Time       string `xml:"time,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Testcases []junitTestcase `xml:"testcase"`
	}
	junitTestcase struct {
		Name      string `xml:"name,attr"`
		Classname string `xml:"classname,attr"`
		Time      string `xml:"time,attr"`
		Failure   *struct {
			Message string `xml:"message,attr"`
			Type    string `xml:"type,attr"`
			Text    string `xml:",chardata"`
		} `xml:"failure"`
		Skipped *struct {
			Message string `xml:"message,attr"`
		} `xml:"skipped"`
		SystemOut string `xml:"system-out"`
	}
)

func sampleReport() walletcheck.Report {
	before, after := int64(1000), int64(1000)
	return walletcheck.Report{
		WalletURL: "https://wallet.example", Operator: "op", RunID: "wc-x", PlayerID: "p-1", Currency: "BRL", Stake: 100,
		RetryDelayMS: 5000, BalanceBefore: &before, BalanceAfter: &after, DurationMS: 1234,
		Checks: []walletcheck.Check{
			{Rules: []string{"WC-1", "GEN-6"}, Name: "concurrent bets near the balance", Result: walletcheck.Fail,
				Evidence: "MONEY MOVED (WC-1): the balance went to -650; fix: decide and debit atomically | <script>alert(1)</script>",
				Fix:      "fix: decide and debit atomically"},
			{Rules: []string{"BET-8", "GEN-6"}, Name: "bet replay", Result: walletcheck.Pass, Evidence: "HTTP 200 ok"},
			{Rules: []string{"AUTH-14"}, Name: "constant time", Result: walletcheck.Skip, Evidence: "not observable"},
			{Name: "balance restored at the end", Result: walletcheck.Pass, Evidence: "before 1000, after 1000"},
		},
		Passed: 2, Failed: 1, Skipped: 1,
	}
}

// --report DIR writes the three files: result.json (each check with its
// rules, verdict, evidence and fix, each rule's verdict, the exit status),
// JUnit XML that a CI server's parser reads, and a one-page HTML summary
// that escapes what the wallet wrote.
func TestReportDirWritesThreeFormats(t *testing.T) {
	t.Parallel()
	rep := sampleReport()
	dir := filepath.Join(t.TempDir(), "report")
	if err := rep.WriteDir(dir); err != nil {
		t.Fatalf("WriteDir: %v", err)
	}
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	t.Run("result.json", func(t *testing.T) {
		var got struct {
			ExitCode int                 `json:"exit_code"`
			Failed   int                 `json:"failed"`
			Checks   []walletcheck.Check `json:"checks"`
			Rules    []struct {
				Rule   string   `json:"rule"`
				Result string   `json:"result"`
				Checks []string `json:"checks"`
			} `json:"rules"`
		}
		if err := json.Unmarshal(read(walletcheck.ResultFile), &got); err != nil {
			t.Fatal(err)
		}
		if got.ExitCode != 1 || got.Failed != 1 || len(got.Checks) != 4 {
			t.Fatalf("exit_code %d, failed %d, %d checks", got.ExitCode, got.Failed, len(got.Checks))
		}
		if c := got.Checks[0]; c.Fix != "fix: decide and debit atomically" || c.Result != walletcheck.Fail || !slices.Equal(c.Rules, []string{"WC-1", "GEN-6"}) {
			t.Errorf("first check %+v", c)
		}
		verdicts := map[string]string{}
		for _, r := range got.Rules {
			verdicts[r.Rule] = r.Result
		}
		// GEN-6 is named by a failed check and a passed one: it fails.
		want := map[string]string{"WC-1": "fail", "GEN-6": "fail", "BET-8": "pass", "AUTH-14": "skip"}
		for id, v := range want {
			if verdicts[id] != v {
				t.Errorf("rule %s: %q, want %q (all: %v)", id, verdicts[id], v, verdicts)
			}
		}
	})

	t.Run("junit.xml", func(t *testing.T) {
		var got junitTestsuites
		if err := xml.Unmarshal(read(walletcheck.JUnitFile), &got); err != nil {
			t.Fatalf("a JUnit parser cannot read it: %v", err)
		}
		if got.Tests != 4 || got.Failures != 1 || len(got.Testsuites) != 1 {
			t.Fatalf("testsuites: tests %d, failures %d, %d suites", got.Tests, got.Failures, len(got.Testsuites))
		}
		s := got.Testsuites[0]
		if s.Name != "wallet-check" || s.Tests != 4 || s.Failures != 1 || s.Skipped != 1 || s.Errors != 0 || s.Time != "1.234" {
			t.Errorf("testsuite %+v", s)
		}
		if len(s.Testcases) != 4 {
			t.Fatalf("%d testcases", len(s.Testcases))
		}
		failed := s.Testcases[0]
		if failed.Name != "concurrent bets near the balance" || failed.Classname != "wallet-check.WC-1.GEN-6" || failed.Failure == nil {
			t.Fatalf("failed testcase %+v", failed)
		}
		if !strings.Contains(failed.Failure.Message, "fix: decide and debit atomically") || strings.Contains(failed.Failure.Message, "<script>") ||
			!strings.Contains(failed.Failure.Text, "<script>alert(1)</script>") {
			t.Errorf("failure message %q, text %q", failed.Failure.Message, failed.Failure.Text)
		}
		if s.Testcases[1].Failure != nil || s.Testcases[1].Skipped != nil || s.Testcases[1].SystemOut != "HTTP 200 ok" {
			t.Errorf("passed testcase %+v", s.Testcases[1])
		}
		if s.Testcases[2].Skipped == nil || s.Testcases[2].Skipped.Message != "not observable" {
			t.Errorf("skipped testcase %+v", s.Testcases[2])
		}
		if s.Testcases[3].Classname != "wallet-check" {
			t.Errorf("a check without rules has classname %q", s.Testcases[3].Classname)
		}
	})

	t.Run("summary.html", func(t *testing.T) {
		page := string(read(walletcheck.SummaryFile))
		for _, want := range []string{
			"<!DOCTYPE html>", `<span class="verdict fail">FAIL</span>`, html.EscapeString(rep.Summary()),
			`<tr class="fail">`, `<tr class="pass">`, `<tr class="skip">`,
			`<div class="fix">fix: decide and debit atomically</div>`,
			"&lt;script&gt;alert(1)&lt;/script&gt;", "https://wallet.example",
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the summary lacks %q", want)
			}
		}
		if strings.Contains(page, "<script>") {
			t.Error("the summary carries the wallet's text unescaped")
		}
		if n := strings.Count(page, "<tr class="); n != 4 {
			t.Errorf("%d check rows, want 4", n)
		}
	})
}

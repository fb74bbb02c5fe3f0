package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// walletCheck starts the wallet binary bin and runs the game's `crashgame
// wallet-check` (checker) against it. It returns wallet-check's summary line,
// its whole report, and an error when a check failed or a program could not
// run. The test credentials reach the wallet as environment variables named
// prefix+NAME (SECRET, API_KEY, SECOND_API_KEY, TOKEN, EXPIRED_TOKEN), never
// on a command line.
func walletCheck(bin, prefix, checker string) (summary, report string, err error) {
	creds := map[string]string{
		"SECRET": "toolchain-secret-0123456789abcdef", "API_KEY": "tc_key1_0123456789", "SECOND_API_KEY": "tc_key2_0123456789",
		"TOKEN": "tok-live-0123456789abcdef", "EXPIRED_TOKEN": "tok-expired-0123456789ab",
	}
	wallet := exec.Command(bin, "-operator", "acme", "-currency", "BRL", "-freebet-id", "fb-1", "-freebet-amount", "100")
	wallet.Env = os.Environ()
	for k, v := range creds {
		wallet.Env = append(wallet.Env, prefix+k+"="+v)
	}
	var logs strings.Builder
	wallet.Stderr = &logs
	out, err := wallet.StdoutPipe()
	if err != nil {
		return "", "", err
	}
	if err := wallet.Start(); err != nil {
		return "", "", fmt.Errorf("start %s: %w", bin, err)
	}
	defer func() { _ = wallet.Process.Kill(); _ = wallet.Wait() }()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return "", logs.String(), fmt.Errorf("%s printed no address: %w", bin, err)
	}
	check := exec.Command(checker, "wallet-check", "--wallet-url", "http://"+strings.TrimSpace(addr),
		"--operator", "acme", "--currency", "BRL", "--freebet-id", "fb-1", "--freebet-amount", "100")
	check.Env = os.Environ()
	for k, v := range creds {
		check.Env = append(check.Env, "WALLET_CHECK_"+k+"="+v)
	}
	var stdout, stderr strings.Builder
	check.Stdout, check.Stderr = &stdout, &stderr
	err = check.Run()
	report = stdout.String()
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, "PASS: ") || strings.HasPrefix(l, "FAIL: ") {
			summary = l
		}
	}
	if summary == "" {
		summary = "no summary line"
		report += stderr.String()
	}
	return summary, report, err
}

// failedRows returns the rows of a wallet-check report whose result is FAIL
// and whose check or evidence holds word.
func failedRows(report, word string) []string {
	var rows []string
	for _, l := range strings.Split(report, "\n") {
		cells := strings.Split(l, " | ")
		if len(cells) >= 3 && strings.TrimSpace(cells[2]) == "FAIL" && strings.Contains(strings.ToLower(l), word) {
			rows = append(rows, l)
		}
	}
	return rows
}

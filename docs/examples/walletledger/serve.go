//go:build ignore

package walletledger

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
)

// Serve is the example wallets' main: it reads the test player from the
// flags and the credentials from the environment (never the command line:
// <prefix>_TOKEN, _EXPIRED_TOKEN, _SECRET, _API_KEY and _SECOND_API_KEY),
// keeps the player in a Ledger, asks build for the HTTP handler that serves
// it (the generated server behind the guide's wiring), listens, prints the
// address it took on a line of its own, and serves until the process ends.
func Serve(prefix string, build func(l *Ledger, secrets map[string][]byte, apiKeys []string) (http.Handler, error)) {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on; the address taken is printed")
	operator := flag.String("operator", "acme", "the operator (brand) served")
	player := flag.String("player", "p-1", "the test player's id")
	currency := flag.String("currency", "BRL", "the player's currency")
	balance := flag.Int64("balance", 100_000, "the player's balance in cents")
	freebet := flag.String("freebet-id", "fb-1", "an open grant of the player")
	freebetAmount := flag.Int64("freebet-amount", 100, "the grant's value in cents")
	flag.Parse()
	env := func(name string) string {
		v := os.Getenv(prefix + "_" + name)
		if v == "" {
			log.Fatalf("%s_%s is not set", prefix, name)
		}
		return v
	}
	l := New(Config{
		PlayerID: *player, Currency: *currency, Balance: *balance,
		Token: env("TOKEN"), ExpiredToken: env("EXPIRED_TOKEN"),
		Grants: map[string]int64{*freebet: *freebetAmount},
	})
	h, err := build(l, map[string][]byte{*operator: []byte(env("SECRET"))}, []string{env("API_KEY"), env("SECOND_API_KEY")})
	if err != nil {
		log.Fatalf("the wallet's handler: %v", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	fmt.Println(ln.Addr().String())
	log.Fatal(http.Serve(ln, h))
}

package api_test

import (
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// The documents' servers are one variable for a whole address, which a
// strict router cannot match when the address has a path prefix, as their
// descriptions say; the way they give works: with the real address as the
// server, a strict router finds every route under its prefix.
func TestStrictServerMatching(t *testing.T) {
	t.Parallel()
	tests := []struct {
		doc, real, path string
	}{
		{gwGameDoc, "https://games.acme.example/crash", "/v1/launch"},
		{gwWalletDoc, "https://wallet.acme.example/crash", "/bet"},
	}
	for _, tc := range tests {
		t.Run(tc.doc, func(t *testing.T) {
			t.Parallel()
			find := func(doc *openapi3.T) error {
				router, err := legacy.NewRouter(doc)
				if err != nil {
					t.Fatal(err)
				}
				req, _ := http.NewRequest(http.MethodPost, tc.real+tc.path, nil)
				_, _, err = router.FindRoute(req)
				return err
			}
			published := gwLoadDocument(t, tc.doc)
			// The stated limitation: the published server does not match an
			// address with a path prefix.
			copied := *published
			if err := find(&copied); err == nil {
				t.Errorf("a strict router matched %s%s against %s: the description's warning is stale", tc.real, tc.path, published.Servers[0].URL)
			}
			copied.Servers = openapi3.Servers{{URL: tc.real}}
			if err := find(&copied); err != nil {
				t.Errorf("with the real address as the server, %s%s: %v", tc.real, tc.path, err)
			}
		})
	}
}

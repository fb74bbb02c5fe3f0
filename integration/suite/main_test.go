//go:build integration

package suite

import (
	"os"
	"testing"

	tclog "github.com/testcontainers/testcontainers-go/log"
)

func TestMain(m *testing.M) {
	setEnvDefaults()
	// testcontainers' own progress lines drown the scenarios' output; set
	// CRASHGAME_SUITE_TC_LOG=1 to see them.
	if os.Getenv("CRASHGAME_SUITE_TC_LOG") == "" {
		tclog.SetDefault(tclog.NewNoopLogger())
	}
	os.Exit(m.Run())
}

package sessions_test

import (
	"testing"

	"github.com/crashstudio/crashgame/integration/pgtest"
)

// TestMain shares one PostgreSQL container among the tests that run on both
// backends (legacy_test.go) and terminates it afterwards.
func TestMain(m *testing.M) { pgtest.Main(m) }

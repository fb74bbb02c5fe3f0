package movements_test

import (
	"testing"

	"github.com/crashstudio/crashgame/integration/pgtest"
)

// TestMain shares one PostgreSQL container among this package's tests and
// terminates it afterwards.
func TestMain(m *testing.M) { pgtest.Main(m) }

package console_test

import (
	"testing"

	"github.com/openclaw/occ/internal/server/servertest"
)

func TestMain(m *testing.M) { servertest.Main(m) }

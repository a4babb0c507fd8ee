package local_test

import (
	"os"
	"testing"

	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/compute/local"
)

type dirObserver struct{ d *local.Driver }

func (o dirObserver) NamespaceExists(t *testing.T, id string) bool {
	_, err := os.Stat(o.d.NamespaceDir(id))
	return err == nil
}

func TestConformance(t *testing.T) {
	d, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	computetest.Run(t, d, dirObserver{d})
}

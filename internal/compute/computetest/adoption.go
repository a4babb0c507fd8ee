package computetest

import (
	"errors"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
)

// adoptionObligations: a driver instance over the same state (occ
// restarted, or a second occ process) adopts what runs instead of
// starting it again, and two instances never run two workloads for one
// Agent.
var adoptionObligations = []obligation{
	{"ReopenedDriverAdoptsTheWorkload", func(t *testing.T, s *subject) {
		ag, spec := s.serving(t)
		w1 := s.workload(t, ag)
		ep1 := s.endpointOn(t, s.d, ag)

		d2 := s.h.Reopen(t)
		if ep := s.endpointOn(t, d2, ag); ep != ep1 {
			t.Fatalf("endpoint from a reopened driver = %+v; want %+v", ep, ep1)
		}
		s.readyOn(t, d2, spec)
		if w := s.workload(t, ag); w != w1 {
			t.Fatalf("PrepareRevision on a reopened driver replaced the workload: %s, then %s", w1, w)
		}
		activate(t, d2, spec.RevisionRef)

		// A third instance stops it; the others do not bring it back.
		stop(t, s.h.Reopen(t), ag)
		s.noWorkload(t, ag, "StopAgent on a third driver")
		noEndpointOn(t, d2, ag, "StopAgent on a third driver")
		noEndpointOn(t, s.d, ag, "StopAgent on a third driver")
	}},
	{"TwoInstancesNeverRunTwoWorkloads", func(t *testing.T, s *subject) {
		d2 := s.h.Reopen(t)
		ag := s.agent(t)
		spec := s.spec(ag, 1)
		drivers := []compute.Driver{s.d, d2, s.d, d2}
		errs := make(chan error, len(drivers))
		for _, d := range drivers {
			go func() {
				_, err := s.await(d, spec, "ready", isReady)
				errs <- err
			}()
		}
		// Watch while they race: never more than one workload.
		var failed []error
		most := 0
		for done := 0; done < len(drivers); {
			select {
			case err := <-errs:
				done++
				failed = append(failed, err)
			default:
				most = max(most, len(s.obs.Workloads(t, ag)))
				time.Sleep(5 * time.Millisecond)
			}
		}
		if err := errors.Join(failed...); err != nil {
			t.Fatal(err)
		}
		if most > 1 {
			t.Fatalf("saw %d workloads of one Agent at once; want 1", most)
		}
		s.workload(t, ag)
		// Either instance stops it; the other does not bring it back.
		stop(t, d2, ag)
		noEndpointOn(t, s.d, ag, "StopAgent on the other driver")
		s.noWorkload(t, ag, "StopAgent on the other driver")
	}},
}

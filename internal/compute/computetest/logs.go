package computetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/openclaw/occ/internal/compute"
)

// logsObligations: a driver that reads its gateways' output gives that of
// the revision asked for only (none of a revision never prepared or
// replaced), whole lines within the bounds asked for; one that cannot
// refuses every read with compute.ErrLogsUnsupported.
var logsObligations = []obligation{
	{"OfTheRevisionBoundedOrRefused", func(t *testing.T, s *subject) {
		ag := s.agent(t)
		rev1, rev2 := s.spec(ag, 1), s.spec(ag, 2)
		ctx := context.Background()
		l, err := s.d.Logs(ctx, rev1.RevisionRef, compute.LogOptions{TailLines: 10})
		if errors.Is(err, compute.ErrLogsUnsupported) {
			s.ready(t, rev1)
			if _, err := s.d.Logs(ctx, rev1.RevisionRef, compute.LogOptions{TailLines: 10}); !errors.Is(err, compute.ErrLogsUnsupported) {
				t.Fatalf("Logs of a ready revision = %v; a driver that refused once must refuse every read", err)
			}
			return
		}
		if err != nil || l.Found || len(l.Lines) != 0 {
			t.Fatalf("Logs of a revision never prepared = %+v, %v; want none found", l, err)
		}
		s.ready(t, rev1)
		// A container engine may still be writing the lines of the last
		// readiness check: the tail is compared with the whole output read
		// before and after it, until the two agree.
		all := func() compute.Logs {
			t.Helper()
			l, err := s.d.Logs(ctx, rev1.RevisionRef, compute.LogOptions{TailLines: compute.MaxLogLines})
			if err != nil || !l.Found || len(l.Lines) == 0 {
				t.Fatalf("Logs of a ready revision = %+v, %v; want its gateway's output", l, err)
			}
			return l
		}
		for attempt := 1; ; attempt++ {
			before := all()
			one, err := s.d.Logs(ctx, rev1.RevisionRef, compute.LogOptions{TailLines: 1})
			if after := all(); !slices.Equal(before.Lines, after.Lines) && attempt < 10 {
				continue
			}
			if err != nil || len(one.Lines) != 1 || one.Lines[0] != before.Lines[len(before.Lines)-1] || one.Truncated != (len(before.Lines) > 1) {
				t.Fatalf("Logs with TailLines 1 = %+v, %v; want the last line of %q", one, err, before.Lines)
			}
			break
		}
		s.ready(t, rev2)
		if l, err := s.d.Logs(ctx, rev1.RevisionRef, compute.LogOptions{TailLines: 10}); err != nil || l.Found || len(l.Lines) != 0 {
			t.Fatalf("Logs of a replaced revision = %+v, %v; want none found", l, err)
		}
	}},
}

package computetest

import (
	"fmt"
	"slices"

	"github.com/openclaw/occ/internal/compute"
)

// validReadiness checks any answer of PrepareRevision against the
// contract's vocabulary: a pending reason, held code and warning code
// from their closed sets, failure evidence complete, a cause only with
// MODEL_PROBE_FAILED, and nothing but warnings on a ready revision.
func validReadiness(r compute.Readiness) error {
	rf := r.RuntimeFailure
	switch {
	case r.Ready && (r.Held || rf != nil || r.PendingReason != ""):
		return fmt.Errorf("ready revision also held, failed or pending: %+v", r)
	case r.PendingReason != "" && !slices.Contains(pendingReasons, r.PendingReason):
		return fmt.Errorf("pending reason %q is not one of %v", r.PendingReason, pendingReasons)
	case r.Held && (rf == nil || !slices.Contains(heldCodes, rf.Code)):
		return fmt.Errorf("held without a failure of a code in %v: %+v, %+v", heldCodes, r, rf)
	case rf != nil && (rf.Component == "" || rf.Check == "" || rf.Code == "" || rf.CheckedAt.IsZero()):
		return fmt.Errorf("incomplete runtime failure %+v", rf)
	case rf != nil && rf.Cause != nil && rf.Code != compute.HeldModelProbeFailed:
		return fmt.Errorf("runtime failure %s with a cause %+v", rf.Code, rf.Cause)
	}
	seen := map[string]bool{}
	for _, w := range r.Warnings {
		if !slices.Contains(warningCodes, w.Code) || w.PluginID == "" || seen[w.PluginID] {
			return fmt.Errorf("warning %+v: want one per plugin, with a plugin ID and a code in %v", w, warningCodes)
		}
		seen[w.PluginID] = true
	}
	return nil
}

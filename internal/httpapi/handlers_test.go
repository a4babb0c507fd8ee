package httpapi

import (
	"testing"

	"github.com/openclaw/occ/internal/app"
)

// TestIfMatchHeader: the If-Match header becomes the use cases' precondition.
func TestIfMatchHeader(t *testing.T) {
	for _, tc := range []struct {
		header *string
		want   app.IfMatch
	}{
		{nil, app.IfMatch{}},
		{ptr("*"), app.MatchAny()},
		{ptr(" * "), app.MatchAny()},
		{ptr(`"3"`), app.MatchVersion(3)},
		{ptr(`W/"3"`), app.MatchVersion(3)},
		{ptr("3"), app.MatchVersion(-1)},
		{ptr(`"three"`), app.MatchVersion(-1)},
		{ptr(`"*"`), app.MatchVersion(-1)},
		{ptr(""), app.MatchVersion(-1)},
	} {
		if got := ifMatch(tc.header); got != tc.want {
			t.Errorf("If-Match %q = %+v, want %+v", deref(tc.header), got, tc.want)
		}
	}
}

func ptr(s string) *string { return &s }

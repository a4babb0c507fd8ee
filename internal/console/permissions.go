package console

import (
	"net/http"

	"github.com/openclaw/occ/internal/occ"
)

// action is a button a page may offer: shown when the caller holds the
// permission, otherwise replaced by the reason it is missing. The use case
// behind the button decides again when it is pressed.
type action struct {
	Allowed bool
	Reason  string
}

// can previews whether the caller may do action on res.
func (c *Console) can(r *http.Request, s *session, kind occ.Kind, act occ.Action, res occ.ResourceRef, what string) action {
	perm := occ.P(kind, act)
	ok, err := c.app.Allowed(r.Context(), s.caller, perm, res)
	if err != nil {
		c.log.WarnContext(r.Context(), "console permission preview", "error", err)
		return action{Reason: "occ could not check your permissions; reload the page."}
	}
	if ok {
		return action{Allowed: true}
	}
	return action{Reason: "You may not " + what + ": it needs " + perm.String() + "."}
}

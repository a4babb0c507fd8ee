package console

import (
	"net/http"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

type presetsData struct {
	Items []occ.Preset
	Next  string
}

// presets lists the Presets of a Namespace (its own and the
// installation's) the caller may read; Create Agent offers them.
func (c *Console) presets(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	p, err := c.app.ListPresets(r.Context(), s.caller, ns.ID, app.PageRequest{Size: pageSize, Token: r.URL.Query().Get("page")})
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, http.StatusOK, "presets", &view{Title: "Presets", Session: s, NS: ns, Data: presetsData{Items: p.Items, Next: p.Next}})
}

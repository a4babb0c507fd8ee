package console

import (
	"encoding/json"
	"net/http"

	"github.com/openclaw/occ/internal/occ"
)

// diffLine is one row of a side-by-side diff: the left and right text
// ("" on the side that lacks it) and whether the row differs.
type diffLine struct {
	Left, Right string
	HasLeft     bool
	HasRight    bool
	Changed     bool
}

type compareData struct {
	Agent       occ.Agent
	Left, Right occ.Revision
	Lines       []diffLine
}

// compareRevisions shows two revisions' snapshots side by side (exact
// agent_revision:read on both, through GetRevision).
func (c *Console) compareRevisions(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	ctx := r.Context()
	g, err := c.app.GetAgent(ctx, s.caller, ns.ID, r.PathValue("agent"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	q := r.URL.Query()
	var revs [2]occ.Revision
	for i, id := range []string{q.Get("a"), q.Get("b")} {
		if !occ.ValidID(occ.PrefixRevision, id) {
			c.fail(w, r, s, occ.Invalid("Choose two revisions to compare.", occ.Detail{Path: "/" + string(rune('a'+i)), Code: occ.DetailInvalidFmt}))
			return
		}
		if revs[i], err = c.app.GetRevision(ctx, s.caller, ns.ID, g.ID, id); err != nil {
			c.fail(w, r, s, err)
			return
		}
	}
	d := compareData{Agent: g, Left: revs[0], Right: revs[1], Lines: diffLines(snapshotLines(revs[0]), snapshotLines(revs[1]))}
	c.render(w, r, http.StatusOK, "compare", &view{Title: "Revisions of " + g.Name, Session: s, NS: ns, Data: d})
}

// snapshotLines is a revision's snapshot as indented JSON lines.
func snapshotLines(rev occ.Revision) []string {
	if rev.Snapshot == nil {
		return []string{"(the saved snapshot cannot be read)"}
	}
	b, _ := json.MarshalIndent(rev.Snapshot, "", "  ")
	if rev.ReadError != nil {
		return append([]string{"(the saved " + rev.ReadError.Field + " cannot be read; the rest is shown)"}, splitLines(string(b))...)
	}
	return splitLines(string(b))
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// diffLines aligns a and b on their longest common subsequence of lines.
func diffLines(a, b []string) []diffLine {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffLine
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, diffLine{Left: a[i], Right: b[j], HasLeft: true, HasRight: true})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, diffLine{Right: b[j], HasRight: true, Changed: true})
			j++
		default:
			out = append(out, diffLine{Left: a[i], HasLeft: true, Changed: true})
			i++
		}
	}
	return out
}

package api_test

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/backends/backendstest"
	"github.com/openclaw/occ/internal/credgateway/credgatewaytest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestCrossTenantMatrix walks every operation of api/openapi.yaml as the
// administrator of Namespace A (every permission in A, and installation:read)
// against the IDs of Namespace B: every mix of B's IDs in the path (B's
// Namespace with B's resources, and A's Namespace with B's resources), and
// each ID the example body names taken from B in turn. No answer is 2xx; it
// is 404, or 403 on an installation route (A's administrator administers no
// installation) or 400/404 for a body naming what the caller cannot use; and
// it is byte for byte (but for the request ID) the answer to the same
// request with random IDs of the same kinds, so existence never leaks. B's
// rows are the same afterwards (denial audit events aside), A's audit log
// tells B's IDs from random ones no better, and A's administrator succeeds on
// A's own IDs, so the sweep cannot pass vacuously.
func TestCrossTenantMatrix(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		start := time.Now()
		e := servertest.Boot(t, url, nil, servertest.WithBackend(backendstest.New(t).Backend(matrixBackendID)), servertest.WithGateway(credgatewaytest.New(t).URL))
		a, b := newTenant(e, "xt-a"), newTenant(e, "xt-b")
		admin := tenantAdmin(e, a.ns())
		waitSettled(e, b)
		setUp := time.Since(start)
		before := rowsNaming(e, b.ids())
		s := &sweep{e: e, t: t, a: a, b: b, key: admin, twins: map[string][]string{}, n: &sweepCounts{answers: map[string]int{}}}
		for _, r := range routes(t, e.Spec) {
			t.Run(r.id, func(t *testing.T) { s.withT(t).route(r) })
		}
		if after := rowsNaming(e, b.ids()); !slices.Equal(before, after) {
			t.Errorf("B's rows changed:\n%s", rowsDiff(before, after))
		}
		s.auditTellsNothing()
		allowed := s.allowed()
		n := s.n
		t.Logf("%d operations (%d name no Namespace's ID): %d requests with B's IDs (%d path mixes, %d body mixes; answers %v), each beside its random twin; %d allowed on A; set-up %s, total %s",
			n.ops, n.noIDs, n.pathMixes+n.bodyMixes, n.pathMixes, n.bodyMixes, n.answers, allowed, setUp.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	})
}

// sweep is the walk of every operation as A's administrator.
type sweep struct {
	e     *servertest.Env
	t     *testing.T
	a, b  tenant
	key   string              // A's administrator
	twins map[string][]string // B's ID → the random IDs that stood in for it
	n     *sweepCounts
}

// sweepCounts counts what the sweep checked.
type sweepCounts struct {
	ops, noIDs, pathMixes, bodyMixes int
	answers                          map[string]int // "path 404" → how many
}

func (s *sweep) withT(t *testing.T) *sweep {
	c := *s
	c.t, c.e = t, s.e.WithT(t)
	return &c
}

var pathParam = regexp.MustCompile(`\{(\w+)\}`)

// route sends every mix of B's IDs of one operation.
func (s *sweep) route(r route) {
	s.n.ops++
	var params []string // the path's ID parameters
	for _, m := range pathParam.FindAllStringSubmatch(r.path, -1) {
		if isID(s.a.value(s.t, r.path, m[1])) {
			params = append(params, m[1])
		}
	}
	bodies := []map[string]any{rawExample(s.t, r)}
	bodies = append(bodies, extraBodies[r.id]...)
	var refs []string // the ID placeholders of the bodies
	for _, body := range bodies {
		fillPlaceholders(body, func(name string) string {
			if isID(s.a.value(s.t, r.path, name)) && !slices.Contains(refs, name) {
				refs = append(refs, name)
			}
			return ""
		})
	}
	if len(params)+len(refs) == 0 {
		// Nothing of B's to name: A's administrator gets its own answer,
		// which names nothing of B's (A's administrator administers no
		// installation).
		s.n.noIDs++
		path, res, raw := s.sendAsA(s.t, r)
		if r.mode == "installation" && r.perm != occ.P(occ.KindInstallation, occ.ActionRead) && res.StatusCode != 403 {
			s.t.Errorf("%s %s = %d %s, want 403", r.method, path, res.StatusCode, raw)
		}
		return
	}
	// B's IDs in the path: every non-empty subset of its ID parameters; the
	// body's from B with B's Namespace, else from A.
	for set := 1; set < 1<<len(params); set++ {
		fromB := map[string]bool{}
		for i, p := range params {
			fromB[p] = set&(1<<i) != 0
		}
		if fromB["namespaceId"] {
			for _, ref := range refs {
				fromB[ref] = true
			}
		}
		s.n.pathMixes++
		s.check(r, bodies[0], fromB, false)
	}
	// One of the body's IDs from B, everything else A's.
	for _, body := range bodies {
		for _, ref := range refs {
			if strings.Contains(servertest.ToJSON(body), "{"+ref+"}") {
				s.n.bodyMixes++
				s.check(r, body, map[string]bool{ref: true}, true)
			}
		}
	}
}

// check sends one mix and its random twin and compares them.
func (s *sweep) check(r route, body map[string]any, fromB map[string]bool, inBody bool) {
	t := s.t
	t.Helper()
	random := map[string]string{}
	pick := func(twin bool) func(string) string {
		return func(name string) string {
			if !fromB[name] {
				return s.a.value(t, r.path, name)
			}
			v := s.b.value(t, r.path, name)
			if twin {
				if random[name] == "" {
					random[name] = occ.NewID(occ.PrefixOf(v))
					s.twins[v] = append(s.twins[v], random[name])
				}
				return random[name]
			}
			return v
		}
	}
	send := func(twin bool) (string, *http.Response, []byte) {
		path, b := request(r, body, pick(twin))
		res, raw := s.e.CallRaw(r.method, path, s.key, b)
		return path + " " + servertest.ToJSON(b), res, raw
	}
	req, res, raw := send(false)
	_, twinRes, twinRaw := send(true)
	if res.StatusCode/100 == 2 {
		t.Fatalf("%s %s = %d with B's IDs: %s", r.method, req, res.StatusCode, raw)
	}
	where := "path"
	if inBody {
		where = "body"
	}
	s.n.answers[fmt.Sprintf("%s %d", where, res.StatusCode)]++
	want := []int{404}
	switch {
	case r.mode == "installation":
		want = []int{403}
	case inBody:
		want = []int{400, 404}
	}
	if !slices.Contains(want, res.StatusCode) {
		t.Errorf("%s %s = %d %s, want one of %v", r.method, req, res.StatusCode, raw, want)
	}
	if res.StatusCode != twinRes.StatusCode || maskRequestID(raw) != maskRequestID(twinRaw) || !sameHeaders(res.Header, twinRes.Header) {
		t.Errorf("%s %s tells B's IDs from random ones:\nB's:    %d %v %s\nrandom: %d %v %s", r.method, req,
			res.StatusCode, res.Header, raw, twinRes.StatusCode, twinRes.Header, twinRaw)
	}
}

// request fills a route's path and a body with the values get gives.
func request(r route, body map[string]any, get func(string) string) (string, any) {
	path := pathParam.ReplaceAllStringFunc(r.path, func(m string) string { return get(m[1 : len(m)-1]) })
	if body == nil {
		return path, nil
	}
	return path, fillPlaceholders(body, get)
}

var requestID = regexp.MustCompile(`"requestId":"req_[^"]*"`)

func maskRequestID(raw []byte) string {
	return requestID.ReplaceAllString(string(raw), `"requestId":"…"`)
}

// sameHeaders compares two responses' headers but for the date and the
// request ID.
func sameHeaders(x, y http.Header) bool {
	strip := func(h http.Header) http.Header {
		c := h.Clone()
		c.Del("Date")
		c.Del("X-Request-Id")
		return c
	}
	return maps.EqualFunc(strip(x), strip(y), slices.Equal)
}

package app_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store/storetest"
)

// token encodes raw as a page token is encoded (unpadded base64url).
func token(raw string) string { return base64.RawURLEncoding.EncodeToString([]byte(raw)) }

// malformedTokens are page tokens no list ever hands out, several of which
// decode to bytes PostgreSQL cannot hold in text.
var malformedTokens = map[string]string{
	"NUL in the ID":             token("1|\x00"),
	"NUL inside the ID":         token("1|ns_\x00abc"),
	"invalid UTF-8 in the ID":   token("1|\xff\xfe"),
	"a lone surrogate":          token("1|\xed\xa0\x80"),
	"NUL in the position":       token("1\x00|ns_x"),
	"a space in the ID":         token("1|ns x"),
	"a non-ASCII ID":            token("1|é"),
	"no separator":              token("12345"),
	"no ID":                     token("1|"),
	"an ID over 100 characters": token("1|" + strings.Repeat("a", 101)),
	"a position out of range":   token("99999999999999999999|ns_x"),
	"not a number":              token("x|ns_x"),
	"not base64url":             "not a token!",
	"padded base64":             base64.URLEncoding.EncodeToString([]byte("1|ns_xy")),
}

// TestMalformedPageToken: every list answers a malformed page token with
// 400 INVALID_REQUEST pointing at /pageToken, on both databases (never a
// 503 from PostgreSQL refusing the bytes), and still accepts the tokens it
// hands out.
func TestMalformedPageToken(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := newEnv(t, url, withNamespace)
		agent, err := e.app.CreateAgent(e.ctx, e.admin, e.ns, app.AgentInput{Name: "listed", ConfigurationID: e.cfg})
		e.must("create agent", err)
		lists := map[string]func(app.PageRequest) (string, error){
			"namespaces": pageOf(func(p app.PageRequest) (app.Page[occ.Namespace], error) {
				return e.app.ListNamespaces(e.ctx, e.admin, p)
			}),
			"configurations": pageOf(func(p app.PageRequest) (app.Page[occ.Configuration], error) {
				return e.app.ListConfigurations(e.ctx, e.admin, e.ns, p)
			}),
			"secrets": pageOf(func(p app.PageRequest) (app.Page[occ.Secret], error) {
				return e.app.ListSecrets(e.ctx, e.admin, e.ns, p)
			}),
			"presets": pageOf(func(p app.PageRequest) (app.Page[occ.Preset], error) {
				return e.app.ListPresets(e.ctx, e.admin, e.ns, p)
			}),
			"agents": pageOf(func(p app.PageRequest) (app.Page[occ.Agent], error) { return e.app.ListAgents(e.ctx, e.admin, e.ns, p) }),
			"revisions": pageOf(func(p app.PageRequest) (app.Page[occ.Revision], error) {
				return e.app.ListRevisions(e.ctx, e.admin, e.ns, agent.ID, p)
			}),
			"service accounts": pageOf(func(p app.PageRequest) (app.Page[occ.ServiceAccount], error) {
				return e.app.ListServiceAccounts(e.ctx, e.admin, e.ns, p)
			}),
			"credential sources": pageOf(func(p app.PageRequest) (app.Page[occ.CredentialSource], error) {
				return e.app.ListCredentialSources(e.ctx, e.admin, e.ns, p)
			}),
			"roles":           pageOf(func(p app.PageRequest) (app.Page[occ.Role], error) { return e.app.ListRoles(e.ctx, e.admin, "", p) }),
			"namespace roles": pageOf(func(p app.PageRequest) (app.Page[occ.Role], error) { return e.app.ListRoles(e.ctx, e.admin, e.ns, p) }),
			"bindings": pageOf(func(p app.PageRequest) (app.Page[occ.Binding], error) {
				return e.app.ListBindings(e.ctx, e.admin, "", p)
			}),
			"restrictions": pageOf(func(p app.PageRequest) (app.Page[occ.Restriction], error) {
				return e.app.ListRestrictions(e.ctx, e.admin, e.ns, p)
			}),
			"humans": pageOf(func(p app.PageRequest) (app.Page[occ.Principal], error) {
				return e.app.ListPrincipals(e.ctx, e.admin, occ.PrincipalHuman, p)
			}),
			"service keys": pageOf(func(p app.PageRequest) (app.Page[occ.ServiceKey], error) {
				return e.app.ListServiceKeys(e.ctx, e.admin, p)
			}),
			"backends": pageOf(func(p app.PageRequest) (app.Page[app.Backend], error) { return e.app.ListBackends(e.ctx, e.admin, p) }),
			"audit events": pageOf(func(p app.PageRequest) (app.Page[occ.AuditEvent], error) {
				return e.app.ListAuditEvents(e.ctx, e.admin, "", app.AuditQuery{}, p)
			}),
			"service principals": pageOf(func(p app.PageRequest) (app.Page[occ.Principal], error) {
				return e.app.ListPrincipals(e.ctx, e.admin, occ.PrincipalService, p)
			}),
		}
		for name, list := range lists {
			t.Run(name, func(t *testing.T) {
				for what, tok := range malformedTokens {
					_, err := list(app.PageRequest{Token: tok})
					oe := occ.AsError(err)
					if oe == nil || oe.Code != occ.CodeInvalidRequest || len(oe.Details) != 1 || oe.Details[0].Path != "/pageToken" {
						t.Errorf("%s: %v, want INVALID_REQUEST at /pageToken", what, err)
					}
				}
				// A token a list hands out (or one of the same shape) is accepted.
				next, err := list(app.PageRequest{Size: 1})
				if err != nil {
					t.Fatalf("first page: %v", err)
				}
				if next == "" {
					next = token("0|zzz")
				}
				if _, err := list(app.PageRequest{Size: 1, Token: next}); err != nil {
					t.Fatalf("the next page: %v", err)
				}
			})
		}
	})
}

// pageOf adapts one list to "the next page token, or the error".
func pageOf[T any](list func(app.PageRequest) (app.Page[T], error)) func(app.PageRequest) (string, error) {
	return func(p app.PageRequest) (string, error) {
		page, err := list(p)
		return page.Next, err
	}
}

package console

import (
	"context"
	"net/http"
	"strings"

	"github.com/openclaw/occ/internal/occ"
)

// routes lists every console page and action. Pages link to each other
// with ordinary hrefs, so the whole console can be walked without script.
func (c *Console) routes() {
	m := c.mux
	m.Handle("GET "+Prefix+"static/", c.static())
	m.HandleFunc("GET /{$}", c.home)
	m.HandleFunc("GET "+Prefix+"{$}", c.home)
	m.Handle("GET "+strings.TrimSuffix(Prefix, "/"), http.RedirectHandler(Prefix, http.StatusMovedPermanently))
	m.HandleFunc("GET "+Prefix+"sign-in", c.signInPage)
	m.HandleFunc("POST "+Prefix+"sign-in", c.signIn)
	m.HandleFunc("POST "+Prefix+"sign-out", c.signedIn(c.signOut))
	m.HandleFunc("GET "+Prefix+"switch", c.signedIn(c.switchNamespace))

	m.HandleFunc("GET "+Prefix+"namespaces", c.signedIn(c.namespaces))
	m.HandleFunc("POST "+Prefix+"namespaces", c.signedIn(c.createNamespace))
	m.HandleFunc("POST "+Prefix+"namespaces/{ns}/delete", c.signedIn(c.deleteNamespace))

	ns := Prefix + "namespaces/{ns}"
	m.HandleFunc("GET "+ns, c.signedIn(c.inNamespace(c.fleet)))
	m.HandleFunc("GET "+ns+"/agents", c.signedIn(c.inNamespace(c.fleet)))
	m.HandleFunc("GET "+ns+"/agents/new", c.signedIn(c.inNamespace(c.newAgent)))
	m.HandleFunc("POST "+ns+"/agents", c.signedIn(c.inNamespace(c.createAgent)))
	agent := ns + "/agents/{agent}"
	m.HandleFunc("GET "+agent, c.signedIn(c.inNamespace(c.agentPage)))
	m.HandleFunc("GET "+agent+"/settings", c.signedIn(c.inNamespace(c.agentSettings)))
	m.HandleFunc("POST "+agent+"/settings", c.signedIn(c.inNamespace(c.updateAgentSettings)))
	m.HandleFunc("POST "+agent+"/deploy", c.signedIn(c.inNamespace(c.deployAgent)))
	m.HandleFunc("POST "+agent+"/stop", c.signedIn(c.inNamespace(c.stopAgent)))
	m.HandleFunc("POST "+agent+"/delete", c.signedIn(c.inNamespace(c.deleteAgent)))
	m.HandleFunc("GET "+agent+"/revisions/compare", c.signedIn(c.inNamespace(c.compareRevisions)))
	m.HandleFunc("GET "+agent+"/deployments/{rev}", c.signedIn(c.inNamespace(c.deploymentPage)))
	m.HandleFunc("POST "+agent+"/deployments/{rev}/diagnostics", c.signedIn(c.inNamespace(c.diagnose)))
	m.HandleFunc("GET "+agent+"/files/{name}", c.signedIn(c.inNamespace(c.filePage)))
	m.HandleFunc("POST "+agent+"/files/{name}", c.signedIn(c.inNamespace(c.writeFile)))

	m.HandleFunc("GET "+ns+"/configurations", c.signedIn(c.inNamespace(c.configurations)))
	m.HandleFunc("POST "+ns+"/configurations", c.signedIn(c.inNamespace(c.createConfiguration)))
	m.HandleFunc("GET "+ns+"/configurations/{cfg}", c.signedIn(c.inNamespace(c.configurationPage)))
	m.HandleFunc("POST "+ns+"/configurations/{cfg}", c.signedIn(c.inNamespace(c.updateConfiguration)))
	m.HandleFunc("POST "+ns+"/configurations/{cfg}/delete", c.signedIn(c.inNamespace(c.deleteConfiguration)))

	m.HandleFunc("GET "+ns+"/secrets", c.signedIn(c.inNamespace(c.secrets)))
	m.HandleFunc("POST "+ns+"/secrets", c.signedIn(c.inNamespace(c.createSecret)))
	m.HandleFunc("POST "+ns+"/secrets/{sec}", c.signedIn(c.inNamespace(c.rotateSecret)))
	m.HandleFunc("POST "+ns+"/secrets/{sec}/delete", c.signedIn(c.inNamespace(c.deleteSecret)))

	m.HandleFunc("GET "+ns+"/presets", c.signedIn(c.inNamespace(c.presets)))
	m.HandleFunc("POST "+ns+"/presets", c.signedIn(c.inNamespace(c.createPreset)))
	m.HandleFunc("GET "+ns+"/presets/{preset}", c.signedIn(c.inNamespace(c.presetPage)))
	m.HandleFunc("POST "+ns+"/presets/{preset}", c.signedIn(c.inNamespace(c.updatePreset)))
	m.HandleFunc("POST "+ns+"/presets/{preset}/delete", c.signedIn(c.inNamespace(c.deletePreset)))

	m.HandleFunc("GET "+ns+"/service-accounts", c.signedIn(c.inNamespace(c.serviceAccounts)))
	m.HandleFunc("POST "+ns+"/service-accounts", c.signedIn(c.inNamespace(c.createServiceAccount)))
	m.HandleFunc("GET "+ns+"/service-accounts/{sa}", c.signedIn(c.inNamespace(c.serviceAccountPage)))
	m.HandleFunc("POST "+ns+"/service-accounts/{sa}/credential", c.signedIn(c.inNamespace(c.issueCredential)))
	m.HandleFunc("POST "+ns+"/service-accounts/{sa}/delete", c.signedIn(c.inNamespace(c.deleteServiceAccount)))

	m.HandleFunc("GET "+ns+"/credential-sources", c.signedIn(c.inNamespace(c.credentialSources)))
	m.HandleFunc("POST "+ns+"/credential-sources", c.signedIn(c.inNamespace(c.createCredentialSource)))
	m.HandleFunc("GET "+ns+"/credential-sources/{cs}", c.signedIn(c.inNamespace(c.credentialSourcePage)))
	m.HandleFunc("POST "+ns+"/credential-sources/{cs}", c.signedIn(c.inNamespace(c.updateCredentialSource)))
	m.HandleFunc("POST "+ns+"/credential-sources/{cs}/delete", c.signedIn(c.inNamespace(c.deleteCredentialSource)))
	// Access: the same pages at a Namespace's scope and the installation's.
	for base, scoped := range map[string]func(nsPage) func(http.ResponseWriter, *http.Request, *session){ns: c.inNamespace, strings.TrimSuffix(Prefix, "/"): atInstallation} {
		m.HandleFunc("GET "+base+"/iam", c.signedIn(scoped(c.iamPage)))
		m.HandleFunc("POST "+base+"/iam/roles", c.signedIn(scoped(c.createRole)))
		m.HandleFunc("POST "+base+"/iam/roles/{role}/delete", c.signedIn(scoped(c.iamRemove("role", c.app.DeleteRole))))
		m.HandleFunc("POST "+base+"/iam/bindings", c.signedIn(scoped(c.createBinding)))
		m.HandleFunc("POST "+base+"/iam/bindings/{binding}/delete", c.signedIn(scoped(c.iamRemove("binding", c.app.DeleteBinding))))
		m.HandleFunc("POST "+base+"/iam/restrictions", c.signedIn(scoped(c.createRestriction)))
		m.HandleFunc("POST "+base+"/iam/restrictions/{restriction}/delete", c.signedIn(scoped(c.iamRemove("restriction", c.app.DeleteRestriction))))
	}

	m.HandleFunc("GET "+Prefix+"audit", c.signedIn(c.auditLog))
	m.HandleFunc("GET "+Prefix+"keys", c.signedIn(c.keys))
	m.HandleFunc("POST "+Prefix+"keys", c.signedIn(c.issueKey))
	m.HandleFunc("POST "+Prefix+"keys/{key}/revoke", c.signedIn(c.revokeKey))
	m.HandleFunc("GET "+ns+"/audit", c.signedIn(c.inNamespace(c.nsAuditLog)))

	m.HandleFunc("/", c.notFound)
}

// home is the Namespaces page, or the sign-in page when signed out.
func (c *Console) home(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.renderSignIn(w, r, http.StatusOK, "", "")
		return
	}
	c.namespaces(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)), s)
}

func (c *Console) notFound(w http.ResponseWriter, r *http.Request) {
	s, _ := c.session(r)
	c.render(w, r, http.StatusNotFound, "error", &view{Title: "Not found", Session: s, Error: occ.MsgNotFound, ErrorCode: string(occ.CodeNotFound)})
}

// nsPage is a page inside one Namespace the caller may read.
type nsPage func(http.ResponseWriter, *http.Request, *session, *occ.Namespace)

// inNamespace loads the path's Namespace with the caller's permission
// (namespace:read; a Namespace the caller may not see is not found).
func (c *Console) inNamespace(next nsPage) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		id := r.PathValue("ns")
		if !occ.ValidID(occ.PrefixNamespace, id) {
			c.fail(w, r, s, occ.ErrNotFound)
			return
		}
		ns, err := c.app.GetNamespace(r.Context(), s.caller, id)
		if err != nil {
			c.fail(w, r, s, err)
			return
		}
		next(w, r, s, &ns)
	}
}

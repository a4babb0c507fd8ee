package console

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/occ"
)

// view is what every page template receives.
type view struct {
	Title      string
	Session    *session        // nil when signed out
	Namespaces []occ.Namespace // the picker's choices
	NS         *occ.Namespace  // the Namespace the page is in, if any
	Error      string          // a refused action's fixed message
	ErrorCode  string
	Details    []occ.Detail // where the refused input was wrong
	Notice     string       // what the last action did
	Data       any          // the page's own data
	Audit      bool         // the installation's audit log is the caller's to read
}

// CSRF is the token forms carry.
func (v *view) CSRF() string {
	if v.Session == nil {
		return ""
	}
	return v.Session.csrf
}

// Who is the signed-in person.
func (v *view) Who() occ.Principal {
	if v.Session == nil {
		return occ.Principal{}
	}
	return v.Session.who
}

type pageTemplate struct{ t *template.Template }

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"whenp": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"targetFields": targetFields,
	"sourceRows":   sourceRows,
	"q":            func(s string) string { return strings.ReplaceAll(template.URLQueryEscaper(s), "+", "%20") },
}

// parsePages parses every page with the layout.
func parsePages() (map[string]*pageTemplate, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*pageTemplate{}
	for _, n := range names {
		base := strings.TrimSuffix(path.Base(n), ".html")
		if base == "layout" || base == "partials" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html", n)
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", n, err)
		}
		out[base] = &pageTemplate{t: t}
	}
	return out, nil
}

// render writes a page; the Namespace picker is filled for a signed-in view.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, page string, v *view) {
	if v.Session == nil {
		v.Session = sessionFrom(r.Context())
	}
	if v.Notice == "" {
		v.Notice = notices[r.URL.Query().Get("notice")]
	}
	if v.Session != nil {
		inst := c.installation()
		v.Audit, _ = c.app.Allowed(r.Context(), v.Session.caller, occ.P(occ.KindInstallation, occ.ActionAdminister), inst)
	}
	if v.Session != nil && v.Namespaces == nil {
		if p, err := c.app.ListNamespaces(r.Context(), v.Session.caller, app.PageRequest{Size: app.MaxPageSize}); err == nil {
			v.Namespaces = p.Items
		}
	}
	pt, ok := c.pages[page]
	if !ok {
		panic("console: no template " + page)
	}
	var buf bytes.Buffer
	if err := pt.t.ExecuteTemplate(&buf, "layout", v); err != nil {
		c.log.ErrorContext(r.Context(), "console render", "page", page, "error", err)
		http.Error(w, "The page could not be shown.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail shows a refused action or read as an error page with its fixed
// message; an expired session goes back to sign-in.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	oe := c.asError(r, err)
	if oe.Code == occ.CodeUnauthenticated {
		c.renderSignIn(w, r, http.StatusUnauthorized, msgSessionEnded, "")
		return
	}
	c.render(w, r, statusOf(oe.Code), "error", &view{Title: "Refused", Session: s, Error: oe.Message, ErrorCode: string(oe.Code), Details: oe.Details})
}

// asError is err as the fixed-message error a person may see; anything
// else is logged and shown as unavailable.
func (c *Console) asError(r *http.Request, err error) *occ.Error {
	if oe := occ.AsError(err); oe != nil {
		if oe.Cause != nil {
			c.log.WarnContext(r.Context(), "console action failed", "code", oe.Code, "error", err)
		}
		return oe
	}
	c.log.ErrorContext(r.Context(), "console action failed", "error", err)
	return occ.Unavailable(err)
}

// after finishes a form: refused, show renders the form's page again
// with the refusal; accepted, the browser goes to next.
func (c *Console) after(w http.ResponseWriter, r *http.Request, err error, next string, show func(status int, v *view)) {
	if err != nil {
		v := &view{}
		show(c.formError(r, v, err), v)
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// formError fills v with a refused form's message and details.
func (c *Console) formError(r *http.Request, v *view, err error) int {
	oe := c.asError(r, err)
	v.Error, v.ErrorCode, v.Details = oe.Message, string(oe.Code), oe.Details
	return statusOf(oe.Code)
}

func statusOf(code occ.Code) int { return contract.StatusOf(code) }

func itoa(n int) string { return strconv.Itoa(n) }

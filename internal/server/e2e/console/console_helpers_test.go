package console_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/console"
	"github.com/openclaw/occ/internal/server/servertest"
	"golang.org/x/net/html"
)

// browser is a cookie-keeping client of the console that does not follow
// redirects, so each answer can be checked.
type browser struct {
	t      *testing.T
	e      *servertest.Env
	client *http.Client
}

func newBrowser(t *testing.T, e *servertest.Env) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, e: e, client: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// page is one console answer.
type page struct {
	status int
	header http.Header
	body   string
	doc    *html.Node
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	p := page{status: res.StatusCode, header: res.Header, body: string(raw)}
	if got := res.Header.Get("Content-Security-Policy"); got != console.CSP {
		b.t.Fatalf("%s %s: Content-Security-Policy = %q", req.Method, req.URL.Path, got)
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		if p.doc, err = html.Parse(strings.NewReader(p.body)); err != nil {
			b.t.Fatal(err)
		}
	}
	return p
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, err := http.NewRequest("GET", b.e.Base+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// post sends a form from the public origin; headers override or add
// ("Origin", "" removes it).
func (b *browser) post(path string, form url.Values, headers ...string) page {
	b.t.Helper()
	req, err := http.NewRequest("POST", b.e.Base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", servertest.Origin)
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.do(req)
}

// signIn signs in through the console's form.
func (b *browser) signIn(email, password string) {
	b.t.Helper()
	p := b.post("/console/sign-in", url.Values{"email": {email}, "password": {password}})
	if p.status != http.StatusSeeOther {
		b.t.Fatalf("console sign-in = %d %s", p.status, p.body)
	}
}

// csrf is the token of the forms on a page.
func (p page) csrf(t *testing.T) string {
	t.Helper()
	for _, n := range p.all("input") {
		if attr(n, "name") == "csrf" && attr(n, "value") != "" {
			return attr(n, "value")
		}
	}
	t.Fatalf("no CSRF token on the page:\n%s", p.body)
	return ""
}

// all returns the elements of a tag.
func (p page) all(tag string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	if p.doc != nil {
		walk(p.doc)
	}
	return out
}

// text is the page's visible text (text nodes and textarea contents).
func (p page) text() string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
			sb.WriteString(" ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	if p.doc != nil {
		walk(p.doc)
	}
	return sb.String()
}

// button reports whether the page has a submit button with this text.
func (p page) button(label string) bool {
	for _, n := range p.all("button") {
		if n.FirstChild != nil && strings.TrimSpace(n.FirstChild.Data) == label {
			return true
		}
	}
	return false
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

// hostile is markup a name or file may hold; it must stay text.
const hostile = `<script>alert(1)</script>" onmouseover="alert(2)`

// assertInert checks that hostile input stayed text on a page: the only
// script is the console's own file, no element has an event handler
// attribute, and the text shows as written.
func assertInert(t *testing.T, where string, p page, mustShow bool) {
	t.Helper()
	if p.doc == nil {
		t.Fatalf("%s: not an HTML page (%d)", where, p.status)
	}
	for _, s := range p.all("script") {
		if attr(s, "src") != "/console/static/console.js" || s.FirstChild != nil {
			t.Fatalf("%s: a script other than the console's own: %s", where, p.body)
		}
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					t.Fatalf("%s: element <%s> has an event attribute %s=%q", where, n.Data, a.Key, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(p.doc)
	if mustShow && !strings.Contains(p.text(), hostile) {
		t.Fatalf("%s: the hostile text is not shown as text:\n%s", where, p.body)
	}
}

// cookie is the browser's session cookie as a Cookie header value.
func (b *browser) cookie() string {
	u, _ := url.Parse(b.e.Base)
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == "occ_session" {
			return c.Name + "=" + c.Value
		}
	}
	return ""
}

func (b *browser) hasSession() bool { return b.cookie() != "" }

package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/secrets"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// capture keeps every response (status line, headers and body) the client
// receives, beside the validating transport that checks them.
type capture struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen bytes.Buffer
}

func (c *capture) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := c.next.RoundTrip(req)
	if err != nil {
		return res, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(&c.seen, "%s %s -> %d\n", req.Method, req.URL, res.StatusCode)
	_ = res.Header.Write(&c.seen)
	c.seen.Write(body)
	c.seen.WriteString("\n")
	return res, nil
}

func (c *capture) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen.Bytes())
}

// leaks returns the forms of a canary that must appear nowhere: the value,
// its distinctive core, and the value base64- and hex-encoded.
func leaks(canary, core string) [][]byte {
	return [][]byte{[]byte(canary), []byte(core), []byte(base64.StdEncoding.EncodeToString([]byte(canary))),
		[]byte(base64.RawURLEncoding.EncodeToString([]byte(canary))), []byte(hex.EncodeToString([]byte(canary)))}
}

// readTree returns every regular file under dir, by path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a file that went away while walking (the WAL at close)
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		out[path] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pgDump dumps the test's PostgreSQL schema (data and definitions) with
// pg_dump from PATH or the newest /usr/lib/postgresql/*/bin that works.
func pgDump(t *testing.T, dbURL string) []byte {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	schema := q.Get("search_path")
	if schema == "" {
		t.Fatalf("the test database URL names no schema")
	}
	q.Del("search_path")
	u.RawQuery = q.Encode()
	var candidates []string
	if p, err := exec.LookPath("pg_dump"); err == nil {
		candidates = append(candidates, p)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_dump")
	slices.Sort(dirs)
	slices.Reverse(dirs)
	candidates = append(candidates, dirs...)
	if len(candidates) == 0 {
		t.Fatal("pg_dump not found on PATH or in /usr/lib/postgresql/*/bin")
	}
	var failures []string
	for _, bin := range candidates {
		cmd := exec.Command(bin, "--dbname="+u.String(), "--schema="+schema, "--no-owner", "--no-privileges")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err == nil {
			return out
		}
		failures = append(failures, fmt.Sprintf("%s: %v: %s", bin, err, stderr.String()))
	}
	t.Fatalf("pg_dump failed:\n%s", strings.Join(failures, "\n"))
	return nil
}

// TestSecretCanary writes distinct canary values into Secrets of several
// Namespaces (creates, updates, replays, refusals and denials), then looks
// for them in every place a value could leak: the database files or dump,
// the data directory, the server's logs, the audit log (API and table) and
// every API response.
func TestSecretCanary(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, dbURL string) {
		logs := &servertest.LockedBuffer{}
		e := servertest.Boot(t, dbURL, nil, servertest.RecordLogs(logs))
		responses := &capture{next: e.Client.Transport}
		e.Client = &http.Client{Transport: responses}
		ctx := context.Background()

		run := occ.NewUUID()
		type canary struct{ value, core string }
		var canaries []canary
		next := func(prefix string) string {
			core := fmt.Sprintf("%s-%d-%s", run[:8], len(canaries), occ.NewUUID())
			v := prefix + core + "-end"
			canaries = append(canaries, canary{v, core})
			return v
		}
		current := map[string]string{} // secret ID → value it must resolve to
		nsOf := map[string]string{}
		outsider, _ := e.Principal(servertest.Grant{})
		var names []string
		for i := range 3 {
			ns := e.CreateNamespace(fmt.Sprintf("canary-%d", i))
			for j, prefix := range []string{"xoxb-", "sk-canary-", "plain "} {
				name := fmt.Sprintf("secret-%d-%d", i, j)
				names = append(names, name)
				v := next(prefix)
				id := e.CreateSecret(ns, name, v)
				current[id], nsOf[id] = v, ns
				if j == 0 {
					// A value change: neither value may leak.
					v = next("updated-")
					if r := e.Call("PATCH", servertest.SecretsPath(ns)+"/"+id, e.Admin, map[string]any{"value": v}); r.Status != 200 {
						t.Fatalf("patch = %d %v", r.Status, r.Body)
					}
					current[id] = v
					// A refused, a denied and a stale update carry values too.
					if r := e.Call("PATCH", servertest.SecretsPath(ns)+"/"+id, e.Admin, map[string]any{"value": next("nul\x00")}); r.Status != 400 {
						t.Fatalf("NUL patch = %d", r.Status)
					}
					if r := e.Call("PATCH", servertest.SecretsPath(ns)+"/"+id, outsider, map[string]any{"value": next("denied-")}); r.Status != 404 {
						t.Fatalf("denied patch = %d", r.Status)
					}
					if r := e.Call("PATCH", servertest.SecretsPath(ns)+"/"+id, e.Admin, map[string]any{"value": next("stale-")}, "If-Match", `"1"`); r.Status != 412 {
						t.Fatalf("stale patch = %d", r.Status)
					}
				}
			}
			// A replayed create, a duplicate name, a refused value and a
			// denied create.
			v := next("idem-")
			body := map[string]any{"name": fmt.Sprintf("idem-%d", i), "value": v}
			first := e.Call("POST", servertest.SecretsPath(ns), e.Admin, body, "Idempotency-Key", fmt.Sprintf("canary-%s-%d", run, i))
			again := e.Call("POST", servertest.SecretsPath(ns), e.Admin, body, "Idempotency-Key", fmt.Sprintf("canary-%s-%d", run, i))
			if first.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("idempotent create = %d, replay %d %v", first.Status, again.Status, again.Header)
			}
			current[first.Data()["id"].(string)], nsOf[first.Data()["id"].(string)] = v, ns
			if r := e.Call("POST", servertest.SecretsPath(ns), e.Admin, map[string]any{"name": fmt.Sprintf("secret-%d-1", i), "value": next("dup-")}); r.Status != 409 {
				t.Fatalf("duplicate = %d", r.Status)
			}
			if r := e.Call("POST", servertest.SecretsPath(ns), e.Admin, map[string]any{"name": "too-long", "value": next("long-") + strings.Repeat("x", 65536)}); r.Status != 400 {
				t.Fatalf("too long = %d", r.Status)
			}
			if r := e.Call("POST", servertest.SecretsPath(ns), e.Admin, `{"name":"surrogate","value":"`+next("lone-")+`\udc00"}`); r.Status != 400 {
				t.Fatalf("lone surrogate = %d", r.Status)
			}
			if r := e.Call("POST", servertest.SecretsPath(ns), outsider, map[string]any{"name": "nope", "value": next("outsider-")}); r.Status != 404 {
				t.Fatalf("denied create = %d", r.Status)
			}
			if r := e.Call("GET", servertest.SecretsPath(ns), e.Admin, nil); r.Status != 200 || len(r.List()) != 4 {
				t.Fatalf("list = %d %v", r.Status, r.Body)
			}
		}
		for id, v := range current {
			if r := e.Call("GET", servertest.SecretsPath(nsOf[id])+"/"+id, e.Admin, nil); r.Status != 200 {
				t.Fatalf("get = %d", r.Status)
			}
			// The values were really stored: they resolve.
			got, err := e.M.App().ResolveSecret(ctx, nsOf[id], id)
			if err != nil || string(got) != v {
				t.Fatalf("ResolveSecret(%s) = %d bytes, %v", id, len(got), err)
			}
		}
		// The audit log through the API, every event of the run.
		audit := e.Call("GET", "/audit-events?pageSize=1000", e.Admin, nil)
		if audit.Status != 200 || audit.Body["meta"].(map[string]any)["nextPageToken"] != nil {
			t.Fatalf("audit events = %d, more than one page", audit.Status)
		}
		for _, ns := range slices.Compact(slices.Sorted(func(yield func(string) bool) {
			for _, n := range nsOf {
				if !yield(n) {
					return
				}
			}
		})) {
			if r := e.Call("GET", "/namespaces/"+ns+"/audit-events?pageSize=1000", e.Admin, nil); r.Status != 200 {
				t.Fatalf("namespace audit = %d", r.Status)
			}
		}

		// The audit table itself, every column.
		var auditRows bytes.Buffer
		rows, err := e.M.Store().DB().QueryContext(ctx, `SELECT id, kind, action, outcome, actor_id, COALESCE(namespace_id, ''),
			resource_kind, resource_id, COALESCE(request_id, ''), COALESCE(reason_code, ''), details FROM audit_events`)
		if err != nil {
			t.Fatal(err)
		}
		nAudit := 0
		for rows.Next() {
			cols := make([]string, 11)
			ptrs := make([]any, len(cols))
			for i := range cols {
				ptrs[i] = &cols[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			auditRows.WriteString(strings.Join(cols, "|") + "\n")
			nAudit++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()

		sources := map[string][]byte{
			"server logs":   logs.Bytes(),
			"API responses": responses.Bytes(),
			"audit table":   auditRows.Bytes(),
		}
		dataDir := e.M.Config.DataDir
		if strings.HasPrefix(dbURL, "sqlite://") {
			dbDir := filepath.Dir(strings.TrimPrefix(dbURL, "sqlite://"))
			for p, b := range readTree(t, dbDir) {
				sources["running: "+p] = b
			}
		} else {
			sources["pg_dump"] = pgDump(t, dbURL)
		}
		for p, b := range readTree(t, dataDir) {
			sources["data directory: "+p] = b
		}

		// Positive controls: each source is what it claims to be.
		var dbBytes []byte
		for name, b := range sources {
			if strings.HasPrefix(name, "running: ") || name == "pg_dump" {
				dbBytes = append(dbBytes, b...)
			}
		}
		for _, name := range names {
			if !bytes.Contains(dbBytes, []byte(name)) {
				t.Fatalf("the database bytes lack the Secret name %q: the search looks at the wrong bytes", name)
			}
		}
		if !bytes.Contains(sources["server logs"], []byte("occ is serving")) || !bytes.Contains(sources["API responses"], []byte("secrets.create")) ||
			nAudit < len(current) {
			t.Fatal("positive control failed: the logs, responses or audit table were not captured")
		}

		found := func(b []byte) (string, bool) {
			for _, c := range canaries {
				for _, form := range leaks(c.value, c.core) {
					if bytes.Contains(b, form) {
						return fmt.Sprintf("canary %q (as %q)", c.value, form), true
					}
				}
			}
			return "", false
		}
		check := func(sources map[string][]byte) {
			t.Helper()
			for name, b := range sources {
				if what, leaked := found(b); leaked {
					t.Errorf("%s contains %s", name, what)
				}
			}
		}
		// Negative control: the search finds a planted value in any form.
		for _, planted := range [][]byte{[]byte("x" + canaries[5].value + "y"), []byte(`{"v":"` + base64.StdEncoding.EncodeToString([]byte(canaries[7].value)) + `"}`),
			[]byte("value=…" + canaries[9].core + "…(truncated)")} {
			if _, leaked := found(planted); !leaked {
				t.Fatalf("the search misses a planted canary: %q", planted)
			}
		}
		check(sources)

		// After shutdown (SQLite checkpoints its WAL into the file) the
		// files still hold no value.
		if strings.HasPrefix(dbURL, "sqlite://") {
			e.M.Close()
			after := readTree(t, filepath.Dir(strings.TrimPrefix(dbURL, "sqlite://")))
			if len(after) == 0 {
				t.Fatal("no database files after shutdown")
			}
			check(after)
		}
		t.Logf("%d canaries checked in %d sources", len(canaries), len(sources))
	})
}

// TestSecretCiphertextBoundToRow: a ciphertext copied into another
// Secret's row (same or another Namespace) does not decrypt, while the
// metadata of both still lists and reads.
func TestSecretCiphertextBoundToRow(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, dbURL string) {
		e := servertest.Boot(t, dbURL, nil)
		ctx := context.Background()
		ns1, ns2 := e.CreateNamespace("one"), e.CreateNamespace("two")
		a := e.CreateSecret(ns1, "a", "value-a")
		b := e.CreateSecret(ns1, "b", "value-b")
		c := e.CreateSecret(ns2, "c", "value-c")
		db := e.M.Store().DB()
		copyCiphertext := func(from, to string) {
			t.Helper()
			var ct string
			var key int64
			if err := db.QueryRowContext(ctx, `SELECT ciphertext, key_id FROM secrets WHERE id = $1`, from).Scan(&ct, &key); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, `UPDATE secrets SET ciphertext = $1, key_id = $2 WHERE id = $3`, ct, key, to); err != nil {
				t.Fatal(err)
			}
		}
		copyCiphertext(a, b) // same Namespace
		copyCiphertext(a, c) // another Namespace
		for _, x := range []struct{ ns, id string }{{ns1, b}, {ns2, c}} {
			v, err := e.M.App().ResolveSecret(ctx, x.ns, x.id)
			if !errors.Is(err, app.ErrSecretUnreadable) || !errors.Is(err, secrets.ErrDecrypt) || v != nil {
				t.Fatalf("ResolveSecret of a moved ciphertext = %q, %v; want ErrSecretUnreadable", v, err)
			}
			if strings.Contains(err.Error(), "value-") {
				t.Fatalf("the error quotes a value: %v", err)
			}
		}
		if v, err := e.M.App().ResolveSecret(ctx, ns1, a); err != nil || string(v) != "value-a" {
			t.Fatalf("the original still resolves: %q, %v", v, err)
		}
		// A ciphertext that is not even base64 is unreadable too.
		if _, err := db.ExecContext(ctx, `UPDATE secrets SET ciphertext = 'not base64!' WHERE id = $1`, a); err != nil {
			t.Fatal(err)
		}
		if _, err := e.M.App().ResolveSecret(ctx, ns1, a); !errors.Is(err, app.ErrSecretUnreadable) {
			t.Fatalf("ResolveSecret of a corrupt row = %v", err)
		}
		if _, err := e.M.App().ResolveSecret(ctx, ns1, c); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("ResolveSecret across Namespaces = %v, want ErrNotFound", err)
		}

		// Metadata reads never decrypt: every row still lists and reads.
		for ns, want := range map[string][]string{ns1: {a, b}, ns2: {c}} {
			r := e.Call("GET", servertest.SecretsPath(ns), e.Admin, nil)
			var got []string
			for _, it := range r.List() {
				got = append(got, it.(map[string]any)["id"].(string))
			}
			if r.Status != 200 || !slices.Equal(got, want) {
				t.Fatalf("list %s = %d %v, want %v", ns, r.Status, got, want)
			}
			for _, id := range want {
				if r := e.Call("GET", servertest.SecretsPath(ns)+"/"+id, e.Admin, nil); r.Status != 200 {
					t.Fatalf("get %s = %d %v", id, r.Status, r.Body)
				}
			}
		}
		// A new value repairs a row; deletion works regardless.
		if r := e.Call("PATCH", servertest.SecretsPath(ns1)+"/"+b, e.Admin, map[string]any{"value": "value-b2"}); r.Status != 200 {
			t.Fatalf("patch = %d", r.Status)
		}
		if v, err := e.M.App().ResolveSecret(ctx, ns1, b); err != nil || string(v) != "value-b2" {
			t.Fatalf("after patch: %q, %v", v, err)
		}
		if r := e.Call("DELETE", servertest.SecretsPath(ns2)+"/"+c, e.Admin, nil); r.Status != 204 {
			t.Fatalf("delete of an unreadable secret = %d", r.Status)
		}
	})
}

// TestSecretRotateKey: `occ secrets rotate-key` (the server-side function,
// then the built binary) runs beside a live server sharing the keyset file
// and database; afterwards every value resolves through that server, rows
// are under the new primary with their versions unchanged, and new writes
// use it. A row that cannot be decrypted is reported and left alone.
func TestSecretRotateKey(t *testing.T) {
	t.Parallel()
	bin := servertest.BuildOCC(t)
	storetest.EachMigrated(t, func(t *testing.T, dbURL string) {
		e := servertest.Boot(t, dbURL, nil)
		ctx := context.Background()
		keyset := e.M.Config.Secrets.KeysetFile
		want := map[string]string{}
		nsOf := map[string]string{}
		var order []string
		for i := range 2 {
			ns := e.CreateNamespace(fmt.Sprintf("rot-%d", i))
			for j := range 3 {
				v := fmt.Sprintf("value-%d-%d-%s", i, j, strings.Repeat("é", j*100))
				id := e.CreateSecret(ns, fmt.Sprintf("s-%d", j), v)
				want[id], nsOf[id] = v, ns
				order = append(order, id)
			}
		}
		st := e.M.Store()
		keyIDs := func() map[string]int64 {
			t.Helper()
			rows, err := st.DB().QueryContext(ctx, `SELECT id, key_id FROM secrets`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			out := map[string]int64{}
			for rows.Next() {
				var id string
				var k int64
				if err := rows.Scan(&id, &k); err != nil {
					t.Fatal(err)
				}
				out[id] = k
			}
			return out
		}
		primary := func() uint32 {
			t.Helper()
			k, err := secrets.Open(keyset)
			if err != nil {
				t.Fatal(err)
			}
			return k.Primary()
		}
		versions := func() map[string]any {
			out := map[string]any{}
			for id := range want {
				r := e.Call("GET", servertest.SecretsPath(nsOf[id])+"/"+id, e.Admin, nil)
				out[id] = r.Header.Get("ETag") + "@" + r.Data()["updatedAt"].(string)
			}
			return out
		}
		verify := func(label string, before map[string]any) {
			t.Helper()
			p := int64(primary())
			for id, k := range keyIDs() {
				if k != p {
					t.Fatalf("%s: secret %s under key %d, want the primary %d", label, id, k, p)
				}
			}
			for id, v := range want {
				got, err := e.M.App().ResolveSecret(ctx, nsOf[id], id)
				if err != nil || string(got) != v {
					t.Fatalf("%s: %s resolves to %q, %v", label, id, got, err)
				}
			}
			if after := versions(); before != nil && !mapsEqual(after, before) {
				t.Fatalf("%s: versions changed: %v → %v", label, before, after)
			}
		}
		first := primary()
		before := versions()

		// 1. The server-side function the CLI runs.
		var out bytes.Buffer
		if err := server.RotateSecretsKey(ctx, e.M.Config, &out); err != nil {
			t.Fatalf("rotate: %v\n%s", err, out.String())
		}
		if primary() == first || !strings.Contains(out.String(), "re-encrypted 6 Secrets") {
			t.Fatalf("rotate output: %s", out.String())
		}
		verify("after rotate-key", before)

		// New writes (create and update) use the new primary.
		id := e.CreateSecret(nsOf[order[0]], "after-rotation", "fresh")
		want[id], nsOf[id] = "fresh", nsOf[order[0]]
		if r := e.Call("PATCH", servertest.SecretsPath(nsOf[order[1]])+"/"+order[1], e.Admin, map[string]any{"value": "patched"}); r.Status != 200 {
			t.Fatalf("patch = %d", r.Status)
		}
		want[order[1]] = "patched"
		verify("after new writes", nil)

		// 2. The built binary, the way an operator runs it.
		before = versions()
		cmd := exec.Command(bin, "secrets", "rotate-key", "--data-dir", e.M.Config.DataDir, "--database-url", dbURL)
		cmd.Env = servertest.ChildEnv()
		combined, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(combined), "re-encrypted 7 Secrets") {
			t.Fatalf("occ secrets rotate-key: %v\n%s", err, combined)
		}
		verify("after the binary", before)
		if k, _ := secrets.Open(keyset); len(k.KeyIDs()) != 3 {
			t.Fatalf("keyset holds %v, want 3 keys", k.KeyIDs())
		}

		// A row that cannot be decrypted is reported, left as it is, and
		// does not stop the others.
		var ct string
		if err := st.DB().QueryRowContext(ctx, `SELECT ciphertext FROM secrets WHERE id = $1`, order[2]).Scan(&ct); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DB().ExecContext(ctx, `UPDATE secrets SET ciphertext = $1 WHERE id = $2`, ct, order[3]); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		err = server.RotateSecretsKey(ctx, e.M.Config, &out)
		if err == nil || !strings.Contains(err.Error(), order[3]) || !strings.Contains(out.String(), "re-encrypted 6 Secrets") {
			t.Fatalf("rotate with an unreadable row: %v\n%s", err, out.String())
		}
		var stillCT string
		_ = st.DB().QueryRowContext(ctx, `SELECT ciphertext FROM secrets WHERE id = $1`, order[3]).Scan(&stillCT)
		if stillCT != ct {
			t.Fatal("the unreadable row was rewritten")
		}
		delete(want, order[3])
		for id, v := range want {
			if got, err := e.M.App().ResolveSecret(ctx, nsOf[id], id); err != nil || string(got) != v {
				t.Fatalf("%s after a partial rotation: %q, %v", id, got, err)
			}
		}

		// Each rotation left one audit event with its totals.
		r := e.Call("GET", "/audit-events?action="+app.ActSecretsReseal, e.Admin, nil)
		if len(r.List()) != 3 {
			t.Fatalf("reseal audit events = %v", r.Body)
		}
		outcomes := map[any]int{}
		for _, ev := range r.List() {
			outcomes[ev.(map[string]any)["outcome"]]++
		}
		if outcomes["success"] != 2 || outcomes["failure"] != 1 {
			t.Fatalf("reseal outcomes = %v", outcomes)
		}

		// Without its keyset file the command refuses to run (no new empty keyset).
		cfg := *e.M.Config
		cfg.Secrets.KeysetFile = filepath.Join(t.TempDir(), "missing.keyset")
		if err := server.RotateSecretsKey(ctx, &cfg, io.Discard); err == nil {
			t.Fatal("rotate-key without a keyset file succeeded")
		}
		if _, err := os.Stat(cfg.Secrets.KeysetFile); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("rotate-key created %s", cfg.Secrets.KeysetFile)
		}
	})
}

func mapsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

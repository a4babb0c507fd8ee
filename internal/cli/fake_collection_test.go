package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// collection is an in-memory resource collection of the fake: list,
// create, get, merge-patch (with If-Match) and delete, items keyed by ID.
type collection struct {
	mu     sync.Mutex
	prefix string
	items  map[string]map[string]any
	n      int
}

// collection serves a collection at path (e.g. /namespaces/ns_…/presets)
// whose new items get IDs with prefix, starting with seed.
func (f *fakeOCC) collection(path, prefix string, seed ...map[string]any) *collection {
	c := &collection{prefix: prefix, items: map[string]map[string]any{}}
	for pattern := range f.routes { // the fake's fixed items' routes
		if _, p, _ := strings.Cut(pattern, " "); strings.HasPrefix(p, path+"/") {
			delete(f.routes, pattern)
		}
	}
	for _, it := range seed {
		c.add(it)
	}
	f.routes["GET "+path] = func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		ids := make([]string, 0, len(c.items))
		for id := range c.items {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		list := make([]any, 0, len(ids))
		for _, id := range ids {
			list = append(list, c.items[id])
		}
		writeList(w, list, "")
	}
	f.routes["POST "+path] = func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		c.mu.Lock()
		defer c.mu.Unlock()
		writeData(w, 201, c.add(body))
	}
	item := func(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
		it, ok := c.items[r.PathValue("id")]
		if !ok {
			writeError(w, 404, "NOT_FOUND", "The resource does not exist.")
		}
		return it, ok
	}
	f.routes["GET "+path+"/{id}"] = func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if it, ok := item(w, r); ok {
			writeData(w, 200, it)
		}
	}
	f.routes["PATCH "+path+"/{id}"] = func(w http.ResponseWriter, r *http.Request) {
		var patch map[string]any
		_ = json.NewDecoder(r.Body).Decode(&patch)
		c.mu.Lock()
		defer c.mu.Unlock()
		it, ok := item(w, r)
		if !ok {
			return
		}
		if m := r.Header.Get("If-Match"); m != "" && m != it["etag"] {
			writeError(w, 412, "PRECONDITION_FAILED", "The resource changed.")
			return
		}
		delete(patch, "value") // a Secret's value is never stored here
		mergePatch(it, patch)
		v, _ := strconv.Atoi(fmt.Sprint(it["version"]))
		it["version"] = v + 1
		it["etag"] = fmt.Sprintf(`"%d"`, v+1)
		writeData(w, 200, it)
	}
	f.routes["DELETE "+path+"/{id}"] = func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, ok := item(w, r); ok {
			delete(c.items, r.PathValue("id"))
			w.WriteHeader(204)
		}
	}
	return c
}

// add stores an item (an ID given when it has none; version 1), and
// returns it.
func (c *collection) add(it map[string]any) map[string]any {
	if it["id"] == nil {
		c.n++
		it["id"] = fmt.Sprintf("%s00000000-0000-4000-8000-%012d", c.prefix, 100+c.n)
	}
	it["version"], it["etag"] = 1, `"1"`
	for _, k := range []string{"createdAt", "updatedAt"} {
		if it[k] == nil {
			it[k] = timestamp
		}
	}
	c.items[it["id"].(string)] = it
	return it
}

// get returns a copy of an item (nil when gone).
func (c *collection) get(id string) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	raw, _ := json.Marshal(c.items[id])
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// mergePatch applies an RFC 7386 merge patch to doc.
func mergePatch(doc, patch map[string]any) {
	for k, v := range patch {
		pm, isMap := v.(map[string]any)
		switch {
		case v == nil:
			delete(doc, k)
		case isMap:
			dm, ok := doc[k].(map[string]any)
			if !ok {
				dm = map[string]any{}
				doc[k] = dm
			}
			mergePatch(dm, pm)
		default:
			doc[k] = v
		}
	}
}

// jsonEqual reports whether a and b marshal to the same JSON.
func jsonEqual(a, b any) bool { return jsonString(a) == jsonString(b) }

// jsonString is v as JSON.
func jsonString(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

// jsonDecode decodes a request's JSON body into v.
func jsonDecode(r *http.Request, v any) error { return json.NewDecoder(r.Body).Decode(v) }

// containsPrefix reports whether an item of list starts with prefix.
func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// outputField returns the value of "name:  value" in table output, or
// "" when there is none.
func outputField(t *testing.T, out, name string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

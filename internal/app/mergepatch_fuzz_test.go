package app

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzMergePatch checks mergePatch (RFC 7386) on JSON documents: it never
// changes its inputs; applying a patch twice is applying it once; an object
// patch sets each non-null member (merged, for an object), removes each
// null one and keeps every other key of the document, and any other patch
// replaces the document; and the patch that diff computes independently
// between two documents without nulls turns the first into the second.
func FuzzMergePatch(f *testing.F) {
	for _, c := range [][2]string{
		{`{"a":"b"}`, `{"a":"c"}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`},
		{`{"e":null}`, `{"a":1}`},
		{`{"a":"foo"}`, `null`},
		{`{"a":{"b":{"c":{}}}}`, `{"a":{"b":null,"x":{"y":null}}}`},
		{`{"agents":{"defaults":{"model":"openai/gpt-5"}}}`, `{"agents":{"defaults":{"model":"anthropic/claude-sonnet-4"}}}`},
		{`1`, `{"a":null}`},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, docText, patchText string) {
		var doc, patch any
		if json.Unmarshal([]byte(docText), &doc) != nil || json.Unmarshal([]byte(patchText), &patch) != nil {
			return
		}
		docBefore, patchBefore := toJSONText(doc), toJSONText(patch)
		got := mergePatch(doc, patch)
		if toJSONText(doc) != docBefore || toJSONText(patch) != patchBefore {
			t.Fatalf("mergePatch changed its inputs")
		}
		if again := mergePatch(got, patch); !reflect.DeepEqual(again, got) {
			t.Fatalf("applying %s twice: %s, once: %s", patchText, toJSONText(again), toJSONText(got))
		}
		checkMembers(t, doc, patch, got)
		// The documents as targets: diff(doc, patch) applied to doc.
		if hasNull(doc) || hasNull(patch) {
			return
		}
		if back := mergePatch(doc, diff(doc, patch)); !reflect.DeepEqual(back, patch) {
			t.Fatalf("diff %s applied to %s gives %s", toJSONText(diff(doc, patch)), docText, toJSONText(back))
		}
	})
}

// checkMembers states RFC 7386 member by member for one level.
func checkMembers(t *testing.T, doc, patch, got any) {
	t.Helper()
	p, ok := patch.(map[string]any)
	if !ok {
		if !reflect.DeepEqual(got, patch) {
			t.Fatalf("a non-object patch %s gave %s", toJSONText(patch), toJSONText(got))
		}
		return
	}
	g, ok := got.(map[string]any)
	if !ok {
		t.Fatalf("an object patch gave %s", toJSONText(got))
	}
	d, _ := doc.(map[string]any)
	for k, v := range p {
		_, present := g[k]
		switch _, isObject := v.(map[string]any); {
		case v == nil && present:
			t.Fatalf("null member %q kept", k)
		case v != nil && !isObject && !reflect.DeepEqual(g[k], v):
			t.Fatalf("member %q = %s, want %s", k, toJSONText(g[k]), toJSONText(v))
		case isObject:
			checkMembers(t, d[k], v, g[k])
		}
	}
	for k, v := range d {
		if _, patched := p[k]; !patched && !reflect.DeepEqual(g[k], v) {
			t.Fatalf("unpatched member %q changed", k)
		}
	}
	for k := range g {
		if _, inDoc := d[k]; !inDoc && p[k] == nil {
			t.Fatalf("member %q appeared from nowhere", k)
		}
	}
}

// diff is the merge patch that turns from into to (RFC 7386 §2's inverse),
// for documents without nulls.
func diff(from, to any) any {
	f, fok := from.(map[string]any)
	m, tok := to.(map[string]any)
	if !fok || !tok {
		return to
	}
	out := map[string]any{}
	for k := range f {
		if _, ok := m[k]; !ok {
			out[k] = nil
		}
	}
	for k, v := range m {
		if old, ok := f[k]; !ok || !reflect.DeepEqual(old, v) {
			_, vObject := v.(map[string]any)
			if _, oldObject := old.(map[string]any); ok && vObject && oldObject {
				out[k] = diff(old, v)
			} else {
				out[k] = v
			}
		}
	}
	return out
}

// hasNull reports a null anywhere in a document.
func hasNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	}
	return false
}

func toJSONText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

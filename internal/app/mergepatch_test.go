package app

import (
	"encoding/json"
	"testing"
)

// TestMergePatch runs the examples of RFC 7386 appendix A.
func TestMergePatch(t *testing.T) {
	t.Parallel()
	cases := []struct{ doc, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
	}
	for _, c := range cases {
		var doc, patch, want any
		for _, x := range []struct {
			s string
			v *any
		}{{c.doc, &doc}, {c.patch, &patch}, {c.want, &want}} {
			if err := json.Unmarshal([]byte(x.s), x.v); err != nil {
				t.Fatal(err)
			}
		}
		got, _ := json.Marshal(mergePatch(doc, patch))
		w, _ := json.Marshal(want)
		if string(got) != string(w) {
			t.Errorf("mergePatch(%s, %s) = %s, want %s", c.doc, c.patch, got, w)
		}
	}
}

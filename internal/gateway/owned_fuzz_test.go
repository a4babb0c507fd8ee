package gateway_test

import (
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

// FuzzRefusedKey checks the Configuration key check on JSON documents
// against an independent statement of the table: RefusedKey finds a key
// exactly when some key path of the document matches a rule's pattern
// (matched here as a regular expression over hex-encoded segments); the
// key it names is in the document at its JSON Pointer and matches the rule
// it reports, and the message names that rule and depends on nothing else.
func FuzzRefusedKey(f *testing.F) {
	for i, rule := range gateway.KeyRules() {
		raw, _ := json.Marshal(gatewaytest.DocAt(rule.Example, "occ-refused-value-"+strconv.Itoa(i)))
		f.Add(string(raw))
	}
	for _, s := range []string{`{}`, `{"agents":{"defaults":{"model":"openai/gpt-5"}}}`, `{"secrets":{"providers":null}}`,
		`{"a":[{"cwd":"/"}]}`, `{"tools":{"exec":{"env":{"A":"1"}}}}`, `{"gateway":{"port":1,"auth":{"token":"x"}}}`,
		`{"x/y":{"~":1}}`, `{"plugins":{"installs":[]}}`, `{"update":{"channel":"beta"}}`} {
		f.Add(s)
	}
	rules := gateway.KeyRules()
	matchers := make([]*regexp.Regexp, len(rules))
	for i, r := range rules {
		matchers[i] = patternRegexp(r.Pattern)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var doc map[string]any
		if json.Unmarshal([]byte(text), &doc) != nil {
			return
		}
		want := false
		keyPaths(doc, nil, func(path []string) {
			enc := encodePath(path)
			for _, m := range matchers {
				want = want || m.MatchString(enc)
			}
		})
		got := gateway.RefusedKey(doc)
		if (got != nil) != want {
			t.Fatalf("RefusedKey(%s) = %+v, want a refusal %v", text, got, want)
		}
		if got == nil {
			return
		}
		path, ok := resolve(doc, got.Pointer)
		if !ok {
			t.Fatalf("RefusedKey(%s) names %s, which is not a key of the document", text, got.Pointer)
		}
		i := ruleIndex(rules, got.Rule.Pattern)
		if i < 0 || !matchers[i].MatchString(encodePath(path)) {
			t.Fatalf("RefusedKey(%s): %s does not match rule %q", text, got.Pointer, got.Rule.Pattern)
		}
		msg := got.Message()
		if !strings.Contains(msg, strings.TrimPrefix(got.Rule.Pattern, "**.")) || msg != (gateway.KeyRefusal{Rule: got.Rule}).Message() {
			t.Fatalf("message %q: want the rule's key named and nothing of the document", msg)
		}
	})
}

// patternRegexp turns a rule pattern into a regular expression over paths
// encoded by encodePath: "*" is any one segment, a leading "**" any number.
func patternRegexp(pattern string) *regexp.Regexp {
	segs := strings.Split(pattern, ".")
	var b strings.Builder
	b.WriteString("^")
	for i, s := range segs {
		switch {
		case s == "**" && i == 0:
			b.WriteString(`(?:[0-9a-f]*\.)*`)
			continue
		case s == "*":
			b.WriteString(`[0-9a-f]*`)
		default:
			b.WriteString(hex.EncodeToString([]byte(s)))
		}
		if i < len(segs)-1 {
			b.WriteString(`\.`)
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func encodePath(path []string) string {
	enc := make([]string, len(path))
	for i, s := range path {
		enc[i] = hex.EncodeToString([]byte(s))
	}
	return strings.Join(enc, ".")
}

// keyPaths calls fn with the path of every object key at any depth (array
// elements are segments "0", "1", …).
func keyPaths(v any, path []string, fn func([]string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := append(append([]string(nil), path...), k)
			fn(p)
			keyPaths(e, p, fn)
		}
	case []any:
		for i, e := range x {
			keyPaths(e, append(append([]string(nil), path...), strconv.Itoa(i)), fn)
		}
	}
}

// resolve follows an RFC 6901 pointer to an object key and returns its path.
func resolve(doc any, ptr string) ([]string, bool) {
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	var path []string
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		key := strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[key]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(x) || strconv.Itoa(i) != key {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
		path = append(path, key)
	}
	_, isObjectKey := lastContainer(doc, path).(map[string]any)
	return path, isObjectKey
}

// lastContainer returns the value holding the last segment of path.
func lastContainer(doc any, path []string) any {
	cur := doc
	for _, k := range path[:len(path)-1] {
		switch x := cur.(type) {
		case map[string]any:
			cur = x[k]
		case []any:
			i, _ := strconv.Atoi(k)
			cur = x[i]
		}
	}
	return cur
}

func ruleIndex(rules []gateway.KeyRule, pattern string) int {
	for i, r := range rules {
		if r.Pattern == pattern {
			return i
		}
	}
	return -1
}

package contract

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openclaw/occ/internal/occ"
)

// FuzzBody sends any bytes as the JSON body of every operation of
// api/openapi.yaml that takes one, and checks the answer against an
// independent statement of the rules: it is 200 (the handler gets exactly
// the bytes sent), 400 INVALID_REQUEST or, over the limit only, 413, never
// 500; a body is admitted exactly when it is one well-formed JSON value
// (valid UTF-8, no lone surrogate escape) nested at most 24 deep, without a
// duplicate or forbidden key, that the operation's schema accepts
// (validated here on the decoded value, not through the request filter);
// and a refusal's message is at most 256 characters.
func FuzzBody(f *testing.F) {
	s, all := realStack(f)
	var ops []realOp
	for _, o := range all {
		if o.op.RequestBody != nil {
			ops = append(ops, o)
		}
	}
	for i, o := range ops {
		mt := o.op.RequestBody.Value.Content.Get("application/json")
		ex := mt.Schema.Value.Example
		if x, ok := mt.Schema.Value.Extensions["x-occ-example"]; ok {
			ex = x
		}
		raw, _ := json.Marshal(ex)
		f.Add(uint8(i), raw)
	}
	for _, b := range []string{`{"name":"a","name":"b"}`, `{"__proto__":{}}`, `{"name":"\ud800"}`, `{"name":"x"} x`, `{"name":1e400}`,
		`{"name":"x","kind":"agent","values":{"a":[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]}}`,
		`{"name":"x","kind":"agent","values":{"a":[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]}}`,
		`{"name":"x","kind":"agent","values":{"x":{"__proto__":1}}}`, `{"name":"x","kind":"agent","values":{"a":1,"a":2}}`,
		`{"name":"x","kind":"agent","values":{"\udc00":"\ud83d\ude00"}}`, "\xff", `[]`, `null`, `{"permissions":["namespace:read"],"name":"\u0000"}`, `{"expiresIn":1e2,"servicePrincipalId":"spn_00000000-0000-4000-8000-000000000000","name":"x"}`} {
		for i := range ops {
			f.Add(uint8(i), []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		o := ops[int(which)%len(ops)]
		rec := s.send(o.method, o.path, body)
		want := admissible(o, body)
		switch {
		case rec.Code == http.StatusOK:
			var env struct{ Data echoed }
			if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || len(body) > 0 && !sameJSON(env.Data.Body, body) {
				t.Fatalf("%s: the handler got %s, not the body sent", o.id, env.Data.Body)
			}
		case rec.Code == http.StatusRequestEntityTooLarge:
			if len(body) <= bodyLimit(o.op) {
				t.Fatalf("%s: 413 for %d bytes", o.id, len(body))
			}
			return
		case rec.Code == http.StatusBadRequest:
			var env struct{ Error occ.Error }
			if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Error.Code != occ.CodeInvalidRequest ||
				utf8.RuneCountInString(env.Error.Message) > maxMessageLen {
				t.Fatalf("%s: refusal %s", o.id, rec.Body.Bytes())
			}
		default:
			t.Fatalf("%s: %d %s for %q", o.id, rec.Code, rec.Body.Bytes(), body)
		}
		if (rec.Code == http.StatusOK) != want {
			t.Fatalf("%s: %d %s for %q, want admitted %v", o.id, rec.Code, rec.Body.Bytes(), body, want)
		}
	})
}

// admissible is the independent statement of what Body admits.
func admissible(o realOp, body []byte) bool {
	if len(body) == 0 {
		return !o.op.RequestBody.Value.Required
	}
	if !utf8.Valid(body) || !json.Valid(body) || !wellFormedJSON(body) {
		return false
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	schema := o.op.RequestBody.Value.Content.Get("application/json").Schema.Value
	return schema.VisitJSON(v) == nil
}

// wellFormedJSON walks a valid JSON text: depth at most MaxDepth, no
// object with a repeated or forbidden key, no lone surrogate escape.
func wellFormedJSON(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	type level struct {
		keys   map[string]bool
		object bool
		atKey  bool
	}
	var stack []*level
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok {
			if !surrogatesPaired(string(body[start:dec.InputOffset()])) {
				return false
			}
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].atKey {
				top := stack[n-1]
				if top.keys[s] || s == "__proto__" || s == "constructor" || s == "prototype" {
					return false
				}
				top.keys[s], top.atKey = true, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) == MaxDepth {
				return false
			}
			stack = append(stack, &level{keys: map[string]bool{}, object: tok == json.Delim('{'), atKey: tok == json.Delim('{')})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].atKey = true
		}
	}
}

// surrogatesPaired reports whether every \u escape of a UTF-16 surrogate
// in raw JSON text is a high one directly followed by a low one.
func surrogatesPaired(raw string) bool {
	high := false
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			if high {
				return false
			}
			continue
		}
		i++
		if raw[i] != 'u' {
			if high {
				return false
			}
			continue
		}
		u, _ := strconv.ParseUint(raw[i+1:i+5], 16, 16)
		i += 4
		switch {
		case u >= 0xd800 && u <= 0xdbff:
			if high {
				return false
			}
			high = true
		case u >= 0xdc00 && u <= 0xdfff:
			if !high {
				return false
			}
			high = false
		case high:
			return false
		}
	}
	return !high
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b []byte) bool {
	decode := func(raw []byte) (any, error) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		return v, dec.Decode(&v)
	}
	x, errX := decode(a)
	y, errY := decode(b)
	return errX == nil && errY == nil && reflect.DeepEqual(x, y)
}

// bodyLimit is an operation's body limit in bytes: its x-occ-body-limit,
// else the default.
func bodyLimit(op *openapi3.Operation) int {
	if v, ok := op.Extensions[BodyLimitExtension].(float64); ok {
		return int(v)
	}
	return int(DefaultBodyLimit)
}

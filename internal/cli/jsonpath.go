package cli

// A small, safe subset of kubectl's JSONPath templates for -o jsonpath=…,
// written here rather than imported: k8s.io/client-go's is too heavy, and
// the RFC 9535 libraries take a bare query, not a template. A template is
// text with {…} actions, evaluated against what -o json prints (an array
// for a list):
//
//	{.a.b}  {.a[0]}  {.a[-1]}  {[*].name}  {.a.*}  {$.a}  {@.a}
//	{range [*]}…{end}   {"\n"} (a quoted Go string literal)
//
// A string prints bare, anything else as compact JSON; several results of
// one action are joined by a space. No filters, no scripts, no recursion:
// nothing in a template can run code or loop.

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// jpNode is one piece of a parsed template.
type jpNode struct {
	text  string    // literal text (path == nil, body == nil)
	path  []jpStep  // an action's path
	body  []*jpNode // a range's body (path is what it ranges over)
	isRng bool
}

// jpStep is one step of a path: a field, an index, or every element.
type jpStep struct {
	field string
	index int
	kind  byte // 'f' field, 'i' index, '*' every element
}

// parseJSONPath parses a template.
func parseJSONPath(tmpl string) ([]*jpNode, error) {
	nodes, rest, err := parseJPNodes(tmpl, false)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, fmt.Errorf("jsonpath: {end} without {range}")
	}
	return nodes, nil
}

// parseJPNodes parses until the end of s or, inside a range, its {end};
// it returns the text after the {end}.
func parseJPNodes(s string, inRange bool) ([]*jpNode, string, error) {
	var nodes []*jpNode
	for s != "" {
		open := strings.IndexByte(s, '{')
		if open < 0 {
			nodes = append(nodes, &jpNode{text: s})
			s = ""
			break
		}
		if open > 0 {
			nodes = append(nodes, &jpNode{text: s[:open]})
		}
		closeAt := strings.IndexByte(s[open:], '}')
		if closeAt < 0 {
			return nil, "", fmt.Errorf("jsonpath: unclosed { in %q", s[open:])
		}
		action := strings.TrimSpace(s[open+1 : open+closeAt])
		s = s[open+closeAt+1:]
		switch {
		case action == "end":
			if !inRange {
				return nil, "", fmt.Errorf("jsonpath: {end} without {range}")
			}
			return nodes, s, nil
		case strings.HasPrefix(action, "range "):
			path, err := parseJPPath(strings.TrimSpace(strings.TrimPrefix(action, "range ")))
			if err != nil {
				return nil, "", err
			}
			body, rest, err := parseJPNodes(s, true)
			if err != nil {
				return nil, "", err
			}
			nodes = append(nodes, &jpNode{path: path, body: body, isRng: true})
			s = rest
		case strings.HasPrefix(action, `"`):
			lit, err := strconv.Unquote(action)
			if err != nil {
				return nil, "", fmt.Errorf("jsonpath: bad string literal %s", action)
			}
			nodes = append(nodes, &jpNode{text: lit})
		default:
			path, err := parseJPPath(action)
			if err != nil {
				return nil, "", err
			}
			nodes = append(nodes, &jpNode{path: path})
		}
	}
	if inRange {
		return nil, "", fmt.Errorf("jsonpath: {range} without {end}")
	}
	return nodes, "", nil
}

// parseJPPath parses .a.b[0][*] (optionally after $ or @).
func parseJPPath(p string) ([]jpStep, error) {
	orig := p
	p = strings.TrimPrefix(strings.TrimPrefix(p, "$"), "@")
	steps := []jpStep{}
	for p != "" {
		switch p[0] {
		case '.':
			p = p[1:]
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			name := p[:end]
			p = p[end:]
			switch name {
			case "":
				if p == "" || p[0] == '.' {
					return nil, fmt.Errorf("jsonpath: empty field in %q", orig)
				}
			case "*":
				steps = append(steps, jpStep{kind: '*'})
			default:
				steps = append(steps, jpStep{kind: 'f', field: name})
			}
		case '[':
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return nil, fmt.Errorf("jsonpath: unclosed [ in %q", orig)
			}
			in := strings.TrimSpace(p[1:end])
			p = p[end+1:]
			if in == "*" {
				steps = append(steps, jpStep{kind: '*'})
			} else if q, err := strconv.Unquote(strings.ReplaceAll(in, "'", `"`)); err == nil && in != "" && (in[0] == '\'' || in[0] == '"') {
				steps = append(steps, jpStep{kind: 'f', field: q})
			} else if n, err := strconv.Atoi(in); err == nil {
				steps = append(steps, jpStep{kind: 'i', index: n})
			} else {
				return nil, fmt.Errorf("jsonpath: unsupported [%s] in %q (only [N], [*] and ['name'])", in, orig)
			}
		default:
			return nil, fmt.Errorf("jsonpath: %q must start with . or [", orig)
		}
	}
	return steps, nil
}

// jpEval returns what path selects from v.
func jpEval(v any, path []jpStep) []any {
	cur := []any{v}
	for _, st := range path {
		var next []any
		for _, c := range cur {
			switch st.kind {
			case 'f':
				if m, ok := c.(map[string]any); ok {
					if x, ok := m[st.field]; ok {
						next = append(next, x)
					}
				}
			case 'i':
				if a, ok := c.([]any); ok {
					i := st.index
					if i < 0 {
						i += len(a)
					}
					if i >= 0 && i < len(a) {
						next = append(next, a[i])
					}
				}
			case '*':
				switch x := c.(type) {
				case []any:
					next = append(next, x...)
				case map[string]any:
					for _, k := range sortedKeys(x) {
						next = append(next, x[k])
					}
				}
			}
		}
		cur = next
	}
	return cur
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// executeJSONPath writes the template evaluated against v (decoded JSON).
func executeJSONPath(w io.Writer, nodes []*jpNode, v any) error {
	var b strings.Builder
	if err := jpWrite(&b, nodes, v); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func jpWrite(b *strings.Builder, nodes []*jpNode, v any) error {
	for _, n := range nodes {
		switch {
		case n.isRng:
			for _, item := range jpEval(v, n.path) {
				if err := jpWrite(b, n.body, item); err != nil {
					return err
				}
			}
		case n.path != nil:
			for i, x := range jpEval(v, n.path) {
				if i > 0 {
					b.WriteByte(' ')
				}
				if s, ok := x.(string); ok {
					b.WriteString(s)
					continue
				}
				raw, err := json.Marshal(x)
				if err != nil {
					return err
				}
				b.Write(raw)
			}
		default:
			b.WriteString(n.text)
		}
	}
	return nil
}

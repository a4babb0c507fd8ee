package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// credentialKey matches key names whose string values must not be written in
// the file.
var credentialKey = regexp.MustCompile(`(?i)(password|secret|token|apikey|api_key|privatekey)`)

// credentialReason is the problem reported for a credential literal.
const credentialReason = "put credentials in the environment or a file, not in the config"

// fileDecoder applies a yaml.Node tree to a Config by reflection, so that every
// problem names its dotted key and line.
type fileDecoder struct {
	file     string
	problems []Problem
}

func reflectValueOf(c *Config) reflect.Value { return reflect.ValueOf(c).Elem() }

// add records a problem at key, pointing at the node's line.
func (d *fileDecoder) add(key string, n *yaml.Node, reason string) {
	d.problems = append(d.problems, Problem{Key: key, Reason: fmt.Sprintf("%s (%s:%d)", reason, d.file, n.Line)})
}

// decode applies n to v, whose dotted key is key.
func (d *fileDecoder) decode(n *yaml.Node, v reflect.Value, key string) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if isNull(n) {
		return // an explicit null leaves the default
	}
	switch {
	case v.Type() == durationType:
		d.scalar(n, v, key)
	case v.Kind() == reflect.Struct:
		d.structure(n, v, key)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.Uint8:
		d.list(n, v, key)
	case v.Kind() == reflect.Map:
		d.mapping(n, v, key)
	default:
		d.scalar(n, v, key)
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// pairs returns the key/value pairs of a mapping node, reporting non-string
// and duplicate keys.
func (d *fileDecoder) pairs(n *yaml.Node, key string) [][2]*yaml.Node {
	seen := map[string]bool{}
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.add(key, k, "keys must be plain strings")
			continue
		}
		if k.Tag == "!!merge" {
			d.add(join(key, k.Value), k, "merge keys (<<) are not supported")
			continue
		}
		if seen[k.Value] {
			d.add(join(key, k.Value), k, "duplicate key")
			continue
		}
		seen[k.Value] = true
		out = append(out, [2]*yaml.Node{k, v})
	}
	return out
}

// join appends a mapping key to a dotted key.
func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// wrongKind reports a node of the wrong shape.
func (d *fileDecoder) wrongKind(n *yaml.Node, v reflect.Value, key string) {
	got := map[yaml.Kind]string{
		yaml.ScalarNode:   "a scalar",
		yaml.MappingNode:  "a mapping",
		yaml.SequenceNode: "a list",
	}[n.Kind]
	if got == "" {
		got = "something else"
	}
	d.add(key, n, fmt.Sprintf("want %s, got %s", kindName(v.Type()), got))
}

// shorthands are the sections a file may give as one scalar, naming the
// field it sets: `compute: kubernetes` is `compute: {driver: kubernetes}`,
// the same word as --compute and OCC_COMPUTE.
var shorthands = map[string]string{"compute": "driver"}

func (d *fileDecoder) structure(n *yaml.Node, v reflect.Value, key string) {
	if field, ok := shorthands[key]; ok && n.Kind == yaml.ScalarNode && !isNull(n) {
		n = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: field, Line: n.Line, Column: n.Column}, n}}
	}
	if n.Kind != yaml.MappingNode {
		d.wrongKind(n, v, key)
		return
	}
	fields := map[string]int{}
	for i := range v.NumField() {
		if name := yamlName(v.Type().Field(i)); name != "" {
			fields[name] = i
		}
	}
	for _, p := range d.pairs(n, key) {
		k, val := p[0], p[1]
		child := join(key, k.Value)
		i, ok := fields[k.Value]
		if !ok {
			if credentialKey.MatchString(k.Value) && val.Kind == yaml.ScalarNode {
				d.add(child, k, credentialReason)
			} else {
				d.add(child, k, "unknown key")
			}
			continue
		}
		d.decode(val, v.Field(i), child)
	}
}

func (d *fileDecoder) list(n *yaml.Node, v reflect.Value, key string) {
	if n.Kind != yaml.SequenceNode {
		d.wrongKind(n, v, key)
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.decode(item, s.Index(i), key+"["+strconv.Itoa(i)+"]")
	}
	v.Set(s)
}

func (d *fileDecoder) mapping(n *yaml.Node, v reflect.Value, key string) {
	if n.Kind != yaml.MappingNode {
		d.wrongKind(n, v, key)
		return
	}
	if v.Type().Key().Kind() != reflect.String {
		d.add(key, n, "unsupported map key type")
		return
	}
	m := reflect.MakeMap(v.Type())
	for _, p := range d.pairs(n, key) {
		k, val := p[0], p[1]
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, elem, join(key, k.Value))
		m.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), elem)
	}
	v.Set(m)
}

func (d *fileDecoder) scalar(n *yaml.Node, v reflect.Value, key string) {
	if n.Kind != yaml.ScalarNode {
		d.wrongKind(n, v, key)
		return
	}
	if v.Kind() == reflect.String && n.Value != "" && credentialKey.MatchString(lastSegment(key)) {
		d.add(key, n, credentialReason)
		return
	}
	switch {
	case v.Type() == durationType:
		if n.Tag != "!!str" {
			d.add(key, n, fmt.Sprintf("want %s, got %q", kindName(v.Type()), n.Value))
			return
		}
		dur, err := parseDuration(n.Value)
		if err != nil {
			d.add(key, n, err.Error())
			return
		}
		v.SetInt(int64(dur))
	case v.Kind() == reflect.String:
		// Any scalar is taken as written: "nodeVersion: 24" means "24".
		v.SetString(n.Value)
	case v.Kind() == reflect.Bool:
		var b bool
		if n.Tag != "!!bool" || n.Decode(&b) != nil {
			d.add(key, n, fmt.Sprintf("want true or false, got %q", n.Value))
			return
		}
		v.SetBool(b)
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		var i int64
		if n.Tag != "!!int" || n.Decode(&i) != nil || v.OverflowInt(i) {
			d.add(key, n, fmt.Sprintf("want an integer, got %q", n.Value))
			return
		}
		v.SetInt(i)
	default:
		d.add(key, n, "unsupported setting type "+v.Type().String())
	}
}

// lastSegment returns the last mapping key of a dotted key ("backends[0].url"
// gives "url").
func lastSegment(key string) string {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == '.' {
			return key[i+1:]
		}
	}
	return key
}

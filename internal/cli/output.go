package cli

// Output formats (-o): one place decides how a client command prints what
// the server answered. table is for people (a list as aligned columns, one
// object as "field:  value" lines); json, yaml and jsonpath=TEMPLATE print
// the response's data; name prints IDs, one a line, for pipes such as
// `occ secrets list -o name | xargs -n1 occ secrets delete`.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The -o values.
const (
	outputTable    = "table"
	outputJSON     = "json"
	outputYAML     = "yaml"
	outputName     = "name"
	outputJSONPath = "jsonpath="
)

// outputUsage is the -o flag's help.
const outputUsage = "output format: table, json, yaml, name (IDs) or jsonpath=TEMPLATE (e.g. '{.id}', '{range [*]}{.name}{\"\\n\"}{end}')"

// outputFormat is a parsed -o value.
type outputFormat struct {
	kind string
	tmpl []*jpNode
}

// parseOutput parses -o.
func parseOutput(s string) (outputFormat, error) {
	switch s {
	case outputTable, "":
		return outputFormat{kind: outputTable}, nil
	case outputJSON, outputYAML, outputName:
		return outputFormat{kind: s}, nil
	}
	if t, ok := strings.CutPrefix(s, outputJSONPath); ok {
		nodes, err := parseJSONPath(t)
		if err != nil {
			return outputFormat{}, usageError{err}
		}
		return outputFormat{kind: outputJSONPath, tmpl: nodes}, nil
	}
	return outputFormat{}, usageError{fmt.Errorf("--output must be table, json, yaml, name or jsonpath=TEMPLATE, not %q", s)}
}

// format returns the parsed -o (bind has checked it).
func (o *apiOptions) format() outputFormat {
	f, err := parseOutput(o.Output)
	if err != nil {
		return outputFormat{kind: outputJSON}
	}
	return f
}

// structured reports whether the output is data (every format but table).
func (o *apiOptions) structured() bool { return o.format().kind != outputTable }

// printData writes v, the response's data, in the -o format (table
// callers print their own table and never get here).
func (o *apiOptions) printData(v any) error {
	f := o.format()
	switch f.kind {
	case outputYAML:
		tree, err := jsonTree(v)
		if err != nil {
			return err
		}
		raw, err := yaml.Marshal(tree)
		if err != nil {
			return err
		}
		_, err = o.IO.Out.Write(raw)
		return err
	case outputName:
		return o.printNames(v)
	case outputJSONPath:
		tree, err := jsonTree(v)
		if err != nil {
			return err
		}
		if err := executeJSONPath(o.IO.Out, f.tmpl, tree); err != nil {
			return err
		}
		_, err = fmt.Fprintln(o.IO.Out)
		return err
	}
	enc := json.NewEncoder(o.IO.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printNames writes the ID of v, or of each item when v is a list: its
// id, else deploymentId, else (a context, which has no ID) name.
func (o *apiOptions) printNames(v any) error {
	tree, err := jsonTree(v)
	if err != nil {
		return err
	}
	items, ok := tree.([]any)
	if !ok {
		items = []any{tree}
	}
	for _, it := range items {
		m, _ := it.(map[string]any)
		for _, k := range []string{"id", "deploymentId", "name"} {
			if id, ok := m[k].(string); ok && id != "" {
				fmt.Fprintln(o.IO.Out, id)
				break
			}
		}
	}
	return nil
}

// jsonTree returns v as decoded JSON (maps, slices, strings, numbers):
// what json prints, for yaml and jsonpath to walk.
func jsonTree(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return numbers(tree), nil
}

// numbers turns json.Numbers into int64 or float64 so that yaml prints
// them as numbers.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = numbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = numbers(x[k])
		}
	}
	return v
}

package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Source names where Load reads the configuration from.
type Source struct {
	// File is the YAML file path; empty means no file.
	File string
	// Env holds "KEY=VALUE" entries like os.Environ(); only OCC_* entries are
	// read. An empty value counts as unset.
	Env []string
	// Flags maps dotted keys to values, e.g. "dataDir": "/x".
	Flags map[string]string
}

// Load builds the configuration: defaults, then the file, then the
// environment, then the flags; then it derives the dependent defaults
// (PublicOrigin from Listen; DatabaseURL, RuntimeDir and Secrets.KeysetFile
// from DataDir, when unset) and validates the result. A problem in any source
// (unknown key, wrong type, bad value) is returned as a *ValidationError
// naming every such problem; a file that cannot be read or parsed as YAML is
// returned as a plain error.
func Load(src Source) (*Config, error) {
	c := defaults()
	var problems []Problem
	if src.File != "" {
		data, err := os.ReadFile(src.File)
		if err != nil {
			return nil, fmt.Errorf("config: read %s: %w", src.File, err)
		}
		p, err := decodeFile(c, src.File, data)
		if err != nil {
			return nil, err
		}
		problems = append(problems, p...)
	}
	problems = append(problems, applyEnv(c, src.Env)...)
	problems = append(problems, applyFlags(c, src.Flags)...)
	if len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	c.derive()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeFile applies a YAML document to c. It returns the schema problems
// (unknown keys, wrong types, credential literals) and an error only when the
// bytes are not YAML at all.
func decodeFile(c *Config, file string, data []byte) ([]Problem, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // empty file: all defaults
		}
		return nil, fmt.Errorf("config: parse %s: %w", file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return []Problem{{Reason: fmt.Sprintf("%s holds more than one YAML document", file)}}, nil
	}
	d := &fileDecoder{file: file}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, nil
		}
		root = root.Content[0]
	}
	d.decode(root, reflectValueOf(c), "")
	return d.problems, nil
}

// applyEnv applies the OCC_* entries of env to c.
func applyEnv(c *Config, env []string) []Problem {
	byEnv := map[string]scalar{}
	byKey := map[string]scalar{}
	for _, s := range scalars() {
		byEnv[s.env] = s
		byKey[s.key] = s
	}
	values := map[string]string{}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) {
			continue
		}
		values[name] = value // the last entry wins, as with os/exec
	}
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)

	var problems []Problem
	for _, name := range names {
		value := values[name]
		switch {
		case name == envConfig, strings.HasPrefix(name, envTestPrefix), clientEnv[name]:
			continue
		case name == envBootstrapAdminPassword:
			c.Auth.BootstrapAdminPassword = value
			continue
		case name == envBootstrapAPIKey:
			c.Auth.BootstrapAPIKey = value
			continue
		}
		s, ok := byEnv[name]
		if !ok {
			if key, alias := envAliases[name]; alias {
				s = byKey[key]
				if other := values[s.env]; other != "" && value != "" && other != value {
					problems = append(problems, Problem{Key: key, Reason: fmt.Sprintf(
						"%s=%q and %s=%q disagree; set only one", name, value, s.env, other)})
					continue
				}
			} else {
				problems = append(problems, Problem{Key: name, Reason: unknownEnvReason(name, byEnv)})
				continue
			}
		}
		if value == "" {
			continue
		}
		if err := s.set(c, value); err != nil {
			problems = append(problems, Problem{Key: s.key, Reason: fmt.Sprintf("environment variable %s: %v", name, err)})
		}
	}
	return problems
}

// unknownEnvReason explains an OCC_* variable that names no key, suggesting
// the closest known variable when one is near.
func unknownEnvReason(name string, known map[string]scalar) string {
	reason := "environment variable names no config key"
	best, bestDist := "", 4
	for env := range known {
		if d := editDistance(name, env); d < bestDist || (d == bestDist && env < best) {
			best, bestDist = env, d
		}
	}
	if best != "" {
		reason += fmt.Sprintf(" (did you mean %s?)", best)
	}
	return reason
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// applyFlags applies dotted-key flag values to c.
func applyFlags(c *Config, flags map[string]string) []Problem {
	byKey := map[string]scalar{}
	for _, s := range scalars() {
		byKey[s.key] = s
	}
	keys := make([]string, 0, len(flags))
	for k := range flags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var problems []Problem
	for _, key := range keys {
		s, ok := byKey[key]
		if !ok {
			problems = append(problems, Problem{Key: key, Reason: "flag names no config key"})
			continue
		}
		if err := s.set(c, flags[key]); err != nil {
			problems = append(problems, Problem{Key: key, Reason: "flag: " + err.Error()})
		}
	}
	return problems
}

package config

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Environment variables that name no key but are not errors.
const (
	// envConfig is the config file path; the caller reads it.
	envConfig = "OCC_CONFIG"
	// envCompute is CONTRACT §8's short alias of compute.driver.
	envCompute = "OCC_COMPUTE"
	// envBootstrapAdminPassword sets Auth.BootstrapAdminPassword.
	envBootstrapAdminPassword = "OCC_BOOTSTRAP_ADMIN_PASSWORD"
	// envBootstrapAPIKey sets Auth.BootstrapAPIKey.
	envBootstrapAPIKey = "OCC_BOOTSTRAP_API_KEY"
	// envTestPrefix is reserved for the test harness.
	envTestPrefix = "OCC_TEST_"
	// envPrefix starts every occ environment variable.
	envPrefix = "OCC_"
)

// The command line client's variables: how `occ` commands reach a server.
// They are not installation settings, so a server started in the same
// shell (`occ serve` after `export OCC_URL=…`) passes over them.
const (
	EnvURL       = "OCC_URL"
	EnvKey       = "OCC_KEY"
	EnvKeyFile   = "OCC_KEY_FILE"
	EnvNamespace = "OCC_NAMESPACE"
	// EnvClientConfig is the client's config file of contexts (`occ login`).
	EnvClientConfig = "OCC_CLIENT_CONFIG"
	// EnvContext names the context to use instead of the current one.
	EnvContext = "OCC_CONTEXT"
)

// clientEnv is the set of the client's variables.
var clientEnv = map[string]bool{EnvURL: true, EnvKey: true, EnvKeyFile: true, EnvNamespace: true, EnvClientConfig: true, EnvContext: true}

// envAliases maps extra environment variable names to their dotted keys.
var envAliases = map[string]string{envCompute: "compute.driver"}

// scalar is one settable scalar setting of Config.
type scalar struct {
	key   string // dotted key, e.g. "worker.maxAttempts"
	env   string // environment variable, e.g. "OCC_WORKER_MAX_ATTEMPTS"
	index []int  // reflect field index path from Config
	typ   reflect.Type
}

var (
	durationType = reflect.TypeFor[Duration]()
	listType     = reflect.TypeFor[List]()
)

// scalars lists every scalar setting reachable from Config through structs
// (not through lists or maps, which are file-only), in field order; a List
// counts as a scalar (comma-separated outside the file).
func scalars() []scalar {
	var out []scalar
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			name := yamlName(f)
			if name == "" {
				continue
			}
			key := name
			if prefix != "" {
				key = prefix + "." + name
			}
			idx := append(append([]int(nil), index...), i)
			switch {
			case f.Type == durationType, f.Type == listType:
				out = append(out, scalar{key: key, env: EnvName(key), index: idx, typ: f.Type})
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, key, idx)
			case f.Type.Kind() == reflect.Slice, f.Type.Kind() == reflect.Map:
				// Lists and maps are file-only.
			default:
				out = append(out, scalar{key: key, env: EnvName(key), index: idx, typ: f.Type})
			}
		}
	}
	walk(reflect.TypeFor[Config](), "", nil)
	return out
}

// yamlName is the YAML key of a struct field, or "" when the field is not in
// the file schema (yaml:"-").
func yamlName(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if tag == "-" || !f.IsExported() {
		return ""
	}
	if tag == "" {
		return strings.ToLower(f.Name)
	}
	return tag
}

// Keys returns every settable scalar dotted key, sorted. Each is accepted by
// flags and, as EnvName(key), in the environment. Lists of structs
// (backends, presets, pluginCatalogs) and the env-only bootstrap
// credentials are not included; a List (http.trustedProxies) is.
func Keys() []string {
	var keys []string
	for _, s := range scalars() {
		keys = append(keys, s.key)
	}
	sort.Strings(keys)
	return keys
}

// EnvName returns the environment variable of a dotted key: OCC_ followed by
// the key in upper snake case, dots as underscores ("nativeAdminUI.enabled"
// gives "OCC_NATIVE_ADMIN_UI_ENABLED").
func EnvName(key string) string {
	parts := strings.Split(key, ".")
	for i, p := range parts {
		parts[i] = upperSnake(p)
	}
	return envPrefix + strings.Join(parts, "_")
}

// upperSnake turns a camelCase word into UPPER_SNAKE, keeping acronyms
// together ("databaseURL" gives "DATABASE_URL", "nativeAdminUI" gives
// "NATIVE_ADMIN_UI").
func upperSnake(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prev := r[i-1]
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToUpper(c))
	}
	return b.String()
}

// set parses value for the scalar s and stores it into c.
func (s scalar) set(c *Config, value string) error {
	v := reflect.ValueOf(c).Elem().FieldByIndex(s.index)
	if s.typ == durationType {
		d, err := parseDuration(value)
		if err != nil {
			return err
		}
		v.SetInt(int64(d))
		return nil
	}
	if s.typ == listType {
		v.Set(reflect.ValueOf(parseList(value)))
		return nil
	}
	switch s.typ.Kind() {
	case reflect.String:
		v.SetString(value)
	case reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", value)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(value, 10, s.typ.Bits())
		if err != nil {
			return fmt.Errorf("want an integer, got %q", value)
		}
		v.SetInt(n)
	default:
		return fmt.Errorf("unsupported setting type %s", s.typ)
	}
	return nil
}

// parseDuration parses a Go duration string with a unit.
func parseDuration(s string) (Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("want a duration such as \"900s\" or \"100ms\", got %q", s)
	}
	return Duration(d), nil
}

// kindName describes a Go type for a "want …" message.
func kindName(t reflect.Type) string {
	if t == durationType {
		return "a duration such as \"900s\""
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice:
		return "a list"
	default:
		return t.String()
	}
}

package occ_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/openclaw/occ/api"
	"github.com/openclaw/occ/internal/occ"
)

// prefixes are every ID prefix of CONTRACT.md §1.
var prefixes = []occ.Prefix{occ.PrefixInstallation, occ.PrefixNamespace, occ.PrefixConfiguration, occ.PrefixSecret,
	occ.PrefixServiceAccount, occ.PrefixCredentialSource, occ.PrefixPreset, occ.PrefixAgent, occ.PrefixRevision,
	occ.PrefixPrincipal, occ.PrefixServicePrincipal, occ.PrefixServiceKey, occ.PrefixRole, occ.PrefixBinding,
	occ.PrefixRestriction, occ.PrefixAudit, occ.PrefixRequest, occ.PrefixSession}

// uuidV4 is the document's statement of a typed ID's UUID part.
const uuidV4 = `[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`

// idPatterns returns, per prefix, the pattern api/openapi.yaml writes for
// its IDs ("^ns_<uuid>$"), or the same form for a prefix the document
// never takes as input (ins, aud, req, ses).
func idPatterns(t testing.TB) map[occ.Prefix]*regexp.Regexp {
	inDoc := regexp.MustCompile(`\^([a-z]+)_` + regexp.QuoteMeta(uuidV4) + `\$`)
	found := map[occ.Prefix]bool{}
	for _, m := range inDoc.FindAllStringSubmatch(string(api.OpenAPIYAML), -1) {
		found[occ.Prefix(m[1])] = true
	}
	if len(found) < 14 {
		t.Fatalf("the document writes ID patterns for %d prefixes; the pattern form changed", len(found))
	}
	out := map[occ.Prefix]*regexp.Regexp{}
	for _, p := range prefixes {
		out[p] = regexp.MustCompile(`^` + string(p) + `_` + uuidV4 + `$`)
		delete(found, p)
	}
	for p := range found {
		t.Fatalf("the document has IDs with prefix %q that occ does not know", p)
	}
	return out
}

// FuzzIDs checks the ID and permission parsers: ValidID agrees with the
// document's pattern for every prefix (so a path ID the API admits is one
// occ calls valid, and the other way round), ValidUUIDv4 with the UUID
// part; a valid ID is its prefix, "_" and a UUID, and PrefixOf splits any
// text at its first "_". A permission parses exactly when it is
// "<kind>:<action>" of the contract's vocabularies, and formats back to
// the same text.
func FuzzIDs(f *testing.F) {
	for _, p := range prefixes {
		f.Add(occ.NewID(p))
	}
	for _, s := range []string{"", "_", "ns_", "ns", "ns_" + strings.ToUpper(occ.NewUUID()), "ns__" + occ.NewUUID(),
		"ns_00000000-0000-1000-8000-000000000000", "ns_00000000-0000-4000-c000-000000000000", "ns_00000000000040008000000000000000",
		"ns_00000000-0000-4000-8000-000000000000\n", " ns_00000000-0000-4000-8000-000000000000", "x_y_z", "ns_ns_",
		"namespace:read", "agent:read_logs", "agent:", ":read", "agent:read:x", "Agent:read", "agent:Read", "secret:operate ",
		"installation:administer", "namespace:use", "agent_revision:read", "ns_00000000-0000-4000-8000-00000000000é"} {
		f.Add(s)
	}
	patterns := idPatterns(f)
	uuid := regexp.MustCompile(`^` + uuidV4 + `$`)
	permission := regexp.MustCompile(`^(installation|namespace|configuration|preset|service_account|secret|agent|agent_revision|credential_source):` +
		`(create|read|update|delete|deploy|operate|administer|read_logs|use)$`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := occ.ValidUUIDv4(s), uuid.MatchString(s); got != want {
			t.Fatalf("ValidUUIDv4(%q) = %v, want %v", s, got, want)
		}
		for p, re := range patterns {
			ok := occ.ValidID(p, s)
			if want := re.MatchString(s); ok != want {
				t.Fatalf("ValidID(%s, %q) = %v, want %v", p, s, ok, want)
			}
			if ok && (occ.PrefixOf(s) != p || !occ.ValidUUIDv4(strings.TrimPrefix(s, string(p)+"_"))) {
				t.Fatalf("valid %s ID %q: PrefixOf = %q", p, s, occ.PrefixOf(s))
			}
		}
		if p := occ.PrefixOf(s); strings.Contains(s, "_") != (p != "" || strings.HasPrefix(s, "_")) ||
			p != "" && (strings.Contains(string(p), "_") || !strings.HasPrefix(s, string(p)+"_")) {
			t.Fatalf("PrefixOf(%q) = %q, want the text before the first _", s, p)
		}
		perm, err := occ.ParsePermission(s)
		if (err == nil) != permission.MatchString(s) {
			t.Fatalf("ParsePermission(%q) = %v, %v; want accepted %v", s, perm, err, permission.MatchString(s))
		}
		if err == nil && perm.String() != s {
			t.Fatalf("ParsePermission(%q) formats back as %q", s, perm.String())
		}
	})
}

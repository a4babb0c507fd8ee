package occ

import (
	"crypto/rand"
	"fmt"
	"strings"
)

// Prefix is the typed prefix of a server-generated ID.
type Prefix string

// ID prefixes (CONTRACT.md §1).
const (
	PrefixInstallation     Prefix = "ins"
	PrefixNamespace        Prefix = "ns"
	PrefixConfiguration    Prefix = "cfg"
	PrefixSecret           Prefix = "sec"
	PrefixServiceAccount   Prefix = "sa"
	PrefixCredentialSource Prefix = "cs"
	PrefixPreset           Prefix = "pre"
	PrefixAgent            Prefix = "agt"
	PrefixRevision         Prefix = "rev"
	PrefixPrincipal        Prefix = "prn"
	PrefixServicePrincipal Prefix = "spn"
	PrefixServiceKey       Prefix = "key"
	PrefixRole             Prefix = "role"
	PrefixBinding          Prefix = "bnd"
	PrefixRestriction      Prefix = "rst"
	PrefixAudit            Prefix = "aud"
	PrefixRequest          Prefix = "req"
	PrefixSession          Prefix = "ses"
)

// NewUUID returns a random lowercase UUIDv4.
func NewUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // cannot happen on Linux
	}
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// NewID returns "<prefix>_<uuidv4>".
func NewID(p Prefix) string { return string(p) + "_" + NewUUID() }

// ValidID reports whether s is "<p>_<lowercase uuidv4>".
func ValidID(p Prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, string(p)+"_")
	return ok && ValidUUIDv4(rest)
}

// ValidUUIDv4 reports whether s is a lowercase canonical UUID of version 4.
func ValidUUIDv4(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return s[14] == '4' && strings.IndexByte("89ab", s[19]) >= 0
}

// PrefixOf returns the prefix of an ID, or "" when it has none.
func PrefixOf(id string) Prefix {
	p, _, ok := strings.Cut(id, "_")
	if !ok {
		return ""
	}
	return Prefix(p)
}

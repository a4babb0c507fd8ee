package iam

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"regexp"
)

// ServiceKeyPattern is the form of a service key: occ_ then at least 32
// characters of [A-Za-z0-9_].
var ServiceKeyPattern = regexp.MustCompile(`^occ_[A-Za-z0-9_]{32,}$`)

// lookupLen is how many characters after "occ_" index a key. They are not
// secret: the rest of the key (at least 20 characters more) carries the
// strength, and the digest is compared in constant time.
const lookupLen = 12

// NewServiceKey returns a fresh random key (occ_ + 48 hex characters).
func NewServiceKey() string { return "occ_" + randomHex(24) }

// NewSessionToken returns a fresh random session token.
func NewSessionToken() string { return "occs_" + randomHex(32) }

// KeyLookup returns the non-secret lookup prefix of a well-formed key.
func KeyLookup(key string) string { return key[4 : 4+lookupLen] }

// Digest returns the hex SHA-256 of a key or token, the form stored.
func Digest(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// DigestEqual compares two hex digests in constant time.
func DigestEqual(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// dummyDigest is compared against when no key matches a lookup, so an
// unknown prefix costs the same one comparison.
var dummyDigest = Digest("occ_no_such_key_no_such_key_no_such_key")

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b)
}

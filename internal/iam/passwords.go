package iam

import (
	"github.com/alexedwards/argon2id"
)

// passwordParams are argon2id settings: 64 MiB, one pass, two lanes (the
// RFC 9106 second recommended option scaled to this machine class).
var passwordParams = &argon2id.Params{Memory: 64 * 1024, Iterations: 1, Parallelism: 2, SaltLength: 16, KeyLength: 32}

// HashPassword returns the encoded argon2id hash of a password.
func HashPassword(password string) (string, error) {
	return argon2id.CreateHash(password, passwordParams)
}

// dummyHash is checked when no account matches, so a wrong email costs as
// much as a wrong password. It is a constant (an argon2id hash of a
// throwaway password under passwordParams; a test holds the two together)
// rather than computed at start: hashing it held 64 MiB in every process
// that never signs anyone in.
const dummyHash = "$argon2id$v=19$m=65536,t=1,p=2$8nq6p69DTshT/NNSz2KG2g$27jd7ZdRVE3qVkf5jnaB8wsEGuAsOvhN62z75gIXZmo"

// CheckPassword reports whether password matches hash (constant time inside
// argon2id); an empty hash is checked against a dummy and never matches.
func CheckPassword(password, hash string) bool {
	if hash == "" {
		_, _ = argon2id.ComparePasswordAndHash(password, dummyHash)
		return false
	}
	ok, err := argon2id.ComparePasswordAndHash(password, hash)
	return err == nil && ok
}

package iam

import (
	"testing"

	"github.com/alexedwards/argon2id"
)

// TestDummyHashCostsAsMuchAsAPassword: the hash checked when no account
// matches has the same argon2id settings as every stored password, so a
// wrong email takes as long as a wrong password; and it matches nothing.
func TestDummyHashCostsAsMuchAsAPassword(t *testing.T) {
	t.Parallel()
	params, _, _, err := argon2id.DecodeHash(dummyHash)
	if err != nil {
		t.Fatal(err)
	}
	if *params != *passwordParams {
		t.Errorf("dummy hash settings %+v, passwords use %+v", *params, *passwordParams)
	}
	if CheckPassword("no-such-account-password", "") {
		t.Error("an account without a password hash signed in")
	}
	h, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !CheckPassword("correct horse", h) || CheckPassword("wrong horse", h) {
		t.Error("a stored password hash does not check as it should")
	}
}

package app

import (
	"testing"
	"time"

	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store/storetest"
)

// heldChecks makes a's password checks wait until release is closed; each
// check first says so on the returned channel.
func heldChecks(a *App) (entered <-chan struct{}, release chan struct{}) {
	in := make(chan struct{}, 64)
	release = make(chan struct{})
	a.checkPassword = func(password, hash string) bool {
		in <- struct{}{}
		<-release
		return iam.CheckPassword(password, hash)
	}
	return in, release
}

// signInAsync signs in on its own goroutine; the answer arrives on the
// channel.
func (e *testEnv) signInAsync(email, password, client string) <-chan error {
	out := make(chan error, 1)
	go func() {
		_, err := e.app.SignIn(e.ctx, email, password, client)
		out <- err
	}()
	return out
}

// waitChecks waits (bounded) until n password checks are held.
func waitChecks(t *testing.T, entered <-chan struct{}, n int) {
	t.Helper()
	for range n {
		select {
		case <-entered:
		case <-time.After(30 * time.Second):
			t.Fatalf("fewer than %d password checks started", n)
		}
	}
}

// wantRefusedUnchecked waits for a sign-in's answer and wants 429
// RATE_LIMITED with a Retry-After, given without checking its password.
func wantRefusedUnchecked(t *testing.T, answer <-chan error, entered <-chan struct{}, why string) *occ.Error {
	t.Helper()
	select {
	case err := <-answer:
		ae := occ.AsError(err)
		if ae == nil || ae.Code != occ.CodeRateLimited || ae.RetryAfter < 1 {
			t.Fatalf("%s = %v, want RATE_LIMITED with Retry-After", why, err)
		}
		return ae
	case <-entered:
		t.Fatalf("%s reached the password check", why)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s got no answer", why)
	}
	return nil
}

// wantAnswers waits for sign-ins' answers and wants each to be code.
func wantAnswers(t *testing.T, answers []<-chan error, code occ.Code) {
	t.Helper()
	for _, ch := range answers {
		if err := <-ch; occ.CodeOf(err) != code {
			t.Fatalf("sign-in = %v, want %s", err, code)
		}
	}
}

// TestSignInChargedBeforeHashing: attempts are charged before their
// password is checked, so with three wrong ones being checked at once (the
// per-account-and-client limit) a fourth from the same address is refused
// without a check, even with the right password; the owner at another
// address signs in.
func TestSignInChargedBeforeHashing(t *testing.T) {
	e := newTestEnv(t, storetest.Migrated(t, "sqlite"), Options{SignInFailuresPerAccount: 3, SignInConcurrency: 8})
	entered, release := heldChecks(e.app)
	var wrong []<-chan error
	for range 3 {
		wrong = append(wrong, e.signInAsync(testAdminEmail, "wrong password", "198.51.100.7"))
	}
	waitChecks(t, entered, 3)
	wantRefusedUnchecked(t, e.signInAsync(testAdminEmail, testAdminPassword, "198.51.100.7"), entered, "a fourth sign-in from the address")
	close(release)
	wantAnswers(t, wrong, occ.CodeUnauthenticated)
	if _, err := e.app.SignIn(e.ctx, testAdminEmail, testAdminPassword, "203.0.113.9"); err != nil {
		t.Fatalf("the owner from another address: %v", err)
	}
}

// TestSignInHashSlots: with every password-check slot busy, a sign-in is
// refused with 429 and Retry-After 1 without a check, and so is creating a
// human with a password; neither counts as a failure, so both succeed once
// the slots are free.
func TestSignInHashSlots(t *testing.T) {
	e := newTestEnv(t, storetest.Migrated(t, "sqlite"), Options{SignInFailuresPerAccount: 1, SignInConcurrency: 2})
	e.app.hashes.wait = 10 * time.Millisecond
	entered, release := heldChecks(e.app)
	busy := []<-chan error{
		e.signInAsync("nobody@occ.test", "wrong password", "198.51.100.1"),
		e.signInAsync("nobody@occ.test", "wrong password", "198.51.100.2"),
	}
	waitChecks(t, entered, 2)
	ae := wantRefusedUnchecked(t, e.signInAsync(testAdminEmail, testAdminPassword, "198.51.100.3"), entered, "a sign-in with no free slot")
	if ae.RetryAfter != 1 || ae.Message != occ.MsgPasswordChecksBusy {
		t.Fatalf("refusal = %+v, want Retry-After 1 and the busy message", ae)
	}
	if _, err := e.app.CreateHuman(e.ctx, e.admin, "new@occ.test", "New", "a long enough password"); occ.CodeOf(err) != occ.CodeRateLimited {
		t.Fatalf("creating a human with no free slot = %v, want RATE_LIMITED", err)
	}
	close(release)
	wantAnswers(t, busy, occ.CodeUnauthenticated)
	if _, err := e.app.SignIn(e.ctx, testAdminEmail, testAdminPassword, "198.51.100.3"); err != nil {
		t.Fatalf("the refused sign-in again, slots free: %v", err)
	}
	if _, err := e.app.CreateHuman(e.ctx, e.admin, "new@occ.test", "New", "a long enough password"); err != nil {
		t.Fatalf("creating a human, slots free: %v", err)
	}
}

// TestSignInLimits: failures count per account and client address, and
// per address. A stranger's wrong guesses lock the account for the
// stranger's address only; too many failures from one address, whatever
// the accounts, lock that address only. A success is not counted.
func TestSignInLimits(t *testing.T) {
	e := newTestEnv(t, storetest.Migrated(t, "sqlite"), Options{})
	checks := 0
	e.app.checkPassword = func(password, hash string) bool { checks++; return hash != "" && password == testAdminPassword }
	const stranger, owner, other = "198.51.100.7", "203.0.113.9", "192.0.2.1"
	signIn := func(email, password, client string) error {
		_, err := e.app.SignIn(e.ctx, email, password, client)
		return err
	}
	for range 20 { // the owner's own successes are never counted
		if err := signIn(testAdminEmail, testAdminPassword, owner); err != nil {
			t.Fatalf("owner: %v", err)
		}
	}
	for i := range 10 {
		if err := signIn(testAdminEmail, "wrong password", stranger); occ.CodeOf(err) != occ.CodeUnauthenticated {
			t.Fatalf("wrong guess %d = %v", i, err)
		}
	}
	if err := signIn(testAdminEmail, testAdminPassword, stranger); occ.CodeOf(err) != occ.CodeRateLimited {
		t.Fatalf("right password from the stranger's address after 10 failures = %v, want RATE_LIMITED", err)
	}
	if err := signIn(testAdminEmail, testAdminPassword, owner); err != nil {
		t.Fatalf("the owner from the owner's address: %v", err)
	}
	for i := range 10 { // other accounts from the stranger's address, up to its limit of 20
		if err := signIn("nobody@occ.test", "wrong password", stranger); occ.CodeOf(err) != occ.CodeUnauthenticated {
			t.Fatalf("wrong sign-in %d to another account = %v", i, err)
		}
	}
	before := checks
	if err := signIn("someone@occ.test", "wrong password", stranger); occ.CodeOf(err) != occ.CodeRateLimited || checks != before {
		t.Fatalf("21st failure from one address = %v (%d checks), want RATE_LIMITED unchecked", err, checks-before)
	}
	if err := signIn("someone@occ.test", "wrong password", other); occ.CodeOf(err) != occ.CodeUnauthenticated {
		t.Fatalf("the same account from another address = %v", err)
	}
}

// TestSignInUnknownEmail: an unknown email is answered like a wrong
// password, after the same one password check, so neither the answer nor
// the work done tells whether the account exists.
func TestSignInUnknownEmail(t *testing.T) {
	e := newTestEnv(t, storetest.Migrated(t, "sqlite"), Options{})
	var hashes []string
	e.app.checkPassword = func(password, hash string) bool {
		hashes = append(hashes, hash)
		return iam.CheckPassword(password, hash)
	}
	_, known := e.app.SignIn(e.ctx, testAdminEmail, "wrong password", "192.0.2.1")
	_, unknown := e.app.SignIn(e.ctx, "nobody@occ.test", "wrong password", "192.0.2.1")
	if known == nil || known.Error() != unknown.Error() {
		t.Fatalf("known email: %v; unknown email: %v; want the same answer", known, unknown)
	}
	if len(hashes) != 2 || hashes[0] == "" || hashes[1] != "" {
		t.Fatalf("password checks = %q, want one against the account's hash, then one against none (the dummy)", hashes)
	}
}

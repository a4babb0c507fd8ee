// Package computetest is the single statement of what a Compute Driver
// must do, and the test doubles built on that statement.
//
//   - Run is the conformance suite: every obligation of compute.Driver as a
//     subtest, selected by the capabilities the driver declares. A driver
//     package calls it once, from a test whose name contains
//     "Conformance", with a factory of fresh Harnesses.
//   - Faulty wraps any driver and injects failures before or after each
//     call, for tests of retries, exhaustion, permanent errors and
//     outcome-unknown calls.
//   - Fake is an in-memory driver that honours the whole contract (it
//     passes Run) with switches for worker tests.
//
// docs/DEVELOPMENT.md ("Writing a compute driver") says how to use them.
package computetest

// Package storetest is the conformance suite for kv.Backend
// implementations, in the way net/http/httptest serves HTTP code: public,
// documented, and meant to be run from a backend's own tests.
//
// Run checks every point of the Backend contract as subtests: Get, List
// (key order, prefixes, pagination and revision pinning, ErrInvalid for a
// Continue outside the prefix), Txn (conds on the written key and on other
// keys such as a leadership fence, the index of the
// failing cond, nothing written on failure, exactly one revision per write,
// the 1 MiB value limit), Watch (strictly after fromRevision, from 0 a
// replay from revision 1 rather than "from now", no gap between a List and
// a Watch from its Revision even on a fresh store, revision order,
// prefixes, Prev, progress notifications, ErrExpired for compacted history,
// closing on cancellation) and concurrency (compare-and-swap increments that
// must lose nothing; writers and watchers at once, where every watcher sees
// every revision exactly once, in order). Run it with -race.
//
// A backend that can discard history on demand implements Compactor; the
// suite then also checks that expired history gives store.ErrExpired. Other
// backends skip those subtests. A backend that can be closed (an
// io.Closer) is checked to end its watches on Close with a final event
// wrapping kv.ErrClosed, to fail every call after Close with an error
// wrapping kv.ErrClosed, and to take concurrent and repeated Closes; other
// backends skip those subtests too.
//
// The suite makes no assumption about the backend beyond the contract: it
// never expects a particular starting revision, only that nothing else
// writes to the key space newBackend hands a subtest while it runs. Waits for
// watch events are bounded by WaitTimeout, to fail a hung backend rather than
// hang the test binary.
package storetest

// Package pgstore runs steady on PostgreSQL, for teams whose desired state
// already lives there.
//
// Backend implements kv.Backend in one schema of a database: a table of
// the current value of each key, read by key by Get, List and the conds; a
// log of revisions in the manner of kine (each row a write: key, value,
// create revision and the key's previous row), which watches and Lists at a
// past revision read; and a one-row table holding the store revision. Every
// write is one call of a PL/pgSQL function that advances the revision
// (taking its row lock), checks the conds, writes the current value,
// appends the log row and NOTIFYs, in one round trip; the row lock makes
// writes commit one at a time, in revision order, which a sequence would
// not (concurrent transactions commit in another order than they draw
// numbers, and a watch reading past the gap would skip the late one).
//
// A schema written by an older pgstore (the log alone) is migrated by New,
// in place and in one transaction, with nothing lost; processes of the
// older version that are still running can read it and go on writing
// through a compatible function, and an older process that starts after
// the migration fails in its New instead of writing behind the current
// values' back.
//
// Watch reads the log by revision. LISTEN/NOTIFY only wakes it; the read
// after a wake-up, a poll, or a reconnect of the listening connection is
// what delivers events, so a lost notification delays an event and never
// drops it, and a watch resumes with no gap after a lost connection or a
// restart of the server. A receiver that stops reading holds at most two
// batches of events in memory (WithWatchBuffer). The log keeps the last
// 10,000 writes (WithHistorySize; Compact discards more); a List pinned
// below them, or a Watch from before them, get store.ErrExpired.
//
// Behind a pooler in transaction mode (PgBouncer), LISTEN does not reach
// the watches: they still see every change, at the poll interval
// (WithPollInterval, 2s) instead of at once.
//
// Cost. A write is one round trip: one call of a PL/pgSQL function that
// runs three statements (revision, kv, log) and a NOTIFY. On the server it
// costs about 2.4 times a hand-written UPDATE ... WHERE rev = $1 of one
// row (177k instructions against 75k; 205k with a Writer's fence), most
// of it PostgreSQL starting and stopping each statement rather than
// writing tables, and no layout measured does better: not kine's log
// alone, nor a revision drawn without the revision row (see the schema's
// comment in backend.go, and testdata/instr). On loopback, where the round
// trip itself is short, and on a server whose commits do not wait for the
// disk (fsync=off, or synchronous_commit=off), a typed Update takes 1.5 to
// 2.2 times that UPDATE's time (BenchmarkUpdate: 1.60 and 1.50 on an idle
// machine, where each round trip also waits for a core to wake; 2.1 to 2.2
// at load 6 to 11); over a
// network the difference stays the same few tens of microseconds per
// write, a smaller share of a longer round trip. On a server with
// PostgreSQL's default durability each commit, the UPDATE's as well,
// waits for its log to be flushed to the disk, and the flush (milliseconds
// on a virtual disk) dominates both: there a typed Update took 1.13 times
// the UPDATE's time at load 6 to 11 (medians, 3.97ms against 3.52ms; 0.98
// to 1.23 times in each run, as the flush's time varies) and 1.16 times on
// an idle machine (271µs against 233µs; 1.20 with a fence; see
// BenchmarkUpdate).
//
// Errors. A write whose connection is lost before its answer arrives, and
// every failure to reach the server, wraps store.ErrUnavailable: the write
// may have committed, as on etcd (see store.ErrUnavailable for how to
// retry). Leader election and fencing need nothing of their own: the
// fence is a cond of the same Txn, so store/lease's StoreElector works on a
// Backend as on any other.
//
// Close ends a Backend's watches, each with a last event wrapping
// store.ErrClosed, waits for their goroutines, and makes every later call
// fail with store.ErrClosed; it leaves the pool, which is the caller's,
// open. A pool the caller closed is store.ErrClosed too: calls fail with
// it, and watches end with it rather than wait for a pool that will not
// come back.
//
// Package pgtest starts a throwaway server (initdb into a temporary
// directory) for tests, as this package's own tests do: every storetest
// suite, 8 concurrent writers against watches, killed connections, and a
// kill and restart of the server in the middle of a write storm.
//
// This is a separate Go module so that users of the root module do not
// inherit pgx.
package pgstore

// Package memstore is steady's embedded default kv.Backend: an in-memory,
// versioned key-value space for single-process deployments, tests and the
// fault-injection harness.
//
// A Store keeps the live keys in a map (for Get) and a key-ordered index
// (for List), with one store-wide revision that every write advances by one,
// starting from 1. A bounded ring of the latest events (WithHistorySize: by
// default DefaultHistorySize, growing with the keys and while a watch lags)
// lets a watch resume from a past revision and lets every page of a
// paginated List reflect the revision of its first page: a pinned page is
// the current state with the writes since its revision undone, so listing
// costs no copy of the data set. Revisions older than the ring, or removed
// with Compact, give store.ErrExpired. The ring holds its values in full up
// to WithHistoryBytes (16 MiB by default) and keeps older ones as deltas
// against the key's next value past that, so a controller-sized history
// costs a write no encoding and a large one keeps about one value per key.
//
// Writers never wait for watchers. Each watch reads its events out of the
// ring at its receiver's pace; a receiver that falls WithHistorySize writes
// behind gets a final ErrExpired event and relists. Watches end, and their
// goroutines exit, when their ctx does. A Store holds nothing else (no
// file, no connection, no goroutine of its own), so it has no Close: it is
// not an io.Closer, and store/storetest's Close subtests skip it. Drop it
// once its watches' ctxs have ended.
//
// Stats counts calls (Gets, Lists, Txns, Watches), so tests can show how many
// store reads a reconcile pass costs. memstore passes store/storetest.
package memstore

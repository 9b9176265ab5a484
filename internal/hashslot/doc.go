// Package hashslot is the slot array of an open-addressing hash table
// with linear probing, shared by the project's tables of keys (the work
// queue's, the reconcile Loop's names and oscillation detectors, the
// store's memory of values). Each slot holds 32 bits of a key's hash
// beside a reference to where the key lives (a node's number, a place in
// a list); 0 is an empty slot. The hash in the slot lets a probe skip
// most keys that do not match without reading them, and lets the array
// grow without hashing any key again:
// at a million keys a Go map's growth rereads every key it moves, a
// cache miss each. A removal shifts the later slots of its probe run
// back, so the array never holds tombstones.
//
// A table's slot count is a power of two; the caller keeps at least one
// slot empty (it grows at 3/4 full), so that every probe run ends. The
// caller probes itself, from Home, comparing keys where Hash matches.
package hashslot

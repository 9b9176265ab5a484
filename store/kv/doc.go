// Package kv is the contract between the typed store and a storage engine:
// a versioned key-value space with one store-wide, monotonic revision
// (Backend), its raw keys and values (KeyValue), a paginated List, a
// conditional single-key Txn (Cond, Write) and a Watch of Events.
//
// Controllers do not need it beyond passing a Backend to store.New: they use
// package store's typed API. Engines implement Backend (store/memstore,
// store/boltstore, store/etcdstore, store/pgstore, or a user's own) and run
// store/storetest to check that they keep the contract; CheckTxn gives every
// engine the same refusals of bad input.
//
// The sentinel errors a Backend returns (ErrNotFound, ErrExpired,
// ErrTooLarge, ErrInvalid, ErrUnavailable) are the same values as package
// store's, so errors.Is(err, store.ErrNotFound) holds for a Backend's error
// too. ErrCondFailed and *CondFailedError, a failed Txn precondition, are
// the contract's alone: the typed Store turns them into store.ErrConflict or
// store.ErrFenced.
package kv

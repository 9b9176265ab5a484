package store

import (
	"github.com/steady-go/steady/store/kv"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MigrateOptions refines Migrate.
type MigrateOptions struct {
	// PerSecond bounds the values rewritten per second (0: no bound), so a
	// migration beside running controllers does not crowd out their
	// writes. Reads are not counted. The wait uses the Store's clock.
	PerSecond float64
	// PageSize is the number of keys read per Backend.List (default 100).
	// The checkpoint is written after each page.
	PageSize int
	// Progress, when set, is called after each page and at the end with
	// the counts so far.
	Progress func(MigrateProgress)
	// DryRun, when set, makes the run a dry one: it writes nothing (no
	// value, no checkpoint, nor the checkpoint's removal), goes through
	// every key from the first whatever a checkpoint says, and calls
	// DryRun with the name and the stored version of each value it would
	// rewrite. The counts are those of a run (Migrated: the values it
	// would rewrite); PerSecond paces nothing, as nothing is written.
	DryRun func(name, version string)
}

// MigrateProgress counts what a Migrate did.
type MigrateProgress struct {
	// Scanned counts the values read, Migrated those rewritten at the
	// storage version, Current those already at it, Undecodable those
	// left alone because they do not decode (a *DecodeError, such as a
	// version this program does not know), and Retried the rewrites that
	// found the value written meanwhile and read it again.
	Scanned, Migrated, Current, Undecodable, Retried int
	// Resumed is the name after which this run started, from the
	// checkpoint of a run that stopped ("" for a fresh start).
	Resumed string
	// Done is set in the last report of a run that went through every key.
	Done bool
}

// migrateCheckpoint is the stored position of a migration that has not
// finished.
type migrateCheckpoint struct {
	Storage string `json:"storage"`
	After   string `json:"after"`
}

// checkpointKey is where a migration of the Store's kind keeps its
// position: under "_", outside every Store's key space.
func (s *Store[S, T]) checkpointKey() string {
	return "_migrations/" + strings.TrimSuffix(s.prefix, "/")
}

// Migrate rewrites every value of the Store's kind that is not at the
// storage version (see Versions) at the storage version, and reports what it
// did. Values keep their Meta (Generation, LastWrite and ownership do not
// move: the object did not change), and fields the storage version cannot
// hold are preserved as on any write.
//
// It is safe beside running controllers: each rewrite is conditional on the
// revision it read (and on ctx's fence, see WithFence), so a value written
// meanwhile is read again, never overwritten; a value already at the
// storage version is left alone, so a rerun rewrites nothing twice. It is
// resumable: the name of the last key of each page is checkpointed in the
// Backend (under "_migrations/"), and a run that finds a checkpoint of the
// same storage version starts after it; a finished run deletes it. Run it
// once every program writing the kind stores the new storage version, or
// values they write at the old one behind it stay there (a later run finds
// them).
//
// Values that do not decode (*DecodeError) are counted and left alone; one
// never stops the rest. It returns ctx's error when ctx ends (rerun to go
// on), ErrInvalid for a kind without versions, and the Backend's errors.
func (s *Store[S, T]) Migrate(ctx context.Context, opts MigrateOptions) (MigrateProgress, error) {
	var p MigrateProgress
	if s.ver == nil {
		return p, fmt.Errorf("%w: Migrate of kind %s, which has no versions (see WithVersion)", ErrInvalid, s.kind)
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 100
	}
	report := func() {
		if opts.Progress != nil {
			opts.Progress(p)
		}
	}
	dry := opts.DryRun != nil
	after, err := s.readCheckpoint(ctx, dry)
	if err != nil {
		return p, err
	}
	p.Resumed = after
	var next time.Time // the earliest time of the next rewrite
	cont := ""
	if after != "" {
		cont = s.prefix + after
	}
	for {
		page, err := s.b.List(ctx, s.prefix, kv.ListOptions{Limit: opts.PageSize, Continue: cont})
		if err != nil {
			return p, err
		}
		if err := s.migratePage(ctx, page.KVs, &p, opts, &next); err != nil {
			return p, err
		}
		if page.Continue == "" {
			break
		}
		cont = page.Continue
		if name, ok := strings.CutPrefix(cont, s.prefix); ok {
			if err := s.writeCheckpoint(ctx, name, dry); err != nil {
				return p, err
			}
		}
		report()
	}
	if err := s.deleteCheckpoint(ctx, dry); err != nil {
		return p, err
	}
	p.Done = true
	report()
	return p, nil
}

// migratePage migrates the objects of one page of the kind's keys, counting
// them in p.
func (s *Store[S, T]) migratePage(ctx context.Context, kvs []kv.KeyValue, p *MigrateProgress, opts MigrateOptions, next *time.Time) error {
	for _, cur := range kvs {
		if _, ok := s.nameOf(cur.Key); !ok {
			continue
		}
		p.Scanned++
		migrated, err := s.migrateOne(ctx, cur, p, opts, next)
		if err != nil {
			return err
		}
		if migrated {
			p.Migrated++
		}
	}
	return nil
}

// migrateOne rewrites cur at the storage version unless it is there, pacing
// rewrites to opts.PerSecond with next, and reports whether it wrote (in a
// dry run: whether it would, which it reports to opts.DryRun).
func (s *Store[S, T]) migrateOne(ctx context.Context, cur kv.KeyValue, p *MigrateProgress, opts MigrateOptions, next *time.Time) (bool, error) {
	for range maxAttempts {
		d := s.metaDecoder(cur.Key, nil)
		raw, err := decodeRaw(cur, d)
		if err == nil {
			err = s.checkIdentity(d.name, &raw.Meta)
		}
		var out *rawObject
		if err == nil {
			out, err = s.atStorage(raw)
		}
		switch {
		case err != nil: // what Get reports as a *DecodeError
			p.Undecodable++
			return false, nil
		case out == nil:
			p.Current++
			return false, nil
		}
		if opts.DryRun != nil {
			name, _ := s.nameOf(cur.Key)
			version := raw.Version
			if version == "" {
				version = s.ver.first
			}
			opts.DryRun(name, version)
			return true, nil
		}
		if err := s.pace(ctx, opts.PerSecond, next); err != nil {
			return false, err
		}
		val, err := out.encode()
		if err != nil {
			return false, err
		}
		w := Writer[S, T]{s: s}
		_, err = w.txn(ctx, kv.Cond{Key: cur.Key, Target: kv.ModRevision, Revision: cur.ModRevision}, kv.Write{Kind: kv.WritePut, Key: cur.Key, Value: val})
		if _, ok := ownCondFailure(err); !ok {
			return err == nil, err
		}
		// Written (or deleted) meanwhile: read it again.
		p.Retried++
		if cur, err = s.b.Get(ctx, cur.Key); errors.Is(err, ErrNotFound) {
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
	return false, fmt.Errorf("%w: migrating %q: gave up after %d concurrent writes", ErrConflict, cur.Key, maxAttempts)
}

// atStorage returns raw, as stored, at the storage version, or nil when it
// is there already.
func (s *Store[S, T]) atStorage(raw *rawObject) (*rawObject, error) {
	v, err := s.versionOf(raw.Version)
	if err != nil {
		return nil, err
	}
	storage := s.ver.storage
	if v == storage {
		return nil, nil // a value with no version at the first is current too
	}
	hub, err := hubOf(nil, v, raw.Spec, raw.Status, raw.Preserved)
	if err != nil {
		return nil, err
	}
	back, spec, status, err := storage.roundTrip(hub)
	if err != nil {
		return nil, err
	}
	out := *raw
	out.Meta.Revision = 0
	out.Version = storage.name
	if out.Spec, err = json.Marshal(addressable(spec)); err != nil {
		return nil, err
	}
	if out.Status, err = json.Marshal(addressable(status)); err != nil {
		return nil, err
	}
	if out.Preserved, err = preservedOf(storage, hub, back); err != nil {
		return nil, err
	}
	out.Meta.Managed = s.convertManaged(&raw.Meta, v, storage, raw, &out, nil)
	return &out, nil
}

// pace waits until next, then sets it one interval of perSecond later.
func (s *Store[S, T]) pace(ctx context.Context, perSecond float64, next *time.Time) error {
	if perSecond <= 0 {
		return nil
	}
	now := s.clock.Now()
	if wait := next.Sub(now); wait > 0 {
		t := s.clock.NewTimer(wait)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		now = *next
	}
	*next = now.Add(time.Duration(float64(time.Second) / perSecond))
	return nil
}

// readCheckpoint returns the name a run resumes after: "" for a dry one,
// which goes through every key.
func (s *Store[S, T]) readCheckpoint(ctx context.Context, dry bool) (string, error) {
	if dry {
		return "", nil
	}
	cur, err := s.b.Get(ctx, s.checkpointKey())
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var c migrateCheckpoint
	if json.Unmarshal(cur.Value, &c) != nil || c.Storage != s.ver.storage.name {
		return "", nil // another migration's, or unreadable: start afresh
	}
	return c.After, nil
}

// writeCheckpoint and deleteCheckpoint write nothing in a dry run.
func (s *Store[S, T]) writeCheckpoint(ctx context.Context, after string, dry bool) error {
	if dry {
		return nil
	}
	val, err := json.Marshal(migrateCheckpoint{Storage: s.ver.storage.name, After: after})
	if err != nil {
		return err
	}
	_, err = s.b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: s.checkpointKey(), Value: val})
	return err
}

func (s *Store[S, T]) deleteCheckpoint(ctx context.Context, dry bool) error {
	if dry {
		return nil
	}
	_, err := s.b.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: s.checkpointKey()})
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

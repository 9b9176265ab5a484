package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/steady-go/steady/internal/wrote"
	"github.com/steady-go/steady/store/kv"
)

// DryRunResult is what one write would have done. A write made with the
// DryRun option, or with a ctx from WithDryRun, runs every step of the real
// write (reads, preconditions, field-ownership merge, the fence) except the
// backend's Txn, and reports here instead: Kubernetes' dryRun=All.
type DryRunResult struct {
	// Kind and Name name the object; Manager is the Writer's manager.
	Kind, Name, Manager string
	// Op is the call: "Create", "Update", "UpdateStatus", "Apply",
	// "ApplyStatus", "Delete" or "Purge".
	Op string
	// Write is true when the write would have stored something: false
	// when it would change nothing, or failed (see Err).
	Write bool
	// Deleted is true when the write would have removed the object (a
	// Delete without finalizers, or the removal of the last finalizer of
	// an object whose deletion was requested).
	Deleted bool
	// Meta is the metadata that would have been stored, for a Write that
	// stores an object: Meta.Managed is the field ownership after the
	// write (the field-ownership result), Meta.LastWrite its stamp, and
	// Meta.Revision the object's current revision (0 for a new one).
	Meta Meta
	// Object is the value that would have been stored, as JSON with the
	// keys metadata, spec, status and conditions: json.Unmarshal it into
	// an *Object[S, T]. nil when nothing would be stored.
	Object []byte
	// Err is the error the write returned: a *ownership.ConflictError
	// (errors.As) lists the field-ownership conflicts of an apply without
	// Force; ErrConflict a failed revision, generation or UID
	// precondition; ErrFenced a fence that no longer holds; nil when the
	// write would have succeeded.
	Err error
}

// DryRun makes one write a dry run: it writes nothing, returns what the
// real write would have returned (obj, where the call takes one, gets the
// Meta that would have been stored; the revision returned is the object's
// current one, 0 for a Create), and fills *into with the result (when into
// is not nil). Create, Update, UpdateStatus, Apply, ApplyStatus, Delete
// and Purge take it (Store.Migrate has MigrateOptions.DryRun). A failed precondition, a fence that no longer holds or a field
// conflict fail the dry run as they would fail the write, and are in
// into.Err too. A dry run is not reported to WithWriteObserver's observers
// and leaves the Store's memory of values (WithLastValues) as it was.
func DryRun(into *DryRunResult) WriteOption {
	return func(c *writeConfig) { c.dry, c.dryInto = true, into }
}

// dryOf returns the DryRun among opts. beginDry needs it before the write
// checks its options, so it applies them to a scratch config.
func dryOf(opts []WriteOption) (into *DryRunResult, on bool) {
	if len(opts) == 0 {
		return nil, false // no scratch config to allocate
	}
	var cfg writeConfig
	applyOpts(&cfg, opts)
	return cfg.dryInto, cfg.dry
}

// WithDryRun returns a ctx in which every write through a typed Store is a
// dry run (see DryRun), reported to report when it returns, in the
// writer's goroutine. report must be quick and safe for concurrent use; a
// nil report drops the results. The reconcile Loop's observe-only mode
// puts one in the ctx of each reconcile. Reports chain: when ctx already
// carries one, both are called (the earlier first).
func WithDryRun(ctx context.Context, report func(DryRunResult)) context.Context {
	if report == nil {
		report = func(DryRunResult) {}
	}
	h := wrote.Edit(ctx)
	if prev, ok := h.DryReport.(func(DryRunResult)); ok {
		next := report
		report = func(r DryRunResult) { prev(r); next(r) }
	}
	h.DryReport = report
	return wrote.WithHooks(ctx, h)
}

// dryRun is one dry-run write in progress: the result it fills and where
// it goes when the write returns.
type dryRun struct {
	res    DryRunResult
	into   *DryRunResult
	report func(DryRunResult)
}

// beginDry starts a write: when the option (isDry) or ctx asks for a dry
// run, it returns a ctx that makes the write's Txn a dry one (put and txn
// find it there) and the dryRun to end with endDry.
func beginDry[S, T any](ctx context.Context, w *Writer[S, T], opts []WriteOption, op, name string) (context.Context, *dryRun) {
	into, on := dryOf(opts)
	return startDry(ctx, w, into, on, op, name)
}

// startDry is beginDry for a write that read its options itself: into and
// on are its DryRun's (writeConfig.dryInto and dry).
func startDry[S, T any](ctx context.Context, w *Writer[S, T], into *DryRunResult, on bool, op, name string) (context.Context, *dryRun) {
	h := wrote.HooksOf(ctx)
	report, _ := h.DryReport.(func(DryRunResult))
	if !on && report == nil {
		return ctx, nil
	}
	d := &dryRun{into: into, report: report,
		res: DryRunResult{Kind: w.s.kind, Name: name, Manager: w.manager, Op: op}}
	dh := h.Copy() // not wrote.Edit: h is looked up already
	dh.Dry = d
	return wrote.WithHooks(ctx, dh), d
}

// end hands the result out with the write's error.
func (d *dryRun) end(err error) {
	d.res.Err = err
	if err != nil {
		d.res.Write, d.res.Deleted, d.res.Object, d.res.Meta = false, false, nil, Meta{}
	}
	if d.into != nil {
		*d.into = d.res
	}
	if d.report != nil {
		d.report(d.res)
	}
}

// dryRunOf is the dry run of the write in progress of a ctx whose write
// hooks are h, nil for none.
func dryRunOf(h *wrote.Hooks) *dryRun {
	d, _ := h.Dry.(*dryRun)
	return d
}

// dryTxn is txn's dry run: it checks conds against the backend's current
// values as the backend's Txn would (so a stale read, a lost fence or an
// existing name fail as they would), then records wr instead of writing
// it. It returns the revision the written key has now: what a caller that
// sets obj.Meta.Revision from it keeps consistent with the store.
func (w *Writer[S, T]) dryTxn(ctx context.Context, d *dryRun, conds []kv.Cond, wr kv.Write) (int64, error) {
	if err := kv.CheckTxn(conds, wr); err != nil {
		return 0, err
	}
	var rev int64
	found := false
	for i, c := range conds {
		var mod, create int64
		cur, err := w.s.b.Get(ctx, c.Key)
		switch {
		case err == nil:
			mod, create = cur.ModRevision, cur.CreateRevision
		case !errors.Is(err, ErrNotFound):
			return 0, err
		}
		actual := mod
		if c.Target == kv.CreateRevision {
			actual = create
		}
		if actual != c.Revision {
			return 0, &kv.CondFailedError{Index: i, Cond: c, Actual: actual}
		}
		if c.Key == wr.Key {
			rev, found = mod, mod != 0
		}
	}
	if wr.Kind == kv.WriteDelete {
		if !found {
			return 0, fmt.Errorf("store: txn: delete of %q: %w", wr.Key, ErrNotFound)
		}
		d.res.Write, d.res.Deleted = true, true
		return rev, nil
	}
	d.res.Write, d.res.Object = true, bytes.Clone(wr.Value)
	d.res.Meta.Revision = rev
	return rev, nil
}

// dryMeta records the Meta a dry put would store.
func (d *dryRun) dryMeta(m Meta) {
	d.res.Meta = m
	d.res.Meta.Managed = slices.Clone(m.Managed)
}

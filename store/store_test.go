package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

type (
	typedSpec   struct{ Replicas int }
	typedStatus struct{ Ready int }
	typedObj    = store.Object[typedSpec, typedStatus]
)

func newTypedStore(t *testing.T, b kv.Backend) *store.Store[typedSpec, typedStatus] {
	t.Helper()
	st, err := store.New[typedSpec, typedStatus](b, "Widget")
	require.NoError(t, err)
	return st
}

func TestNewValidatesKindAndBackend(t *testing.T) {
	_, err := store.New[typedSpec, typedStatus](memstore.New(), "a/b")
	var ne *store.InvalidNameError
	require.True(t, errors.As(err, &ne))
	require.Equal(t, "kind", ne.What)
	_, err = store.New[typedSpec, typedStatus](nil, "Widget")
	require.ErrorIs(t, err, store.ErrInvalid)
	type port struct {
		ID struct{ N int } `json:"id"`
	}
	_, err = store.New[struct {
		Ports []port `json:"ports" steady:"keys=id"`
	}, typedStatus](memstore.New(), "Widget")
	require.ErrorIs(t, err, store.ErrInvalid, "a struct-valued key field is refused by New, not at the first Apply")
}

// brokenClock is a clock whose nil pointer panics when read.
type brokenClock struct{ clock.Real }

// A typed nil (a nil *memstore.Store as the Backend, a nil pointer as the
// clock) is refused by New, not found by the first Get or Create.
func TestNewRejectsTypedNils(t *testing.T) {
	var b *memstore.Store
	_, err := store.New[typedSpec, typedStatus](b, "Widget")
	require.ErrorIs(t, err, store.ErrInvalid, "a nil *memstore.Store")
	_, err = store.New[typedSpec, typedStatus](memstore.New(), "Widget", store.WithClock((*brokenClock)(nil)))
	require.ErrorIs(t, err, store.ErrInvalid, "a nil clock pointer")
}

func TestKeyPrefixEndsInSlashAndNeverStartsWithUnderscore(t *testing.T) {
	st, err := store.New[typedSpec, typedStatus](memstore.New(), "App", store.WithKeyPrefix("x"))
	require.NoError(t, err)
	require.Equal(t, "x/App/", st.Prefix(), "a prefix gets its slash, so prefix x and kind App are not kind xApp")
	_, err = store.New[typedSpec, typedStatus](memstore.New(), "App", store.WithKeyPrefix("_leases/"))
	require.ErrorIs(t, err, store.ErrInvalid, "keys starting with _ are reserved for election keys")
}

// A prefix is a path of plain segments: one that would make keys with an
// empty, "." or ".." segment, or with a control character (a NUL cuts a key
// in C clients and some tools, a newline splits a log line), is refused.
func TestKeyPrefixRejectsMalformedPaths(t *testing.T) {
	for _, p := range []string{"a\x00b", "a\nb", "team\r", "a\x7fb", "a//b", "a//", "//", "x/../y", "..", "./x", "x/.", "a/\xffb"} {
		_, err := store.New[typedSpec, typedStatus](memstore.New(), "App", store.WithKeyPrefix(p))
		require.ErrorIs(t, err, store.ErrInvalid, "prefix %q", p)
	}
	for _, p := range []string{"x", "team-a/", "/registry/", "/", "a.b/c..d/", "équipe/"} {
		_, err := store.New[typedSpec, typedStatus](memstore.New(), "App", store.WithKeyPrefix(p))
		require.NoError(t, err, "prefix %q", p)
	}
}

func TestKeyLayoutAndEncoding(t *testing.T) {
	b := memstore.New()
	st, err := store.New[typedSpec, typedStatus](b, "Widget", store.WithKeyPrefix("apps/"))
	require.NoError(t, err)
	st.SetUIDs(func() string { return "uid-1" })
	require.Equal(t, "Widget", st.Kind())
	require.Equal(t, "apps/Widget/", st.Prefix())
	require.Equal(t, "apps/Widget/web", st.Prefix()+"web")

	obj := &typedObj{Meta: store.Meta{Name: "web"}, Spec: typedSpec{Replicas: 2}}
	rev, err := st.As("m").Create(t.Context(), obj)
	require.NoError(t, err)
	require.Equal(t, "uid-1", obj.Meta.UID)

	kv, err := b.Get(t.Context(), "apps/Widget/web")
	require.NoError(t, err)
	require.Equal(t, rev, kv.ModRevision)
	var stored typedObj
	require.NoError(t, json.Unmarshal(kv.Value, &stored))
	require.Zero(t, stored.Meta.Revision, "the revision is not part of the value")
	want := *obj
	want.Meta.Revision = 0
	require.Equal(t, want, stored, "the value is the JSON of the Object")
	meta, _, err := store.DecodeMeta(kv.Value)
	require.NoError(t, err)
	require.Equal(t, want.Meta, meta)
}

func TestCreateIgnoresStoreOwnedMeta(t *testing.T) {
	st := newTypedStore(t, memstore.New())
	obj := &typedObj{Meta: store.Meta{Name: "web", DeletionRequested: true, Generation: 5, Revision: 9,
		LastWrite: store.LastWrite{Manager: "forged", Op: ownership.OpApply}}}
	_, err := st.As("m").Create(t.Context(), obj)
	require.NoError(t, err)
	got, err := st.Get(t.Context(), "web")
	require.NoError(t, err)
	require.False(t, got.Meta.DeletionRequested)
	require.EqualValues(t, 1, got.Meta.Generation)
	require.Equal(t, store.LastWrite{Manager: "m", Op: ownership.OpCreate}, got.Meta.LastWrite)
}

// Spec/status separation under load: status writes based on generation 1
// all land while another actor keeps rewriting the object's labels.
func TestUpdateStatusRidesOverConcurrentMetadataWrites(t *testing.T) {
	ctx := t.Context()
	st := newTypedStore(t, memstore.New())
	_, err := st.As("user").Create(ctx, &typedObj{Meta: store.Meta{Name: "web"}})
	require.NoError(t, err)
	read, err := st.Get(ctx, "web")
	require.NoError(t, err)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var labelWrites int
	wg.Go(func() {
		w := st.As("labeler")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			obj, err := st.Get(ctx, "web")
			if err != nil {
				t.Error(err)
				return
			}
			obj.Meta.Labels = map[string]string{"n": fmt.Sprint(i)}
			if _, err := w.Update(ctx, obj); err == nil {
				labelWrites++
			} else if !errors.Is(err, store.ErrConflict) {
				t.Error(err)
				return
			}
		}
	})
	ctrl := st.As("controller")
	n := 500 / raceScale
	for i := 1; i <= n; i++ {
		read.Status.Ready = i
		_, err := ctrl.UpdateStatus(ctx, read, store.WithGeneration(1))
		require.NoError(t, err, "status write %d", i)
	}
	close(stop)
	wg.Wait()
	got, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, n, got.Status.Ready)
	require.EqualValues(t, 1, got.Meta.Generation)
	t.Logf("%d status writes alongside %d label writes", n, labelWrites)
}

func TestWatchEndsWithErrExpiredWhenHistoryIsGone(t *testing.T) {
	ctx := t.Context()
	st := newTypedStore(t, memstore.New(memstore.WithHistorySize(2)))
	for i := range 5 {
		_, err := st.As("m").Create(ctx, &typedObj{Meta: store.Meta{Name: fmt.Sprintf("w%d", i)}})
		require.NoError(t, err)
	}
	events, err := st.Watch(ctx, 1)
	require.NoError(t, err)
	var last store.Event[typedSpec, typedStatus]
	for ev := range events {
		last = ev
	}
	require.ErrorIs(t, last.Err, store.ErrExpired)
}

// A reader that falls behind gets every event up to the point where the
// backend gave up on it, in order and without a gap, then ErrExpired.
func TestWatchSlowReaderIsExpiredNotTruncated(t *testing.T) {
	ctx := t.Context()
	st := newTypedStore(t, memstore.New(memstore.WithHistorySize(8), memstore.WithWatchBuffer(4)))
	events, err := st.Watch(ctx, 0)
	require.NoError(t, err)
	w := st.As("m")
	var revs, got []int64
	for i := range 200 {
		rev, err := w.Create(ctx, &typedObj{Meta: store.Meta{Name: fmt.Sprintf("w%d", i)}})
		require.NoError(t, err)
		revs = append(revs, rev)
		if i < 3 { // keep up at first, then stop reading
			ev := <-events
			for ev.Progress {
				ev = <-events
			}
			require.NoError(t, ev.Err)
			got = append(got, ev.Revision)
		}
	}
	var final error
	for ev := range events {
		switch {
		case ev.Err != nil:
			final = ev.Err
		case !ev.Progress:
			got = append(got, ev.Revision)
		}
	}
	require.ErrorIs(t, final, store.ErrExpired)
	require.Less(t, len(got), len(revs))
	require.GreaterOrEqual(t, len(got), 3)
	require.Equal(t, revs[:len(got)], got, "events before the expiry are contiguous")
}

func TestUndecodableValuesAreReportedNotFatal(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	b := memstore.New()
	st := newTypedStore(t, b)
	events, err := st.Watch(ctx, 0)
	require.NoError(t, err)
	junkRev, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: st.Prefix() + "junk", Value: []byte("{not json")})
	require.NoError(t, err)
	okRev, err := st.As("m").Create(ctx, &typedObj{Meta: store.Meta{Name: "ok"}})
	require.NoError(t, err)

	_, err = st.Get(ctx, "junk")
	require.ErrorIs(t, err, store.ErrInvalid)
	list, err := st.List(ctx, store.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	require.Len(t, list.Undecodable, 1)
	require.Equal(t, st.Prefix()+"junk", list.Undecodable[0].Key)
	ev := <-events
	require.Equal(t, junkRev, ev.Undecodable.Revision)
	ev = <-events
	require.NoError(t, ev.Err, "the watch goes on")
	require.Equal(t, okRev, ev.Object.Meta.Revision)

	_, err = st.Watch(ctx, -1)
	require.ErrorIs(t, err, store.ErrInvalid)
}

// Finalizers are a set: a duplicate is bad input, on every write.
func TestDuplicateFinalizersAreInvalid(t *testing.T) {
	ctx := t.Context()
	st := newTypedStore(t, memstore.New())
	w := st.As("m")
	_, err := w.Create(ctx, &typedObj{Meta: store.Meta{Name: "a", Finalizers: []string{"x", "x"}}})
	require.ErrorIs(t, err, store.ErrInvalid)
	obj := &typedObj{Meta: store.Meta{Name: "a", Finalizers: []string{"x"}}}
	_, err = w.Create(ctx, obj)
	require.NoError(t, err)
	obj.Meta.Finalizers = []string{"x", "y", "x"}
	_, err = w.Update(ctx, obj)
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = w.Apply(ctx, "a", nil, store.WithMeta(store.ApplyMeta{Finalizers: []string{"z", "z"}}))
	require.ErrorIs(t, err, store.ErrInvalid)
}

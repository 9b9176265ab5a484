package store_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// WatchWithoutPrev (store/cache's watch) carries the same events as a plain watch of the same history, except that Prev is
// nil, a valid value written over an undecodable one is Modified rather
// than Added, and a Deleted event's Object holds only Kind, Name and
// Revision.
func TestWatchWithoutPrevLeavesOutOnlyThePreviousState(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	st := newTypedStore(t, b)
	m := st.As("m")
	full, err := st.Watch(ctx, 0)
	require.NoError(t, err)
	lean, err := st.Lean().WatchWithoutPrev(ctx, 0, nil)
	require.NoError(t, err)

	put := func(name, value string) {
		_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: st.Prefix() + name, Value: []byte(value)})
		require.NoError(t, err)
	}
	obj := &typedObj{Meta: store.Meta{Name: "a", Labels: map[string]string{"x": "1"}}, Spec: typedSpec{Replicas: 1}}
	_, err = m.Create(ctx, obj)
	require.NoError(t, err)
	a, err := st.Get(ctx, "a")
	require.NoError(t, err)
	a.Spec.Replicas = 2
	_, err = m.Update(ctx, a)
	require.NoError(t, err)
	a, err = st.Get(ctx, "a")
	require.NoError(t, err)
	a.Status.Ready = 2
	_, err = m.UpdateStatus(ctx, a)
	require.NoError(t, err)
	put("a", "{not json")                                            // quarantined value
	put("a", `{"metadata":{"kind":"Widget","name":"a","uid":"u2"}}`) // valid over undecodable
	_, err = m.Delete(ctx, "a")
	require.NoError(t, err)
	put("b", "[]")
	_, err = m.Purge(ctx, "b", 0)
	require.NoError(t, err)
	_, err = m.Create(ctx, &typedObj{Meta: store.Meta{Name: "a"}}) // re-created
	require.NoError(t, err)

	wantTypes := []store.EventType{store.Added, store.Modified, store.Modified, 0, store.Modified, store.Deleted, 0, store.Deleted, store.Added}
	for i, wantType := range wantTypes {
		f, l := <-full, <-lean
		require.NoError(t, f.Err)
		require.Equal(t, f.Revision, l.Revision, "event %d", i)
		require.Equal(t, f.Progress, l.Progress, "event %d", i)
		require.Equal(t, f.Undecodable, l.Undecodable, "event %d", i)
		require.Nil(t, l.Prev, "event %d", i)
		require.Equal(t, wantType, l.Type, "event %d", i)
		switch {
		case f.Undecodable != nil:
			require.Nil(t, l.Object, "event %d", i)
		case f.Type == store.Deleted:
			require.Equal(t, &typedObj{Meta: store.Meta{Kind: "Widget", Name: f.Object.Meta.Name, Revision: f.Revision}}, l.Object, "event %d", i)
		default:
			require.Equal(t, f.Object, l.Object, "event %d", i)
			if f.Type != l.Type {
				require.Equal(t, store.Added, f.Type, "event %d: only a valid value over an undecodable one changes type", i)
				require.Nil(t, f.Prev, "event %d", i)
			}
		}
	}
}

// ListReusing puts the caller's object in place of each stored value it
// returns one for, and decodes the rest; pages, Limit, Selector and
// Undecodable are as List's.
func TestListReusingDecodesOnlyWhatReuseDeclines(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	st := newTypedStore(t, b)
	m := st.As("m")
	for _, name := range []string{"a", "b", "c", "d"} {
		_, err := m.Create(ctx, &typedObj{Meta: store.Meta{Name: name, Labels: map[string]string{"x": name}}})
		require.NoError(t, err)
	}
	_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: st.Prefix() + "bb", Value: []byte("{not json")})
	require.NoError(t, err)
	full, err := st.List(ctx, store.ListOptions{})
	require.NoError(t, err)
	held := map[string]*typedObj{}
	for _, o := range full.Items {
		held[o.Meta.Name] = o
	}
	b0 := *held["b"]
	stale := &b0
	stale.Meta.Revision-- // not the stored revision: declined
	held["b"] = stale
	var asked []string
	reuse := func(name string, rev int64) *typedObj {
		asked = append(asked, name)
		if o := held[name]; o != nil && o.Meta.Revision == rev {
			return o
		}
		return nil
	}

	page, err := st.Lean().ListReusing(ctx, store.ListOptions{Limit: 2}, reuse, false)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, objNames(page.Items))
	require.Same(t, held["a"], page.Items[0], "a reused object is the caller's")
	require.NotSame(t, stale, page.Items[1], "a declined one is decoded")
	require.Equal(t, full.Items[1], page.Items[1])
	next, err := st.Lean().ListReusing(ctx, store.ListOptions{Limit: 2, Continue: page.Continue}, reuse, false)
	require.NoError(t, err)
	require.Equal(t, []string{"c", "d"}, objNames(next.Items))
	require.Len(t, next.Undecodable, 1)
	require.Equal(t, "bb", next.Undecodable[0].Name)
	require.Equal(t, []string{"a", "b", "bb", "c", "d"}, asked)

	sel, err := st.Lean().ListReusing(ctx, store.ListOptions{Selector: store.MatchLabels(map[string]string{"x": "c"})}, reuse, false)
	require.NoError(t, err)
	require.Equal(t, []string{"c"}, objNames(sel.Items))
	require.Same(t, held["c"], sel.Items[0])
}

func objNames(objs []*typedObj) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, o.Meta.Name)
	}
	return out
}

// ListOptions.Keep and WatchWithoutPrev's keep filter by name before
// decoding: a rejected name's value (even one that does not decode) is
// left out of a listing and its writes come as progress at their
// revisions; its deletion still comes.
func TestKeepFiltersListAndWatchByName(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	st := newTypedStore(t, b)
	m := st.As("m")
	keep := func(name string) bool { return name != "b" }
	lean, err := st.Lean().WatchWithoutPrev(ctx, 0, keep)
	require.NoError(t, err)
	for _, n := range []string{"a", "b", "c"} {
		_, err := m.Create(ctx, &typedObj{Meta: store.Meta{Name: n}})
		require.NoError(t, err)
	}
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: st.Prefix() + "b", Value: []byte("{not json")})
	require.NoError(t, err)
	_, err = m.Purge(ctx, "b", 0)
	require.NoError(t, err)

	l, err := st.List(ctx, store.ListOptions{Keep: keep})
	require.NoError(t, err)
	var listed []string
	for _, o := range l.Items {
		listed = append(listed, o.Meta.Name)
	}
	require.Equal(t, []string{"a", "c"}, listed)
	require.Empty(t, l.Undecodable)

	var got []string
	for range 5 {
		ev := <-lean
		require.NoError(t, ev.Err)
		switch {
		case ev.Progress:
			got = append(got, "progress")
		default:
			got = append(got, fmt.Sprint(ev.Type, " ", ev.Object.Meta.Name))
		}
	}
	require.Equal(t, []string{fmt.Sprint(store.Added, " a"), "progress", fmt.Sprint(store.Added, " c"), "progress", fmt.Sprint(store.Deleted, " b")}, got)
}

package store_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// A field of Meta is spelled .metadata... wherever a path names it: in the
// diff of two objects as in the store's own field sets.
func TestMetadataPathsOfAnObject(t *testing.T) {
	old := &typedObj{Meta: store.Meta{Name: "web", Labels: map[string]string{"app": "a"}}}
	next := *old
	next.Meta.Labels = map[string]string{"app": "b"}
	require.Equal(t, []diff.Path{diff.MustParsePath(".metadata.labels.app")}, diff.Diff(old, &next).Paths())
}

// The diff.Hash example (a controller labels an object with the hash of what
// its user wrote, leaving the label out) works on steady's own objects: the
// label's path is the path of the field.
func TestHashLeavesOutAMetadataLabelOfAnObject(t *testing.T) {
	obj := &typedObj{Meta: store.Meta{Kind: "Widget", Name: "web", Labels: map[string]string{"app": "shop"}},
		Spec: typedSpec{Replicas: 3}}
	view := diff.Ignore(diff.MustParsePath(`.metadata.labels["steady.dev/hash"]`), diff.MustParsePath(".status"))
	h := diff.Hash(obj, view)

	labelled := *obj
	labelled.Meta.Labels = map[string]string{"app": "shop", "steady.dev/hash": strconv.FormatUint(h, 16)}
	labelled.Status.Ready = 3
	require.Equal(t, h, diff.Hash(&labelled, view), "writing the label (and the status) leaves the hash as it was")

	other := labelled
	other.Meta.Labels = map[string]string{"app": "web", "steady.dev/hash": strconv.FormatUint(h, 16)}
	require.NotEqual(t, h, diff.Hash(&other, view), "another label is part of the hash")
	other = labelled
	other.Spec.Replicas = 4
	require.NotEqual(t, h, diff.Hash(&other, view), "the spec is part of the hash")
}

// legacyValue is how a Widget was stored before Meta's key was renamed from
// "meta" to "metadata".
const legacyValue = `{"meta":{"kind":"Widget","name":"old","uid":"uid-old","labels":{"app":"shop"},` +
	`"lastWrite":{"manager":"m","op":"Create"},"generation":1},"spec":{"Replicas":2},"status":{"Ready":1}}`

// Values stored under the old key keep working: Get, List, Watch, DecodeMeta
// and a Cache read them, and the next write stores the new form.
func TestAValueStoredUnderTheLegacyMetaKeyDecodes(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	st := newTypedStore(t, b)
	// A first write elsewhere, so that the watch below from rev-1 is from
	// a revision, not from 0, which Watch reads as "from now".
	_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "_elsewhere", Value: []byte("x")})
	require.NoError(t, err)
	rev, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: st.Prefix() + "old", Value: []byte(legacyValue)})
	require.NoError(t, err)
	check := func(what string, obj *typedObj) {
		t.Helper()
		require.NotNil(t, obj, what)
		require.Equal(t, "old", obj.Meta.Name, what)
		require.Equal(t, "uid-old", obj.Meta.UID, what)
		require.Equal(t, map[string]string{"app": "shop"}, obj.Meta.Labels, what)
		require.Equal(t, int64(1), obj.Meta.Generation, what)
		require.Equal(t, rev, obj.Meta.Revision, what)
		require.Equal(t, typedSpec{Replicas: 2}, obj.Spec, what)
		require.Equal(t, typedStatus{Ready: 1}, obj.Status, what)
	}

	got, err := st.Get(ctx, "old")
	require.NoError(t, err)
	check("Get", got)

	list, err := st.List(ctx, store.ListOptions{Selector: store.MatchLabels(map[string]string{"app": "shop"})})
	require.NoError(t, err)
	require.Len(t, list.Items, 1, "the selector reads the labels")
	check("List", list.Items[0])

	meta, _, err := store.DecodeMeta([]byte(legacyValue))
	require.NoError(t, err)
	require.Equal(t, "uid-old", meta.UID)

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := st.Watch(wctx, rev-1)
	require.NoError(t, err)
	ev := <-events
	require.NoError(t, ev.Err)
	check("Watch", ev.Object)
	cancel()
	for range events {
	}

	c := cache.New(st)
	cctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(cctx) }()
	require.NoError(t, c.WaitForSync(ctx))
	cached, ok := c.Get("old")
	require.True(t, ok)
	check("Cache", cached)
	stop()
	require.NoError(t, <-done)

	// An Update (its read goes the raw way) keeps Meta and writes the new key.
	next := *got
	next.Spec.Replicas = 5
	_, err = st.As("m").Update(ctx, &next)
	require.NoError(t, err)
	kvp, err := b.Get(ctx, st.Prefix()+"old")
	require.NoError(t, err)
	require.Contains(t, string(kvp.Value), `{"metadata":{"kind":"Widget","name":"old","uid":"uid-old"`)
	require.NotContains(t, string(kvp.Value), `"meta":`)
	again, err := st.Get(ctx, "old")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"app": "shop"}, again.Meta.Labels)
	require.Equal(t, 5, again.Spec.Replicas)

	// A status write on a legacy value keeps its Meta too.
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: st.Prefix() + "old", Value: []byte(legacyValue)})
	require.NoError(t, err)
	cur, err := st.Get(ctx, "old")
	require.NoError(t, err)
	cur.Status.Ready = 2
	_, err = st.As("m").UpdateStatus(ctx, cur)
	require.NoError(t, err)
	again, err = st.Get(ctx, "old")
	require.NoError(t, err)
	require.Equal(t, "uid-old", again.Meta.UID)
	require.Equal(t, typedStatus{Ready: 2}, again.Status)
}

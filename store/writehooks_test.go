package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/internal/wrote"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// lookupCounter is a ctx that counts the lookups made through it.
type lookupCounter struct {
	context.Context
	n int
}

func (c *lookupCounter) Value(key any) any {
	c.n++
	return c.Context.Value(key)
}

// A write looks its hooks up in ctx (the Loop's observer, the write limit,
// the fence, the observers of WithWriteObserver, the dry runs) under one
// key, twice at most: at its start, for a dry run, and at its Txn. Each
// lookup that misses walks the whole of a reconcile's ctx, so a write
// that looked each hook up under a key of its own (six lookups) spent a
// percent of a controller's event on them. Every hook still takes effect.
func TestAWriteLooksItsHooksUpOnce(t *testing.T) {
	ctx := t.Context()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(), "App")
	require.NoError(t, err)
	name := writePathObjects(t, st, 1)[0]
	var loop, limit, user int
	hooked := wrote.With(ctx, func(any, string, int64) { loop++ })
	hooked = storeaccess.WithWriteLimit(hooked, func(context.Context) error { limit++; return nil })
	hooked = store.WithWriteObserver(hooked, func(int64) { user++ })
	hooked = store.WithoutFence(hooked)
	obj, err := st.Get(ctx, name)
	require.NoError(t, err)
	// In order, each write changing something: a status apply that changed
	// nothing would write nothing and call no hook.
	writes := []struct {
		op    string
		write func(context.Context) error
	}{
		{"Update", func(ctx context.Context) error {
			obj.Spec.Replicas++
			_, err := st.As("user").Update(ctx, obj)
			return err
		}},
		{"ApplyStatus", func(ctx context.Context) error {
			_, err := st.As("ctrl").ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: obj.Spec.Replicas + 1000}, nil)
			return err
		}},
	}
	for _, w := range writes {
		op := w.op
		loop, limit, user = 0, 0, 0
		c := &lookupCounter{Context: hooked}
		require.NoError(t, w.write(c), op)
		require.LessOrEqualf(t, c.n, 2, "%s looked ctx up %d times", op, c.n)
		require.Equal(t, []int{1, 1, 1}, []int{loop, limit, user}, "%s: the Loop's observer, the write limit, the user's observer", op)
	}
}

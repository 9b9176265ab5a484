package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// admitted returns a Store whose admission defaults Replicas to 1, refuses a
// negative Replicas or Ready and a Replicas that drops by more than 10, and
// records in seen every write it validates.
func admitted(t *testing.T, seen *[]string) *store.Store[typedSpec, typedStatus] {
	t.Helper()
	def := func(o *typedObj) {
		if o.Spec.Replicas == 0 {
			o.Spec.Replicas = 1
		}
		o.Meta.Labels = map[string]string{"ignored": "yes"} // Meta changes are ignored
	}
	validate := func(old, new *typedObj) error {
		if seen != nil {
			w := "create"
			if old != nil {
				w = "update from " + new.Meta.Name
			}
			*seen = append(*seen, w+" by "+new.Meta.LastWrite.Manager+" "+string(new.Meta.LastWrite.Op))
		}
		if new.Spec.Replicas < 0 {
			return &store.FieldError{Path: ".spec.replicas", Reason: "must not be negative"}
		}
		if new.Status.Ready < 0 {
			return &store.FieldError{Path: ".status.ready", Reason: "must not be negative"}
		}
		if old != nil && old.Spec.Replicas-new.Spec.Replicas > 10 {
			return errors.New("replicas may drop by 10 at most")
		}
		return nil
	}
	st, err := store.New[typedSpec, typedStatus](memstore.New(), "Widget", store.WithAdmission(def, validate))
	require.NoError(t, err)
	return st
}

func TestAdmissionDefaultsAndValidatesEveryWrite(t *testing.T) {
	ctx := context.Background()
	var seen []string
	st := admitted(t, &seen)
	w := st.As("alice")

	_, err := w.Create(ctx, &typedObj{Meta: store.Meta{Name: "a"}})
	require.NoError(t, err)
	a, err := st.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, 1, a.Spec.Replicas, "Default ran on Create")
	require.Nil(t, a.Meta.Labels, "Default's Meta changes are ignored")
	require.Equal(t, int64(1), a.Meta.Generation)

	// An Update that clears the field gets it back, and the generation
	// does not move: the stored spec is unchanged.
	a.Spec.Replicas = 0
	_, err = w.Update(ctx, a)
	require.NoError(t, err)
	a, err = st.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, 1, a.Spec.Replicas)

	a.Spec.Replicas = 20
	_, err = st.As("erin").Update(ctx, a)
	require.NoError(t, err)
	a, err = st.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, int64(2), a.Meta.Generation, "a real spec change moves the generation once")

	// Refusals: a field error names the field; any error is ErrInvalid.
	bad := *a
	bad.Spec.Replicas = -1
	_, err = st.As("bob").Update(ctx, &bad)
	require.ErrorIs(t, err, store.ErrInvalid)
	var fe *store.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, ".spec.replicas", fe.Path)
	require.EqualError(t, err, `store: Widget "a" refused by admission: field .spec.replicas: must not be negative`)

	bad.Spec.Replicas = 5
	_, err = w.Update(ctx, &bad)
	require.ErrorIs(t, err, store.ErrInvalid)
	require.ErrorContains(t, err, "replicas may drop by 10 at most", "validate saw the stored object as old")

	_, err = st.As("carol").Apply(ctx, "a", map[string]any{"Replicas": -3}, store.WithForce())
	require.ErrorAs(t, err, &fe, "an Apply's merged result is validated")

	a, err = st.Get(ctx, "a")
	require.NoError(t, err)
	a.Status.Ready = -1
	_, err = st.As("dave").UpdateStatus(ctx, a)
	require.ErrorAs(t, err, &fe)
	require.Equal(t, ".status.ready", fe.Path)
	_, err = st.As("dave").ApplyStatus(ctx, "a", map[string]any{"Ready": -2}, nil)
	require.ErrorAs(t, err, &fe)

	after, err := st.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, 20, after.Spec.Replicas, "no refused write landed")
	require.Equal(t, 0, after.Status.Ready)
	// A write refused on the Store's memory of the object is confirmed
	// with a read, so validated twice: Compact folds the repeats.
	require.Equal(t, []string{
		"create by alice Create",
		"update from a by alice Update",
		"update from a by erin Update",
		"update from a by bob Update",
		"update from a by alice Update",
		"update from a by carol Apply",
		"update from a by dave UpdateStatus",
		"update from a by dave ApplyStatus",
	}, slices.Compact(seen))
}

// Misuse: a Default or Validate that panics refuses the write, with an
// error; the Store and the process go on.
func TestAdmissionFuncsThatPanic(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		def      func(*typedObj)
		validate func(old, new *typedObj) error
		want     string
	}{
		{"default", func(*typedObj) { panic("boom") }, nil, `store: invalid: Widget "a" refused by admission: default panicked: string: boom`},
		{"validate", nil, func(_, _ *typedObj) error { var m map[string]int; m["x"]++; return nil }, `refused by admission: validate panicked: runtime.plainError: assignment to entry in nil map`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := store.New[typedSpec, typedStatus](memstore.New(), "Widget", store.WithAdmission(tc.def, tc.validate))
			require.NoError(t, err)
			_, err = st.As("alice").Create(ctx, &typedObj{Meta: store.Meta{Name: "a"}})
			require.ErrorIs(t, err, store.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
			_, err = st.Get(ctx, "a")
			require.ErrorIs(t, err, store.ErrNotFound, "nothing was written")
		})
	}
}

// Misuse: WithAdmission with no func, or for other types than the Store's.
func TestAdmissionMisconfigured(t *testing.T) {
	_, err := store.New[typedSpec, typedStatus](memstore.New(), "Widget", store.WithAdmission[typedSpec, typedStatus](nil, nil))
	require.ErrorIs(t, err, store.ErrInvalid)
	require.ErrorContains(t, err, "neither a default nor a validate func")
	_, err = store.New[typedSpec, typedStatus](memstore.New(), "Widget", store.WithAdmission(func(*store.Object[int, int]) {}, nil))
	require.ErrorIs(t, err, store.ErrInvalid)
	require.ErrorContains(t, err, "WithAdmission for")
}

// On a versioned kind, admission sees the objects at the Store's served
// version and its defaults are stored at the storage version.
func TestAdmissionOnAVersionedKind(t *testing.T) {
	ctx := context.Background()
	b := memstore.New()
	vs := widgetVersions(t, "v2")
	var olds []string
	def := func(o *store.Object[specV1, statusV1]) {
		if o.Spec.Image == "" {
			o.Spec.Image = "default:latest"
		}
	}
	validate := func(old, new *store.Object[specV1, statusV1]) error {
		if old != nil {
			olds = append(olds, old.Spec.Image)
		}
		if new.Spec.Image == "bad" {
			return &store.FieldError{Path: ".spec.image", Reason: "is bad"}
		}
		return nil
	}
	s1, err := store.New[specV1, statusV1](b, "Widget", store.WithVersion("v1", vs), store.WithAdmission(def, validate))
	require.NoError(t, err)
	_, err = s1.As("alice").Create(ctx, &store.Object[specV1, statusV1]{Meta: store.Meta{Name: "w"}})
	require.NoError(t, err)
	require.Equal(t, "v2", storedEnvelope(t, b, "w")["version"], "stored at the storage version")
	w, err := s1.Get(ctx, "w")
	require.NoError(t, err)
	require.Equal(t, "default:latest", w.Spec.Image)
	w.Spec.Image = "bad"
	_, err = s1.As("alice").Update(ctx, w)
	var fe *store.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, ".spec.image", fe.Path)
	require.Contains(t, olds, "default:latest", "validate saw the stored object at the served version")
}

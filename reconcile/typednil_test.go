package reconcile

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/store/lease"
)

// brokenClock is a clock whose nil pointer panics when read.
type brokenClock struct{ clock.Real }

// A typed nil (a nil pointer or a nil func behind an interface) passes a
// plain == nil check and panics at its first use, on a goroutine of the
// Loop's: New refuses every one, as Manager.AddLoop does.
func TestNewRejectsTypedNils(t *testing.T) {
	r := Func[string](func(context.Context, string) (Result, error) { return Result{}, nil })
	for _, tt := range []struct {
		name string
		r    Reconciler[string]
		src  Source[string]
		opts []Option
	}{
		{"nil *script reconciler", (*script)(nil), nil, nil},
		{"nil Func reconciler", Func[string](nil), nil, nil},
		{"nil SourceFunc", r, SourceFunc[string](nil), nil},
		{"nil key lister func", r, Keys[string](nil), nil},
		{"typed nil among Sources", r, Sources(keySet("a"), SourceFunc[string](nil)), nil},
		{"nil *memStatus status writer", r, WithConditionWriter(keySet("a"), (*memStatus)(nil)), nil},
		{"nil *lease.StoreElector", r, nil, []Option{WithElector((*lease.StoreElector)(nil))}},
		{"nil *MemMetrics", r, nil, []Option{WithMetrics((*MemMetrics)(nil))}},
		{"nil clock pointer", r, nil, []Option{WithClock((*brokenClock)(nil))}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := New("x", tt.r, tt.src, tt.opts...)
			require.ErrorIs(t, err, ErrInvalidOption)
			require.Nil(t, l)
		})
	}
}

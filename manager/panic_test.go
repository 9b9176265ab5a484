package manager_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/manager"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store/lease"
)

// A Manager's elector whose Campaign panics: logged, tried again.
func TestManagerElectorThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		m := manager.New(manager.WithElector(panickyElector{}), manager.WithLogger(newLogger(&logs)))
		ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
		defer cancel()
		require.NoError(t, m.Run(ctx))
		require.Equal(t, 2, strings.Count(logs.String(), `level=ERROR msg="manager: Elector.Campaign panicked"`))
	})
}

// panickyCache is a Manager cache whose Run or WaitForSync panics.
type panickyCache struct{ inRun bool }

func (c panickyCache) Run(ctx context.Context) error {
	if c.inRun {
		panic("Run")
	}
	<-ctx.Done()
	return nil
}

func (c panickyCache) WaitForSync(ctx context.Context) error {
	if !c.inRun {
		panic("WaitForSync")
	}
	<-ctx.Done()
	return ctx.Err()
}

func (panickyCache) HasSynced() bool { return false }

// panickyRunner is a Manager part whose Run panics.
type panickyRunner struct{}

func (panickyRunner) Name() string                  { return "bad" }
func (panickyRunner) Run(ctx context.Context) error { panic("Run") }

// A Manager part that panics (a cache's Run or WaitForSync, a Loop's Run)
// fails the Manager's Run with the panic.
func TestManagerPartsThatPanic(t *testing.T) {
	for _, tt := range []struct {
		name string
		add  func(*manager.Manager) error
		want string
	}{
		{"cache Run", func(m *manager.Manager) error { return m.AddCache(panickyCache{inRun: true}) }, "cache 0: panicked: string: Run"},
		{"cache WaitForSync", func(m *manager.Manager) error { return m.AddCache(panickyCache{}) }, "WaitForSync panicked: string: WaitForSync"},
		{"loop Run", func(m *manager.Manager) error { return m.AddLoop(panickyRunner{}) }, "loop bad: panicked: string: Run"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs logBuffer
				m := manager.New(manager.WithLogger(newLogger(&logs)))
				require.NoError(t, tt.add(m))
				require.ErrorContains(t, m.Run(t.Context()), tt.want)
				require.Contains(t, logs.String(), "panicked")
			})
		})
	}
}

// New has no error result: a typed nil elector makes Run fail at
// once, before it starts anything, instead of panicking in Campaign.
func TestManagerRejectsATypedNilElector(t *testing.T) {
	m := manager.New(manager.WithElector((*lease.StoreElector)(nil)))
	require.ErrorIs(t, m.Run(t.Context()), reconcile.ErrInvalidOption)
}

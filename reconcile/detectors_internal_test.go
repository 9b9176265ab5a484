package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/reconcile/oscillation"
)

// A key the reconciler wrote and that converged keeps an oscillation
// detector for a window, and nothing else: no keyState, whose fields
// (failures, holds, Stalled notes...) it does not use. At 100,000 keys a
// keyState apiece was about 30 MB, and it made every reconcile take the
// Loop's lock (nkeys > 0). The detector still counts: another writer's
// change of the key reaches it (keepsState), and the writes it counted make
// a Fight.
func TestAConvergedKeyKeepsItsDetectorWithoutAKeyState(t *testing.T) {
	l := mustNew(t, Func[string](func(context.Context, string) (Result, error) { return Result{}, nil }), nil)
	status, replicas := diff.MustParsePath(".status.replicas"), diff.MustParsePath(".spec.replicas")
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	l.observeWrite("a", oscillation.Write{Self: true, Time: at, Owned: []diff.Path{status}})
	l.observeWrite("a", oscillation.Write{Time: at.Add(time.Second), Foreign: []diff.Path{replicas}})

	l.mu.Lock()
	require.Empty(t, l.keys, "a key whose only state is its detector has no keyState")
	require.Equal(t, 1, l.detectors.len())
	l.mu.Unlock()
	require.Zero(t, l.nkeys.Load())
	require.True(t, l.keepsState("a"), "another writer's change still reaches the detector")
	require.False(t, l.keepsState("b"))

	// The detector goes on counting: the reconciler re-sets the path
	// another manager changed, three times, and that is a Fight, which
	// holds the key (a keyState from then on).
	for i := range 3 {
		t0 := at.Add(time.Duration(2+2*i) * time.Second)
		l.observeWrite("a", oscillation.Write{Time: t0, Foreign: []diff.Path{replicas}})
		l.observeWrite("a", oscillation.Write{Self: true, Time: t0.Add(time.Second), Owned: []diff.Path{replicas}})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.keys["a"]
	require.NotNil(t, s, "the fight holds the key")
	require.NotNil(t, s.oscillated)
	require.Equal(t, oscillation.Fight, s.oscillated.Kind)
}

// A resync drops the detectors that can no longer count (Idle), and the
// map that held many is made anew once it holds few, so that a burst of
// writes to many keys does not keep its memory after they converge.
func TestResyncDropsIdleDetectors(t *testing.T) {
	l := mustNew(t, Func[string](func(context.Context, string) (Result, error) { return Result{}, nil }), nil)
	status := diff.MustParsePath(".status.replicas")
	at := time.Now().Add(-time.Hour) // long out of any window
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		l.observeWrite(k, oscillation.Write{Self: true, Time: at, Owned: []diff.Path{status}})
	}
	l.observeWrite("e", oscillation.Write{Self: true, Time: time.Now(), Owned: []diff.Path{status}})
	l.resync()
	l.mu.Lock()
	defer l.mu.Unlock()
	require.Equal(t, 1, l.detectors.len())
	require.NotNil(t, l.detectors.get("e"))
	require.Equal(t, 1, l.detectorsPeak, "the map was made anew")
}

// A key the Loop keeps a keyState for and no detector (its reconcile
// failed before it wrote) keeps state too: another writer's change of it
// reaches a detector, made for it then, and of a key with no state at all
// does not. keepsState and observeWrite look in detectors first, where
// nearly every key with state is, but must still look in keys.
func TestAKeyWithAKeyStateAndNoDetectorKeepsState(t *testing.T) {
	l := mustNew(t, Func[string](func(context.Context, string) (Result, error) { return Result{}, nil }), nil)
	l.mu.Lock()
	l.setKeyLocked("a", &keyState{failures: 1})
	l.mu.Unlock()
	require.True(t, l.keepsState("a"))
	require.False(t, l.keepsState("b"))

	replicas := diff.MustParsePath(".spec.replicas")
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	l.observeWrite("a", oscillation.Write{Time: at, Foreign: []diff.Path{replicas}})
	l.observeWrite("b", oscillation.Write{Time: at, Foreign: []diff.Path{replicas}})
	l.mu.Lock()
	defer l.mu.Unlock()
	require.NotNil(t, l.detectors.get("a"), "another writer's change of a key with state is counted")
	require.Nil(t, l.detectors.get("b"), "nor kept for a key without")
}

// The Loop takes the detector it last found for a key without a lookup
// (lastDetector), never one it no longer holds: after a deletion forgets
// the key, or a resync drops its idle detector, the key's next write goes
// to a new detector that the Loop holds, not to the one it dropped.
func TestADroppedDetectorIsNotWrittenTo(t *testing.T) {
	status := diff.MustParsePath(".status.replicas")
	for _, drop := range []struct {
		name string
		drop func(l *Loop[string])
	}{
		{"deleted", func(l *Loop[string]) { l.forgetKey("a") }},
		{"idle at resync", func(l *Loop[string]) { l.resync() }},
	} {
		t.Run(drop.name, func(t *testing.T) {
			l := mustNew(t, Func[string](func(context.Context, string) (Result, error) { return Result{}, nil }), nil)
			l.observeWrite("a", oscillation.Write{Self: true, Time: time.Now().Add(-time.Hour), Owned: []diff.Path{status}})
			require.True(t, l.keepsState("a"))
			drop.drop(l)
			require.False(t, l.keepsState("a"), "the dropped detector is not found")
			l.observeWrite("a", oscillation.Write{Self: true, Time: time.Now(), Owned: []diff.Path{status}})
			l.mu.Lock()
			defer l.mu.Unlock()
			require.NotNil(t, l.detectors.get("a"), "the write went to a detector the Loop holds")
		})
	}
}

package reconciletest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// greetingSpecV1 is the Greeting's first version, still its storage
// version: the text was called words.
type greetingSpecV1 struct {
	Words string `json:"words"`
}

// greetingVersions: v1 stored, v2 (greetingSpec) the hub.
func greetingVersions(t testing.TB) *store.Versions {
	t.Helper()
	vs, err := store.NewVersions("v1",
		store.VersionOf("v1", store.Conversion[greetingSpecV1, greetingStatus, greetingSpec, greetingStatus]{
			ToHub: func(s greetingSpecV1, st greetingStatus) (greetingSpec, greetingStatus, error) {
				return greetingSpec{Text: s.Words}, st, nil
			},
			FromHub: func(s greetingSpec, st greetingStatus) (greetingSpecV1, greetingStatus, error) {
				return greetingSpecV1{Words: s.Text}, st, nil
			},
			Renames: []store.Rename{{From: ".spec.words", To: ".spec.text"}},
		}),
		store.VersionOf("v2", store.Conversion[greetingSpec, greetingStatus, greetingSpec, greetingStatus]{}))
	require.NoError(t, err)
	return vs
}

// A versioned kind goes through the harness like any other: Config's
// StoreOptions serve the Greeting at v2 while it is stored at v1, so every
// read, watch event and write of the schedules converts, under every fault.
func TestVersionedKindServedAtAnotherVersionThanStored(t *testing.T) {
	vs := greetingVersions(t)
	cfg := echoConfig()
	cfg.Schedules = 20
	cfg.StoreOptions = []store.Option{store.WithVersion("v2", vs)}
	cfg.Compete = func(ctx context.Context, b kv.Backend, w *store.Writer[greetingSpec, greetingStatus], name string, rng *rand.Rand) error {
		// Another program, still serving v1, rewrites greetings now and then.
		old, err := store.New[greetingSpecV1, greetingStatus](b, "Greeting", store.WithVersion("v1", vs))
		if err != nil {
			return err
		}
		g, err := old.Get(ctx, name)
		if err != nil {
			return err
		}
		g.Spec.Words = fmt.Sprint("changed ", rng.IntN(100))
		_, err = old.As("old-program").Update(ctx, g)
		return err
	}
	echoed := cfg.Converged
	cfg.Converged = func(ctx context.Context, b kv.Backend, g *greeting) error {
		kvp, err := b.Get(ctx, "Greeting/"+g.Meta.Name)
		if err != nil {
			return err
		}
		var env struct{ Version string }
		if err := json.Unmarshal(kvp.Value, &env); err != nil || env.Version != "v1" {
			return fmt.Errorf("stored at version %q (%v), want the storage version v1", env.Version, err)
		}
		return echoed(ctx, b, g)
	}
	reconciletest.Run(t, cfg)
}

package cache_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// followSpec and followStatus are the controller benchmark's App
// (bench/internal/ctlbench): a ~200-byte spec with a slice and a map, one
// status field.
type followSpec struct {
	Replicas int64             `json:"replicas"`
	Image    string            `json:"image"`
	Args     []string          `json:"args"`
	Selector map[string]string `json:"selector"`
}

type followStatus struct {
	ReadyReplicas int64 `json:"readyReplicas"`
}

// followObjects is how many objects BenchmarkFollowSpecAndStatus cycles
// through.
const followObjects = 1000

// BenchmarkFollowSpecAndStatus is a Cache following what a controller's
// cache follows: each op is another client's spec update (its own Store,
// remembering nothing: a Get and an Update) and the watched Store's own
// status write over the object the Cache delivered (ApplyStatus with
// WithObserved), two events, each waited for before the next write. The
// Cache's own share (Cache.follow and below: decoding each event into the
// object it holds, and applying it) is what callgrind's inclusive cost of
// followInPlace gives; ns/op and allocs/op are the whole op's.
//
//	go test -run '^$' -bench FollowSpecAndStatus -benchmem ./store/cache/
func BenchmarkFollowSpecAndStatus(b *testing.B) {
	ctx := b.Context()
	mem := memstore.New()
	st, err := store.New[followSpec, followStatus](mem, "App")
	if err != nil {
		b.Fatal(err)
	}
	other, err := store.New[followSpec, followStatus](mem, "App", store.WithLastValues(0))
	if err != nil {
		b.Fatal(err)
	}
	user, ctl := other.As("user"), st.As("app-controller")
	for i := range followObjects {
		o := &store.Object[followSpec, followStatus]{
			Meta: store.Meta{Name: "app-" + strconv.Itoa(i)},
			Spec: followSpec{Image: "registry.example.com/platform/web-frontend:v1.27.3",
				Args:     []string{"--listen=:8080", "--log-level=info", "--config=/etc/web/config.yaml"},
				Selector: map[string]string{"app": "web", "shard": strconv.Itoa(i % 64)}},
		}
		if _, err := user.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	c, stop := syncedCache[followSpec, followStatus](b, st, nil)
	defer stop()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		name := "app-" + strconv.Itoa(i%followObjects)
		i++
		o, err := other.Get(ctx, name)
		if err != nil {
			b.Fatal(err)
		}
		o.Spec.Replicas = int64(i)
		rev, err := user.Update(ctx, o)
		if err != nil {
			b.Fatal(err)
		}
		held := waitHeld(ctx, b, c, name, rev)
		res, err := ctl.ApplyStatus(ctx, name, followStatus{ReadyReplicas: held.Spec.Replicas}, nil, store.WithObserved(held.Meta))
		if err != nil || !res.Changed {
			b.Fatal(res, err)
		}
		if got := waitHeld(ctx, b, c, name, res.Revision); got.Status.ReadyReplicas != int64(i) || got.Spec.Replicas != int64(i) {
			b.Fatalf("cached %s: %+v", name, got)
		}
	}
}

// waitHeld waits for c to reach rev and returns its object for name.
func waitHeld(ctx context.Context, b *testing.B, c *cache.Cache[followSpec, followStatus], name string, rev int64) *store.Object[followSpec, followStatus] {
	if err := c.WaitFor(ctx, rev); err != nil {
		b.Fatal(err)
	}
	o, ok := c.Get(name)
	if !ok || o.Meta.Revision != rev {
		b.Fatalf("cached %s: %v at %d, want %d", name, ok, o.Meta.Revision, rev)
	}
	return o
}

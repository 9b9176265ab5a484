package debugserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"

	"github.com/steady-go/steady/examples/fleet/internal/demo"
	"github.com/steady-go/steady/metrics"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDebugServesThePageAndMetricsOfTheCurrentLoop runs in real time: the
// server listens on a real port.
func TestDebugServesThePageAndMetricsOfTheCurrentLoop(t *testing.T) {
	var out bytes.Buffer
	d, err := start("127.0.0.1:0", &out)
	require.NoError(t, err)
	defer d.Close()
	addr := regexp.MustCompile(`metrics at (http://\S+)/metrics`).FindStringSubmatch(out.String())
	require.NotNil(t, addr, out.String())
	base := addr[1]

	groups, err := store.New[demo.GroupSpec, demo.GroupStatus](memstore.New(), "Group")
	require.NoError(t, err)
	for _, name := range []string{"db-00", "web-00"} {
		_, err := groups.As("deployer").Create(context.Background(), &demo.Group{Meta: store.Meta{Name: name}, Spec: demo.GroupSpec{Replicas: 1}})
		require.NoError(t, err)
	}
	c := cache.New(groups)
	own := &countErrors{}
	r := reconcile.Func[string](func(_ context.Context, key string) (reconcile.Result, error) {
		if key == "db-00" {
			return reconcile.Result{}, errors.New("instance db-00-0 unreachable")
		}
		return reconcile.Result{}, nil
	})
	loop, err := reconcile.New(demo.ControllerName, r, reconcile.FromStore(c, groups), reconcile.WithMetrics(d.Metrics(own)))
	require.NoError(t, err)
	d.Track(loop, c)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Run(ctx) })
	wg.Go(func() { _ = loop.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()

	get := func(path string) string {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b)
	}
	require.Eventually(t, func() bool {
		return regexp.MustCompile(`controller_runtime_reconcile_total\{controller="fleet-controller",result="error"\} [1-9]`).MatchString(get("/metrics"))
	}, 10*time.Second, 10*time.Millisecond)
	require.Contains(t, get("/metrics"), `steady_cache_objects{cache="groups"} 2`)
	require.Contains(t, get("/debug/steady/api/keys"), `"key":"db-00"`)
	require.Contains(t, get("/debug/steady/api/loops"), `"name":"fleet-controller"`)
	require.Contains(t, get("/"), "<title>steady</title>", "/ leads to the page")
	require.Positive(t, own.n.Load(), "the demo's own metrics still count")
}

// countErrors counts failed reconciles: the demo's own metrics, in short.
type countErrors struct {
	metrics.NopLoop
	n atomic.Int64
}

func (c *countErrors) ReconcileError(string, bool) { c.n.Add(1) }

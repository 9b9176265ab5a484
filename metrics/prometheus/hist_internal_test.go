package prometheus

import (
	"math/rand/v2"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// A histVec exposes what a client_golang histogram with the same buckets
// exposes after the same durations, around every bucket bound too.
func TestHistVecMatchesClientGolang(t *testing.T) {
	for _, bounds := range [][]float64{reconcileBuckets, prom.ExponentialBuckets(10e-9, 10, 12)} {
		v := newHistVec("h", "help", []string{"controller"}, bounds)
		h := v.with("app")
		ref := prom.NewHistogram(prom.HistogramOpts{Name: "h", Help: "help", Buckets: bounds})
		var ds []time.Duration
		for _, b := range bounds {
			n := time.Duration(b * 1e9)
			ds = append(ds, n-1, n, n+1)
		}
		r := rand.New(rand.NewPCG(1, 2))
		for range 1000 {
			ds = append(ds, time.Duration(r.Int64N(int64(90*time.Second))), time.Duration(r.Int64N(int64(time.Millisecond))))
		}
		for _, d := range ds {
			h.observe(d)
			ref.Observe(d.Seconds())
		}
		got, want := collect(t, v), collect(t, ref)
		require.Equal(t, want.GetSampleCount(), got.GetSampleCount())
		require.InEpsilon(t, want.GetSampleSum(), got.GetSampleSum(), 1e-12)
		require.Len(t, got.GetBucket(), len(bounds))
		for i, b := range want.GetBucket() {
			require.Equal(t, b.GetUpperBound(), got.GetBucket()[i].GetUpperBound())
			require.Equal(t, b.GetCumulativeCount(), got.GetBucket()[i].GetCumulativeCount(), "le %g", b.GetUpperBound())
		}
	}
}

func collect(t *testing.T, c prom.Collector) *dto.Histogram {
	t.Helper()
	ch := make(chan prom.Metric, 1)
	c.Collect(ch)
	var m dto.Metric
	require.NoError(t, (<-ch).Write(&m))
	return m.GetHistogram()
}

func TestNanosAtMostIsTheLastDurationInTheBucket(t *testing.T) {
	for _, b := range append(append([]float64{}, reconcileBuckets...), prom.ExponentialBuckets(10e-9, 10, 12)...) {
		n := nanosAtMost(b)
		require.LessOrEqual(t, time.Duration(n).Seconds(), b)
		require.Greater(t, time.Duration(n+1).Seconds(), b)
	}
}

package prometheus

import (
	"sync"
	"sync/atomic"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
)

// histVec is a classic Prometheus histogram of durations, by label values,
// made for the reconcile path: an observation is a bucket search over
// integer nanoseconds and two atomic adds (client_golang's Observe does
// five, plus a compare-and-swap loop for the float sum), and the series are
// built at scrape. The exposition is client_golang's: the same name, help,
// labels, buckets, count and sum (in seconds; summed in integer
// nanoseconds, so without float rounding). A scrape that races an
// observation may see its bucket without its sum, or the reverse; the
// next scrape sees both.
type histVec struct {
	desc   *prom.Desc
	bounds []float64 // upper bounds in seconds, as exposed
	ns     []int64   // bounds[i] in nanoseconds: d ≤ ns[i] exactly when d.Seconds() ≤ bounds[i]

	mu       sync.Mutex
	children map[string]*hist // by label values joined with \xff
}

func newHistVec(name, help string, labels []string, bounds []float64) *histVec {
	v := &histVec{
		desc:     prom.NewDesc(name, help, labels, nil),
		bounds:   bounds,
		ns:       make([]int64, len(bounds)),
		children: map[string]*hist{},
	}
	for i, b := range bounds {
		v.ns[i] = nanosAtMost(b)
	}
	return v
}

// nanosAtMost returns the largest n such that time.Duration(n).Seconds() ≤
// b, so that comparing integer nanoseconds puts a duration in the bucket
// client_golang's Observe(d.Seconds()) would.
func nanosAtMost(b float64) int64 {
	n := int64(b * 1e9)
	for time.Duration(n).Seconds() > b {
		n--
	}
	for time.Duration(n+1).Seconds() <= b {
		n++
	}
	return n
}

// with returns the histogram of the given label values, creating it on
// first use.
func (v *histVec) with(values ...string) *hist {
	key := ""
	for i, s := range values {
		if i > 0 {
			key += "\xff"
		}
		key += s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	h := v.children[key]
	if h == nil {
		h = &hist{ns: v.ns, counts: make([]atomic.Uint64, len(v.ns)+1), values: values}
		v.children[key] = h
	}
	return h
}

// Describe implements prom.Collector.
func (v *histVec) Describe(ch chan<- *prom.Desc) { ch <- v.desc }

// Collect implements prom.Collector.
func (v *histVec) Collect(ch chan<- prom.Metric) {
	v.mu.Lock()
	hs := make([]*hist, 0, len(v.children))
	for _, h := range v.children {
		hs = append(hs, h)
	}
	v.mu.Unlock()
	for _, h := range hs {
		buckets := make(map[float64]uint64, len(v.bounds))
		var count uint64
		for i, b := range v.bounds {
			count += h.counts[i].Load()
			buckets[b] = count
		}
		count += h.counts[len(v.bounds)].Load()
		sum := time.Duration(h.sum.Load()).Seconds()
		ch <- prom.MustNewConstHistogram(v.desc, count, sum, buckets, h.values...)
	}
}

// hist is one series of a histVec.
type hist struct {
	ns     []int64         // the vec's bounds in nanoseconds
	counts []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sum    atomic.Int64    // nanoseconds
	values []string        // label values
}

func (h *hist) observe(d time.Duration) {
	i := 0
	for i < len(h.ns) && int64(d) > h.ns[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(int64(d))
}

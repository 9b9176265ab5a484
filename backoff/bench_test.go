package backoff_test

import (
	"strconv"
	"testing"

	"github.com/steady-go/steady/backoff"
)

// benchKeys returns n distinct keys, built once so the benchmarks measure
// the limiter and not string formatting.
func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "namespace/object-" + strconv.Itoa(i)
	}
	return keys
}

func BenchmarkDelay(b *testing.B) {
	p := backoff.DefaultPolicy()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p.Delay(i % 20) // below, at and past the cap
		i++
	}
}

// BenchmarkPerKeyWhenForget is one failure and one success per op, on 10k
// distinct keys cycled: the per-key cost a queue pays for a retried key.
func BenchmarkPerKeyWhenForget(b *testing.B) {
	l, err := backoff.NewPerKey[string](backoff.DefaultPolicy())
	if err != nil {
		b.Fatal(err)
	}
	keys := benchKeys(10_000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := keys[i%len(keys)]
		l.When(k)
		l.Forget(k)
		i++
	}
}

// BenchmarkPerKeyWhenHeld is a failure of a key that is already held (no
// Forget in between), the repeated-failure path.
func BenchmarkPerKeyWhenHeld(b *testing.B) {
	l, err := backoff.NewPerKey[string](backoff.DefaultPolicy())
	if err != nil {
		b.Fatal(err)
	}
	keys := benchKeys(10_000)
	for _, k := range keys {
		l.When(k)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		l.When(keys[i%len(keys)])
		i++
	}
}

func BenchmarkPerKeyWhenForgetParallel(b *testing.B) {
	l, err := backoff.NewPerKey[string](backoff.DefaultPolicy())
	if err != nil {
		b.Fatal(err)
	}
	keys := benchKeys(10_000)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			k := keys[i%len(keys)]
			l.When(k)
			l.Forget(k)
			i++
		}
	})
}

// BenchmarkDefaultWhenForget is NewDefault's PerKey max Bucket. After the
// first few hundred ops the bucket is past its ceiling, so most ops take the
// reserve-and-cancel path.
func BenchmarkDefaultWhenForget(b *testing.B) {
	l := backoff.NewDefault[string]()
	keys := benchKeys(10_000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := keys[i%len(keys)]
		l.When(k)
		l.Forget(k)
		i++
	}
}

func BenchmarkBucketWhen(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  backoff.BucketConfig
	}{
		{"under-ceiling", backoff.BucketConfig{Rate: 1e9, Burst: 1}},
		{"past-ceiling", backoff.BucketConfig{}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l, err := backoff.NewBucket[string](bc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				l.When("k")
			}
		})
	}
}

package prometheus_test

import (
	"runtime"
	"testing"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/stretchr/testify/require"

	steadyprom "github.com/steady-go/steady/metrics/prometheus"
)

// gathered returns the names of the families reg serves.
func gathered(t *testing.T, reg *prom.Registry) []string {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err)
	var names []string
	for _, f := range fams {
		names = append(names, f.GetName())
	}
	return names
}

// New registers the Go and process collectors beside the steady series, as
// controller-runtime's metrics registry holds them; a registry that has
// them already keeps its own, and WithoutRuntimeCollectors leaves them out.
func TestNewRegistersTheGoAndProcessCollectors(t *testing.T) {
	reg := prom.NewRegistry()
	_, err := steadyprom.New(reg)
	require.NoError(t, err)
	names := gathered(t, reg)
	require.Contains(t, names, "go_goroutines")
	require.Contains(t, names, "go_memstats_heap_alloc_bytes")
	if runtime.GOOS == "linux" {
		require.Contains(t, names, "process_cpu_seconds_total")
		require.Contains(t, names, "process_resident_memory_bytes")
	}

	own := prom.NewRegistry()
	own.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	_, err = steadyprom.New(own)
	require.NoError(t, err, "a registry with the collectors already keeps them")
	require.Contains(t, gathered(t, own), "go_goroutines")

	without := prom.NewRegistry()
	_, err = steadyprom.New(without, steadyprom.WithoutRuntimeCollectors())
	require.NoError(t, err)
	require.NotContains(t, gathered(t, without), "go_goroutines")
	require.NotContains(t, gathered(t, without), "process_cpu_seconds_total")
}

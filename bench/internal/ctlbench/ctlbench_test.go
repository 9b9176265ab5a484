package ctlbench

import (
	"runtime"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// With more objects than updates, the objects the writer never touches
// already show their final state at the first pass; that pass must not
// count them as drained, or the run ends before the updates land.
func TestPlanDrainsOnlyUpdatedObjects(t *testing.T) {
	p := NewPlan(&Config{Objects: 4, Updates: 2, Workers: 1})
	for i := range 4 { // the first pass: every object at 0 replicas
		p.Wrote(Name(i), 0)
	}
	select {
	case <-p.Done():
		t.Fatalf("drained by the first pass; %d left", p.Left())
	default:
	}
	p.Wrote(Name(0), 1)
	p.Wrote(Name(1), 2)
	select {
	case <-p.Done():
	default:
		t.Fatalf("not drained after both updates landed; %d left", p.Left())
	}
}

// The meter reports the heap a GC found live apart from the heap's peak,
// which also counts garbage not yet swept: 32 MiB kept through a GC is
// live.
func TestMeterReportsTheLiveHeapApart(t *testing.T) {
	m := Start()
	keep := make([]byte, 32<<20)
	runtime.GC()
	var r Report
	m.Stop(&r)
	runtime.KeepAlive(keep)
	if r.PeakLive < 32<<20 {
		t.Fatalf("peak live heap %d: want at least the %d bytes kept", r.PeakLive, 32<<20)
	}
}

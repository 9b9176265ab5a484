package kubefake

import (
	"sync"
	"testing"
	"testing/synctest"

	"k8s.io/apimachinery/pkg/watch"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/bench/internal/ctlbench"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// update sets the replica count of object 0 to r.
func update(t *testing.T, a *APIServer, r int) {
	t.Helper()
	if err := a.UpdateSpec(ctlbench.Name(0), func(d *App) { d.Spec.Replicas = int32(r) }); err != nil {
		t.Fatal(err)
	}
}

// expect reads n events from w and fails unless they are the writes of
// replica counts from, from+1, ...
func expect(t *testing.T, w watch.Interface, from, n int) {
	t.Helper()
	for i := range n {
		ev, ok := <-w.ResultChan()
		if !ok {
			t.Fatalf("event %d of %d: channel closed", i, n)
		}
		if got := ev.Object.(*App).Spec.Replicas; ev.Type != watch.Modified || int(got) != from+i {
			t.Fatalf("event %d: %s of replicas %d, want Modified of %d", i, ev.Type, got, from+i)
		}
	}
}

// A watch whose informer reads nothing for a while holds its backlog, past
// its channel's room, in order, and lets go of the queue once it is read.
func TestWatchQueuesPastItsChannel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, err := NewAPIServer(1)
		if err != nil {
			t.Fatal(err)
		}
		w := a.startWatch()
		const n = 3*watchBuffer + 7
		for r := 1; r <= n; r++ {
			update(t, a, r)
		}
		expect(t, w, 1, n)
		synctest.Wait() // the sending goroutine found the queue empty
		fw := w.(*watcher)
		fw.mu.Lock()
		sending, queued := fw.sending, cap(fw.queue)
		fw.mu.Unlock()
		if sending || queued != 0 {
			t.Errorf("after the backlog was read: sending %v, queue capacity %d; want false, 0", sending, queued)
		}
		// Caught up, the next writes go on the channel again.
		update(t, a, n+1)
		expect(t, w, n+1, 1)
		w.Stop()
		if _, ok := <-w.ResultChan(); ok {
			t.Error("an event after Stop")
		}
	})
}

// Stop with a backlog queued ends the sending goroutine (goleak checks it)
// and closes the channel; writes after it go to no one.
func TestWatchStopsWithABacklog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, err := NewAPIServer(1)
		if err != nil {
			t.Fatal(err)
		}
		w := a.startWatch()
		for r := 1; r <= 2*watchBuffer; r++ {
			update(t, a, r)
		}
		w.Stop()
		w.Stop() // twice is harmless
		update(t, a, 2*watchBuffer+1)
		n := 0
		for range w.ResultChan() {
			n++
		}
		if n > 2*watchBuffer {
			t.Errorf("%d events after Stop, want at most the %d written before", n, 2*watchBuffer)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if len(a.watchers) != 0 {
			t.Errorf("%d watchers after Stop, want 0", len(a.watchers))
		}
	})
}

// Writers racing a reader that keeps about up (the channel fills and
// empties, the goroutine starts and stops) deliver every write once, in
// the order of the writes.
func TestWatchKeepsOrderUnderARacingReader(t *testing.T) {
	a, err := NewAPIServer(1)
	if err != nil {
		t.Fatal(err)
	}
	w := a.startWatch()
	const n = 20_000
	var wg sync.WaitGroup
	defer wg.Wait()
	defer w.Stop() // first, should expect fail
	wg.Go(func() {
		for r := 1; r <= n; r++ {
			if err := a.UpdateSpec(ctlbench.Name(0), func(d *App) { d.Spec.Replicas = int32(r) }); err != nil {
				t.Error(err) // not Fatal: not the test's goroutine
				return
			}
		}
	})
	expect(t, w, 1, n)
}

package oscillation_test

import (
	"fmt"
	"time"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/reconcile/oscillation"
)

func ExampleDetector() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	replicas := diff.MustParsePath(".spec.replicas")
	d := oscillation.New(oscillation.Config{})
	for i := range 3 {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		// Another manager sets replicas, then this manager sets it back.
		d.Observe(oscillation.Write{Time: at, Foreign: []diff.Path{replicas}})
		for _, r := range d.Observe(oscillation.Write{Time: at.Add(time.Second), Self: true, Owned: []diff.Path{replicas}}) {
			fmt.Println(r.Kind, r.Message())
		}
	}
	// Output: Fight fight: re-set .spec.replicas 3 times within 1m0s after another manager changed it
}

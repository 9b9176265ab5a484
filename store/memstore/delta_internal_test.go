package memstore

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/store/kv"
)

// A delta spells the value exactly from its base, whatever the two are, and
// is short when they differ in a few places. An eighth of the pairs under
// -race (see race.Sweep): one goroutine, whose every pair the race
// detector slows about thirtyfold.
func TestDeltaSpellsTheValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	alphabet := []byte(`{}",:abc0123456789`)
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	for i := range race.Sweep(20000, 8) {
		base := random(rng.IntN(300))
		v := bytes.Clone(base)
		for range rng.IntN(6) { // a few edits: replace, insert or cut a span
			at := rng.IntN(len(v) + 1)
			end := min(len(v), at+rng.IntN(40))
			v = append(v[:at:at], append(random(rng.IntN(40)), v[end:]...)...)
		}
		if i%10 == 0 {
			v = random(rng.IntN(300)) // unrelated
		}
		d := encodeDelta(nil, v, base)
		got, ok := applyDelta(nil, d, base)
		require.True(t, ok)
		require.Equal(t, string(v), string(got), "base %q", base)
	}

	base := bytes.Repeat([]byte(`{"type":"Ready","status":"True","message":"4/4 running"},`), 16)
	v := bytes.Clone(base)
	copy(v[100:], "False")
	copy(v[700:], "3/4")
	d := encodeDelta(nil, v, base)
	require.Less(t, len(d), 40, "a delta of two small edits of %d bytes", len(v))
	// A value with a whole entry more than its base (a manager's record
	// that the next write dropped) adds that entry and copies the rest,
	// and one with another word where its base has one that recurs
	// further on does not skip to there.
	entry := []byte(`{"manager":"dashboard","operation":"Update","subresource":"status","fields":"~N7AoRgQAEB"},`)
	v = append(append(bytes.Clone(base[:300]), entry...), base[300:]...)
	d = encodeDelta(nil, v, base)
	require.Less(t, len(d), len(entry)+20, "a delta of an entry of %d bytes added", len(entry))
	v = bytes.Replace(base, []byte(`"True"`), []byte(`"Ready"`), 1)
	d = encodeDelta(nil, v, base)
	require.Less(t, len(d), 20, "a delta of one word replaced by another that recurs")
	_, ok := applyDelta(nil, []byte{0xff}, base)
	require.False(t, ok, "a truncated delta")
}

// The fleet demo's values: two writes of its controller, and a dashboard's
// overwrite between them.
var (
	demoRunning3  = []byte(`{"metadata":{"kind":"Group","name":"web-00","uid":"1ad25a2b-64af-43ae-bbff-db1dd71ec69b","managed":[{"manager":"deployer","operation":"Update","fields":"~9f19GADg"},{"manager":"fleet-controller-loop","operation":"Apply","subresource":"status","fields":"~N7AoRgEPg"},{"manager":"fleet-controller","operation":"Update","subresource":"status","fields":"~N7AoRg6AcB"}],"lastWrite":{"manager":"fleet-controller","op":"UpdateStatus"},"generation":1,"statusGeneration":21},"spec":{"replicas":4,"image":"web:v1"},"status":{"running":3},"conditions":[{"type":"Reconciling","status":"False","reason":"Reconciled","message":"fleet-controller: generation 1 reconciled","lastTransitionTime":"2026-12-02T02:50:53.045930363Z"},{"type":"Ready","status":"False","reason":"Progressing","message":"3/4 running web:v1","lastTransitionTime":"2026-12-02T02:50:55.183443459Z","observedGeneration":1}]}`)
	demoRunning4  = []byte(`{"metadata":{"kind":"Group","name":"web-00","uid":"1ad25a2b-64af-43ae-bbff-db1dd71ec69b","managed":[{"manager":"deployer","operation":"Update","fields":"~9f19GADg"},{"manager":"fleet-controller-loop","operation":"Apply","subresource":"status","fields":"~N7AoRgEPg"},{"manager":"fleet-controller","operation":"Update","subresource":"status","fields":"~N7AoRg6AcB"}],"lastWrite":{"manager":"fleet-controller","op":"UpdateStatus"},"generation":1,"statusGeneration":22},"spec":{"replicas":4,"image":"web:v1"},"status":{"running":4},"conditions":[{"type":"Reconciling","status":"False","reason":"Reconciled","message":"fleet-controller: generation 1 reconciled","lastTransitionTime":"2026-12-02T02:50:53.045930363Z"},{"type":"Ready","status":"True","reason":"AllRunning","message":"4/4 running web:v1","lastTransitionTime":"2026-12-02T02:50:55.254647512Z","observedGeneration":1}]}`)
	demoDashboard = []byte(`{"metadata":{"kind":"Group","name":"web-00","uid":"1ad25a2b-64af-43ae-bbff-db1dd71ec69b","managed":[{"manager":"deployer","operation":"Update","fields":"~9f19GADg"},{"manager":"fleet-controller-loop","operation":"Apply","subresource":"status","fields":"~N7AoRgEPg"},{"manager":"fleet-controller","operation":"Update","subresource":"status","fields":"~N7AoRgqAY"},{"manager":"dashboard","operation":"Update","subresource":"status","fields":"~N7AoRgQAEB"}],"lastWrite":{"manager":"dashboard","op":"UpdateStatus"},"generation":1,"statusGeneration":15},"spec":{"replicas":4,"image":"web:v1"},"status":{"running":99},"conditions":[{"type":"Reconciling","status":"False","reason":"Reconciled","message":"fleet-controller: generation 1 reconciled","lastTransitionTime":"2026-12-02T02:50:53.045930363Z"},{"type":"Ready","status":"True","reason":"LooksFine","message":"99/4 running (says the dashboard)","lastTransitionTime":"2026-12-02T02:50:54.143673198Z","observedGeneration":1}]}`)
)

// The controller-shaped benchmark's values (bench/cmd/ctl-steady): another
// writer's spec update, and the controller's status apply that follows.
var (
	ctlSpecUpdated      = []byte(`{"metadata":{"kind":"App","name":"app-00042","uid":"a1481bf9-a495-4df5-9dc0-2cf3ac01185c","managed":[{"manager":"user","operation":"Update","fields":"~U8kYlQ_g"},{"manager":"app-controller","operation":"Apply","subresource":"status","fields":"~Dha_owBA"}],"lastWrite":{"manager":"user","op":"Update"},"generation":7,"statusGeneration":5},"spec":{"replicas":3,"image":"registry.example.com/team/app:v1.2.3","args":["--listen=:8080","--verbose","--config=/etc/app/config.yaml"],"selector":{"app":"app-00042","tier":"backend","zone":"z2"}},"status":{"readyReplicas":2}}`)
	ctlStatusApplied    = []byte(`{"metadata":{"kind":"App","name":"app-00042","uid":"a1481bf9-a495-4df5-9dc0-2cf3ac01185c","managed":[{"manager":"user","operation":"Update","fields":"~U8kYlQ_g"},{"manager":"app-controller","operation":"Apply","subresource":"status","fields":"~Dha_owBA"}],"lastWrite":{"manager":"app-controller","op":"ApplyStatus"},"generation":7,"statusGeneration":6},"spec":{"replicas":3,"image":"registry.example.com/team/app:v1.2.3","args":["--listen=:8080","--verbose","--config=/etc/app/config.yaml"],"selector":{"app":"app-00042","tier":"backend","zone":"z2"}},"status":{"readyReplicas":3}}`)
	ctlSpecUpdatedAgain = []byte(`{"metadata":{"kind":"App","name":"app-00042","uid":"a1481bf9-a495-4df5-9dc0-2cf3ac01185c","managed":[{"manager":"user","operation":"Update","fields":"~U8kYlQ_g"},{"manager":"app-controller","operation":"Apply","subresource":"status","fields":"~Dha_owBA"}],"lastWrite":{"manager":"user","op":"Update"},"generation":8,"statusGeneration":6},"spec":{"replicas":4,"image":"registry.example.com/team/app:v1.2.3","args":["--listen=:8080","--verbose","--config=/etc/app/config.yaml"],"selector":{"app":"app-00042","tier":"backend","zone":"z2"}},"status":{"readyReplicas":3}}`)
)

// An old value the history keeps as a delta is a slice of the delta's own
// length, allocated once: appending to nil grew it three or four times and
// left slack the history held for as long as it kept the event.
func TestAgedValuesHoldNoSlack(t *testing.T) {
	h := newHistory(16, 0) // no budget: every event ages
	h.agingLag = 1
	vals := [][]byte{ctlSpecUpdated, ctlStatusApplied, ctlSpecUpdatedAgain, ctlStatusApplied}
	for i, v := range vals {
		var prev *kv.KeyValue
		if i > 0 {
			prev = &kv.KeyValue{Key: "k", Value: vals[i-1], CreateRevision: 1, ModRevision: int64(i)}
		}
		h.add("k", false, v, 1, prev)
	}
	for rev := int64(1); rev <= 2; rev++ {
		ev := h.at(rev)
		require.True(t, ev.valDelta, "the value of revision %d is kept as a delta", rev)
		require.Equal(t, len(ev.val), cap(ev.val), "the delta of revision %d", rev)
		require.Equal(t, string(vals[rev-1]), string(h.value(rev)))
	}
	allocs := testing.AllocsPerRun(100, func() { newDelta(ctlSpecUpdated, ctlStatusApplied) })
	require.Equal(t, 1.0, allocs)
}

// BenchmarkEncodeDelta is the history's cost per aged write in the fleet
// demo and in the controller-shaped benchmark: an old value encoded against
// the key's next.
func BenchmarkEncodeDelta(b *testing.B) {
	for _, tc := range []struct {
		name    string
		v, base []byte
	}{
		{"controller", demoRunning3, demoRunning4},
		{"dashboard", demoRunning4, demoDashboard},
		{"repair", demoDashboard, demoRunning4},
		{"ctl-spec", ctlSpecUpdated, ctlStatusApplied},
		{"ctl-status", ctlStatusApplied, ctlSpecUpdatedAgain},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var d []byte
			b.ReportAllocs()
			for b.Loop() {
				d = encodeDelta(nil, tc.v, tc.base)
			}
			b.ReportMetric(float64(len(d)), "bytes")
		})
	}
}

// resync picks the place a search of base for each of v's places would:
// the fewest bytes added and skipped together, the fewest added of those.
// An eighth of the pairs under -race (see race.Sweep): one goroutine,
// whose every pair the race detector slows about sevenfold.
func TestResyncPicksTheNearestPlace(t *testing.T) {
	search := func(v, base []byte) (add, skip int) {
		add, skip = len(v), len(base)
		for a := 0; a <= min(deltaReach, len(v)-deltaAnchor); a++ {
			if s := bytes.Index(base, v[a:a+deltaAnchor]); s >= 0 && a+s < add+skip {
				add, skip = a, s
			}
		}
		return add, skip
	}
	rng := rand.New(rand.NewPCG(3, 5))
	alphabet := []byte(`{}",:ab01`)
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	for i := range race.Sweep(20000, 8) {
		// Two letters make anchors recur everywhere, and ties common.
		alphabet = alphabet[:2+7*(i%2)]
		base := random(rng.IntN(600))
		v := random(rng.IntN(400))
		if rng.IntN(2) == 0 && len(base) > 0 { // v resumes somewhere in base
			at := rng.IntN(len(base))
			v = append(v, base[at:]...)
		}
		if len(v) > 0 && len(base) > 0 && v[0] == base[0] {
			continue // resync starts where the two differ
		}
		wantAdd, wantSkip := search(v, base)
		add, skip := resync(v, base)
		require.Equal(t, [2]int{wantAdd, wantSkip}, [2]int{add, skip}, "v %q\nbase %q", v, base)
	}
}

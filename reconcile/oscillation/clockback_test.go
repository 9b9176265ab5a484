package oscillation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The clock set back (a wall clock stepped backwards, an injected clock
// moved back) between writes: the writes kept from after the new time
// used to stay "within the window" until the clock caught up with them,
// so a steady pace of writes that never makes a report made one soon
// after. Each kind, with thresholds of 3: two writes, the clock set back
// an hour, two more writes are no oscillation; a third after the set
// back, at the same pace, is one (the detector still works).
func TestClockSetBackIsNoOscillation(t *testing.T) {
	cfg := Config{Window: time.Minute, FightWrites: 3, NoProgressWrites: 3, MaxWrites: 3, MaxStatusWrites: 3}
	back := -time.Hour
	for _, tt := range []struct {
		name  string
		kind  Kind
		write func(at time.Duration) []Write // one round of writes at offset at
	}{
		{"NoProgress", NoProgress, func(at time.Duration) []Write { return []Write{self(at, ".metadata.labels.hash")} }},
		{"TooManyWrites", TooManyWrites, func(at time.Duration) []Write {
			// A foreign change between self's writes: progress, so no
			// NoProgress; the budget still counts.
			return []Write{other(at, ".metadata.labels.other"), self(at, ".metadata.labels.hash")}
		}},
		{"Throttled", Throttled, func(at time.Duration) []Write { return []Write{self(at, ".status.phase")} }},
		{"Fight", Fight, func(at time.Duration) []Write {
			return []Write{other(at, ".metadata.labels.x"), self(at, ".metadata.labels.x")}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := New(cfg)
			var got []Report
			// The budget kinds report beyond 3 (the 4th); the others at 3.
			rounds := 2
			if tt.kind == TooManyWrites || tt.kind == Throttled {
				rounds = 3
			}
			for i := range rounds {
				got = append(got, feed(d, tt.write(time.Duration(i)*10*time.Second)...)...)
			}
			for i := range rounds {
				got = append(got, feed(d, tt.write(back+time.Duration(i)*10*time.Second)...)...)
			}
			require.Empty(t, kinds(got, tt.kind), "no %v from the writes before the clock was set back", tt.kind)
			got = feed(d, tt.write(back+time.Duration(rounds)*10*time.Second)...)
			require.Len(t, kinds(got, tt.kind), 1, "one more write within the window after it is a %v", tt.kind)
		})
	}
}

// kinds returns the reports of kind k.
func kinds(rs []Report, k Kind) []Report {
	var out []Report
	for _, r := range rs {
		if r.Kind == k {
			out = append(out, r)
		}
	}
	return out
}

// A detector whose writes are all after now (the clock was set back) is
// idle: they can never count, as the next write drops them. It used to
// be kept until the clock caught up with them, an hour here.
func TestIdleAfterTheClockIsSetBack(t *testing.T) {
	for _, w := range [][]Write{
		{self(0, ".metadata.labels.hash")},
		{self(0, ".status.phase")},
		{other(0, ".metadata.labels.x"), self(time.Second, ".metadata.labels.x")},
	} {
		d := New(Config{})
		feed(d, w...)
		require.False(t, d.Idle(t0.Add(time.Second)), "within the window")
		require.True(t, d.Idle(t0.Add(2*time.Minute)), "past it")
		require.True(t, d.Idle(t0.Add(-time.Hour)), "the clock set back: nothing kept can count")
		require.True(t, d.Idle(t0.Add(-time.Second)), "nor set back by a second")
	}
}

// The zero Report says it reports nothing; an unknown kind is named.
func TestZeroReportMessage(t *testing.T) {
	require.Equal(t, "no oscillation to report", Report{}.Message())
	require.Equal(t, "oscillation of unknown kind 9: 2 writes within 1m0s to .a", Report{Kind: 9, Writes: 2, Window: time.Minute, Paths: ps(".a")}.Message())
}

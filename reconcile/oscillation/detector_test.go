package oscillation

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/race"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const replicas = ".spec.replicas"

// ps parses paths written in diff.Path notation.
func ps(paths ...string) []diff.Path {
	out := make([]diff.Path, len(paths))
	for i, p := range paths {
		out[i] = diff.MustParsePath(p)
	}
	return out
}

func self(at time.Duration, owned ...string) Write {
	return Write{Time: t0.Add(at), Self: true, Owned: ps(owned...)}
}

func other(at time.Duration, foreign ...string) Write {
	return Write{Time: t0.Add(at), Foreign: ps(foreign...)}
}

// feed observes ws in order and returns every oscillation reported.
func feed(d *Detector, ws ...Write) []Report {
	var out []Report
	for _, w := range ws {
		out = append(out, d.Observe(w)...)
	}
	return out
}

func TestDetectorFight(t *testing.T) {
	tests := []struct {
		name   string
		writes []Write
		want   []Report
	}{
		{
			name: "three re-sets within a minute",
			writes: []Write{
				other(0, replicas), self(1*time.Second, replicas),
				other(2*time.Second, replicas), self(3*time.Second, replicas),
				other(4*time.Second, replicas), self(5*time.Second, replicas),
			},
			want: []Report{{Kind: Fight, Paths: ps(replicas), Writes: 3, Window: time.Minute}},
		},
		{
			name: "two re-sets are not a fight",
			writes: []Write{
				other(0, replicas), self(1*time.Second, replicas),
				other(2*time.Second, replicas), self(3*time.Second, replicas),
			},
		},
		{
			name: "re-sets spread over more than the window",
			writes: []Write{
				other(0, replicas), self(1*time.Second, replicas),
				other(40*time.Second, replicas), self(41*time.Second, replicas),
				other(80*time.Second, replicas), self(81*time.Second, replicas),
			},
		},
		{
			name: "self writes of a path nobody else changed are not re-sets",
			writes: []Write{
				self(0, replicas), self(time.Second, replicas), self(2*time.Second, replicas),
				other(3*time.Second, ".spec.image"),
			},
		},
		{
			name: "other manager changes other paths: no fight",
			writes: []Write{
				other(0, ".spec.image"), self(1*time.Second, replicas),
				other(2*time.Second, ".spec.image"), self(3*time.Second, replicas),
				other(4*time.Second, ".spec.image"), self(5*time.Second, replicas),
			},
		},
		{
			name: "a path the other manager changed while self owned it still counts",
			writes: []Write{
				{Time: t0, Owned: ps(replicas)}, self(1*time.Second, replicas),
				{Time: t0.Add(2 * time.Second), Owned: ps(replicas)}, self(3*time.Second, replicas),
				{Time: t0.Add(4 * time.Second), Owned: ps(replicas)}, self(5*time.Second, replicas),
			},
			want: []Report{{Kind: Fight, Paths: ps(replicas), Writes: 3, Window: time.Minute}},
		},
		{
			name: "two flipping paths are both named",
			writes: []Write{
				other(0, replicas, ".spec.image"), self(1*time.Second, replicas, ".spec.image"),
				other(2*time.Second, replicas, ".spec.image"), self(3*time.Second, replicas, ".spec.image"),
				other(4*time.Second, replicas, ".spec.image"), self(5*time.Second, replicas, ".spec.image"),
			},
			want: []Report{{Kind: Fight, Paths: ps(".spec.image", replicas), Writes: 3, Window: time.Minute}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, feed(New(Config{}), tt.writes...))
		})
	}
}

func TestDetectorFightReportsOncePerThreshold(t *testing.T) {
	d := New(Config{})
	var got []Report
	for i := range 9 {
		at := time.Duration(i) * 2 * time.Second
		got = append(got, feed(d, other(at, replicas), self(at+time.Second, replicas))...)
	}
	require.Len(t, got, 3, "nine re-sets, three reports")
}

func TestDetectorNoProgress(t *testing.T) {
	label := `.metadata.labels["hash"]`
	tests := []struct {
		name   string
		writes func() []Write
		want   []Report
	}{
		{
			name: "ten writes with nothing else changing",
			writes: func() (ws []Write) {
				for i := range 10 {
					ws = append(ws, self(time.Duration(i)*time.Second, label))
				}
				return ws
			},
			want: []Report{{Kind: NoProgress, Paths: ps(label), Writes: 10, Window: time.Minute}},
		},
		{
			name: "nine writes are fine",
			writes: func() (ws []Write) {
				for i := range 9 {
					ws = append(ws, self(time.Duration(i)*time.Second, label))
				}
				return ws
			},
		},
		{
			name: "a foreign change in between is progress",
			writes: func() (ws []Write) {
				for i := range 10 {
					ws = append(ws, self(time.Duration(i)*time.Second, label))
					if i == 4 {
						ws = append(ws, other(time.Duration(i)*time.Second+time.Millisecond, ".spec.image"))
					}
				}
				return ws
			},
		},
		{
			name: "ten writes spread over more than the window",
			writes: func() (ws []Write) {
				for i := range 10 {
					ws = append(ws, self(time.Duration(i)*7*time.Second, label))
				}
				return ws
			},
		},
		{
			name: "a self write that changes a foreign path is progress",
			writes: func() (ws []Write) {
				for i := range 10 {
					w := self(time.Duration(i)*time.Second, label)
					if i == 5 {
						w.Foreign = ps(".spec.image")
					}
					ws = append(ws, w)
				}
				return ws
			},
		},
		{
			name: "paths of all counted writes are named",
			writes: func() (ws []Write) {
				for i := range 10 {
					w := self(time.Duration(i)*time.Second, label)
					if i%2 == 1 {
						w.Owned = append(w.Owned, ps(".status.phase")...)
					}
					ws = append(ws, w)
				}
				return ws
			},
			want: []Report{{Kind: NoProgress, Paths: ps(label, ".status.phase"), Writes: 10, Window: time.Minute}},
		},
		{
			// A status tracking an outside system ("2/3 running") changes
			// on every write: it reports, it does not loop.
			name: "status-only writes do not count",
			writes: func() (ws []Write) {
				for i := range 30 {
					ws = append(ws, self(time.Duration(i)*time.Second, ".status.message", `.conditions[type="Ready"].message`))
				}
				return ws
			},
		},
		{
			name: "status-only writes neither count nor reset the count",
			writes: func() (ws []Write) {
				for i := range 10 {
					ws = append(ws, self(time.Duration(2*i)*time.Second, label))
					ws = append(ws, self(time.Duration(2*i+1)*time.Second, ".status"))
				}
				return ws
			},
			want: []Report{{Kind: NoProgress, Paths: ps(label), Writes: 10, Window: time.Minute}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, feed(New(Config{}), tt.writes()...))
		})
	}
}

func TestDetectorConfigAndZeroValue(t *testing.T) {
	var zero Detector // defaults
	ws := []Write{other(0, replicas), self(time.Second, replicas), other(2*time.Second, replicas),
		self(3*time.Second, replicas), other(4*time.Second, replicas), self(5*time.Second, replicas)}
	require.Len(t, feed(&zero, ws...), 1)

	// An injected window and thresholds.
	d := New(Config{Window: time.Second, FightWrites: 2, NoProgressWrites: 3})
	require.Len(t, feed(d, ws[:4]...), 0, "re-sets 2s apart fall outside a 1s window")
	d = New(Config{Window: 10 * time.Second, FightWrites: 2, NoProgressWrites: 3})
	require.Equal(t, []Report{{Kind: Fight, Paths: ps(replicas), Writes: 2, Window: 10 * time.Second}}, feed(d, ws[:4]...))
	got := feed(New(Config{NoProgressWrites: 3}), self(0, ".a"), self(1, ".a"), self(2, ".a"))
	require.Len(t, got, 1)
	require.Equal(t, NoProgress, got[0].Kind)
}

func TestDetectorIdle(t *testing.T) {
	d := New(Config{})
	require.True(t, d.Idle(t0))
	d.Observe(self(0, ".a"))
	require.False(t, d.Idle(t0.Add(time.Second)))
	require.True(t, d.Idle(t0.Add(2*time.Minute)))
	d.Observe(other(3*time.Minute, ".b"))
	require.False(t, d.Idle(t0.Add(time.Hour)), "a pending change by another manager still counts")
}

func TestOscillationMessage(t *testing.T) {
	o := Report{Kind: Fight, Paths: ps(replicas), Writes: 3, Window: time.Minute}
	require.Equal(t, "fight: re-set .spec.replicas 3 times within 1m0s after another manager changed it", o.Message())
	o = Report{Kind: NoProgress, Paths: ps(".a", ".b"), Writes: 10, Window: time.Minute}
	require.Equal(t, "no progress: 10 writes within 1m0s to .a, .b with no change to any field this manager does not own", o.Message())
	require.Equal(t, "Fight", Fight.String())
	require.Equal(t, "NoProgress", NoProgress.String())
	require.Equal(t, "Unknown", Kind(0).String())
}

func TestStatusOnlyPaths(t *testing.T) {
	for _, tt := range []struct {
		paths []diff.Path
		want  bool
	}{
		{ps(".status"), true},
		{ps(".status.phase", `.conditions[type="Ready"].message`), true},
		{ps(`.conditions[type="Ready"]`), true},
		{ps(".status.phase", ".spec.replicas"), false},
		{ps(".metadata.labels.status"), false},
		{ps(".statusx"), false},
	} {
		_, only := sidesOf(tt.paths)
		require.Equal(t, tt.want, only, "%v", tt.paths)
	}
}

// The status budget, set to 30 here (its default is 120): status-only
// writes by self within a minute beyond it are Throttled (writes of more
// than the status side spend MaxWrites: statusbudget_test.go).
func TestDetectorWriteBudget(t *testing.T) {
	status := func(n int, every time.Duration) (ws []Write) {
		for i := range n {
			ws = append(ws, self(time.Duration(i)*every, ".status.phase"))
		}
		return ws
	}
	cfg := Config{MaxStatusWrites: 30}
	budget := Report{Kind: Throttled, Paths: ps(".status.phase"), Writes: 31, Window: time.Minute}

	// The 31st write within a minute is beyond the budget.
	require.Equal(t, []Report{budget}, feed(New(cfg), status(31, time.Second)...))
	// Every further write while it stays spent is reported again.
	d := New(cfg)
	feed(d, status(31, time.Second)...)
	over := d.Observe(self(31*time.Second, ".status.phase"))
	require.Len(t, over, 1)
	require.Equal(t, Throttled, over[0].Kind)
	// One write every 2s stays within it for ever.
	require.Empty(t, feed(New(cfg), status(100, 2*time.Second)...))
	// A change to the spec (a new generation) starts the budget over.
	ws := status(30, time.Second)
	ws = append(ws, other(30*time.Second, ".spec.replicas"), self(31*time.Second, ".status.phase"))
	require.Empty(t, feed(New(cfg), ws...))
	// The budget is a Config field.
	require.Equal(t, []Report{{Kind: Throttled, Paths: ps(".status.phase"), Writes: 6, Window: time.Minute}},
		feed(New(Config{MaxStatusWrites: 5}), status(6, time.Second)...))
	require.Equal(t, "TooManyWrites", TooManyWrites.String())
	require.Contains(t, budget.Message(), "throttled: 31 status writes within 1m0s to .status.phase")
}

// The Detectors NewShared makes with one Config share it; those New
// makes with the defaults share one copy of them, and the zero Detector
// uses them too; New with another Config gives each Detector its own
// copy, which a later change to the caller's Config leaves as it was.
func TestDetectorsShareTheirConfig(t *testing.T) {
	cfg := Config{MaxWrites: 7}.WithDefaults()
	a, b := NewShared(&cfg), NewShared(&cfg)
	require.Same(t, &cfg, a.cfg)
	require.Same(t, &cfg, b.cfg)
	d1, d2 := New(Config{}), New(Config{FightWrites: DefaultFightWrites})
	require.Same(t, d1.cfg, d2.cfg, "the defaults, however spelled")
	var z Detector
	require.Empty(t, z.Observe(Write{Time: time.Unix(100, 0), Self: true, Owned: []diff.Path{diff.MustParsePath(".spec.a")}}))
	require.Same(t, d1.cfg, z.cfg)
	require.Equal(t, Config{}.WithDefaults(), *z.cfg)
	own := Config{MaxWrites: 8}
	c, e := New(own), New(own)
	require.NotSame(t, c.cfg, e.cfg)
	own.MaxWrites = 9
	require.Equal(t, 8, c.cfg.MaxWrites, "a copy, not the caller's")
	require.Equal(t, DefaultWindow, c.cfg.Window, "with the defaults")
}

// NewShared with a Config left for the defaults, or nil, makes a copy
// with them, as New does: a zero threshold never reaches a Detector.
func TestNewSharedFillsTheDefaultsOfAnIncompleteConfig(t *testing.T) {
	partial := Config{MaxWrites: 5}
	d := NewShared(&partial)
	require.NotSame(t, &partial, d.cfg)
	require.Equal(t, partial.WithDefaults(), *d.cfg)
	require.Equal(t, Config{}.WithDefaults(), *NewShared(nil).cfg)
	// Throttled at the default status budget, not at a zero one.
	require.Empty(t, feed(NewShared(&Config{}), Write{Time: t0, Self: true, Owned: ps(".status.phase")}))
}

// A Detector NewShared makes allocates itself alone: a Loop makes one for
// every object it writes. New with the defaults does too.
func TestNewSharedAllocatesTheDetectorAlone(t *testing.T) {
	if race.Enabled {
		t.Skip("counts allocations")
	}
	cfg := Config{MaxWrites: 9}.WithDefaults()
	require.Equal(t, 1.0, testing.AllocsPerRun(100, func() { kept = NewShared(&cfg) }))
	require.Equal(t, 1.0, testing.AllocsPerRun(100, func() { kept = New(Config{}) }))
}

// kept keeps what a test makes, as a Loop does.
var kept *Detector

// The Detector of a controller that writes only its object's status,
// while another writer changes the spec (the usual controller, and the
// controller benchmark's), is one allocation for as long as it lives: the
// spec path another manager changed, which self never re-sets, and the
// one status write the budget holds between two spec changes, sit in the
// Detector. So do the status writes of a key written less often than once
// a window, each the only one its budget holds.
func TestAStatusWritersDetectorIsOneAllocation(t *testing.T) {
	if race.Enabled {
		t.Skip("counts allocations")
	}
	spec, status := ps(replicas), ps(".status.readyReplicas")
	var at time.Duration
	next := func(d time.Duration) time.Time { at += d; return t0.Add(at) }
	cfg := Config{MaxWrites: 9}.WithDefaults()
	require.Equal(t, 1.0, testing.AllocsPerRun(100, func() {
		d := NewShared(&cfg)
		for range 5 {
			d.Observe(Write{Time: next(time.Millisecond), Foreign: spec})
			d.Observe(Write{Time: next(time.Millisecond), Self: true, Owned: status})
		}
		for range 5 {
			d.Observe(Write{Time: next(2 * d.cfg.Window), Self: true, Owned: status})
		}
		kept = d
	}), "allocations of a Detector and its writes")
	require.Len(t, kept.changedByOther, 1)
	require.True(t, kept.borrowed, "the spec's list, as given")
	require.Len(t, kept.statusBudget, 1)
}

// A Detector keeps a list of paths another manager changed as it was
// given (see changedByOthers), and never modifies one: a Loop gives every
// key's Detector the same lists. Fed the same list values again and again,
// it reports what a Detector fed a copy of each list at each write reports,
// and every list keeps its paths.
func TestDetectorNeverModifiesTheListsItKeeps(t *testing.T) {
	universe := ps(".metadata.labels.l", ".spec.a", ".spec.b", ".spec.c", ".status.x")
	lists := [][]diff.Path{nil}
	for mask := 1; mask < 1<<len(universe); mask++ {
		var l []diff.Path
		for i, p := range universe {
			if mask&(1<<i) != 0 {
				l = append(l, p)
			}
		}
		lists = append(lists, l)
		if len(l) > 1 { // and out of order
			lists = append(lists, append([]diff.Path{l[len(l)-1]}, l[:len(l)-1]...))
		}
	}
	want := make([][]string, len(lists))
	for i, l := range lists {
		for _, p := range l {
			want[i] = append(want[i], p.String())
		}
	}
	clone := func(l []diff.Path) []diff.Path {
		out := make([]diff.Path, len(l))
		for i, p := range l {
			out[i] = slices.Clone(p)
		}
		return out
	}
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		cfg := Config{FightWrites: 2, NoProgressWrites: 3, MaxWrites: 4, MaxStatusWrites: 3, Window: time.Minute}
		shared, copied := New(cfg), New(cfg)
		at := t0
		for step := range 60 {
			at = at.Add(time.Duration(r.IntN(40)) * time.Second)
			w := Write{Time: at, Self: r.IntN(2) == 0, Owned: lists[r.IntN(len(lists))], Foreign: lists[r.IntN(len(lists))]}
			c := w
			c.Owned, c.Foreign = clone(w.Owned), clone(w.Foreign)
			require.Equal(t, copied.Observe(c), shared.Observe(w), "seed %d, step %d", seed, step)
			for i, l := range lists {
				var got []string
				for _, p := range l {
					got = append(got, p.String())
				}
				require.Equal(t, want[i], got, "seed %d, step %d: list %d", seed, step, i)
			}
		}
	}
}

// A Detector whose budget emptied (a spec change) takes the next write's
// time as the base of the times it keeps, and counts them within the
// window as it did from the first write's.
func TestStatusBudgetCountsAcrossANewBase(t *testing.T) {
	d := New(Config{MaxStatusWrites: 3})
	require.Empty(t, feed(d, self(0, ".status.a"), self(time.Second, ".status.a"), other(2*time.Second, replicas)))
	// The budget is empty: the base moves to 10s.
	require.Empty(t, feed(d, self(10*time.Second, ".status.a"), self(20*time.Second, ".status.a"), self(30*time.Second, ".status.a")))
	got := feed(d, self(40*time.Second, ".status.b"))
	require.Len(t, got, 1)
	require.Equal(t, Throttled, got[0].Kind)
	require.Equal(t, 4, got[0].Writes)
	// 10s drops out of the window at 70s, and 20s at 80s: three in it.
	require.Empty(t, feed(d, other(65*time.Second, ".metadata.labels.x")))
	got = feed(d, self(79*time.Second, ".status.a"))
	require.Len(t, got, 1, "20s, 30s, 40s and 79s are within the window")
	require.Empty(t, feed(d, self(90*time.Second, ".status.a")), "30s is out: 40s, 79s, 90s")
}

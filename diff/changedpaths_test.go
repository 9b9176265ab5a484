package diff

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/race"
)

type cpPort struct {
	Name string `json:"name"`
	Port int    `json:"port"`
}

type cpInner struct {
	Note string `json:"note"`
}

type cpValue struct {
	Name   string            `json:"name"`
	Count  int               `json:"count"`
	Ratio  float64           `json:"ratio"`
	On     bool              `json:"on"`
	Labels map[string]string `json:"labels"`
	ByID   map[int]cpPort    `json:"byID"`
	Ports  []cpPort          `json:"ports" steady:"keys=name"`
	Tags   []string          `json:"tags" steady:"set"`
	List   []int             `json:"list"`
	Ptr    *cpInner          `json:"ptr"`
	At     time.Time         `json:"at"`
	Any    any               `json:"any"`
	Raw    []byte            `json:"raw"`
	*cpInner
}

func randomCPValue(rng *rand.Rand) cpValue {
	pick := func(n int) int { return rng.IntN(n) }
	var v cpValue
	v.Name = fmt.Sprint("n", pick(2))
	v.Count = pick(3)
	v.Ratio = float64(pick(2)) / 2
	v.On = pick(2) == 0
	if pick(3) > 0 {
		v.Labels = map[string]string{}
		for range pick(3) {
			v.Labels[fmt.Sprint("k", pick(3))] = fmt.Sprint("v", pick(2))
		}
	}
	if pick(2) == 0 {
		v.ByID = map[int]cpPort{}
		for range pick(3) {
			v.ByID[pick(3)] = cpPort{Name: fmt.Sprint("p", pick(2)), Port: pick(2)}
		}
	}
	for range pick(4) {
		v.Ports = append(v.Ports, cpPort{Name: fmt.Sprint("p", pick(3)), Port: pick(3)})
	}
	for range pick(4) {
		v.Tags = append(v.Tags, fmt.Sprint("t", pick(3)))
	}
	for range pick(3) {
		v.List = append(v.List, pick(3))
	}
	if pick(2) == 0 {
		v.Ptr = &cpInner{Note: fmt.Sprint(pick(2))}
	}
	v.At = time.Unix(int64(pick(2)), 0)
	switch pick(3) {
	case 1:
		v.Any = map[string]any{"a": float64(pick(2)), "b": []any{"x", float64(pick(2))}}
	case 2:
		v.Any = fmt.Sprint(pick(2))
	}
	if pick(2) == 0 {
		v.Raw = []byte{byte(pick(2))}
	}
	if pick(2) == 0 {
		v.cpInner = &cpInner{Note: fmt.Sprint(pick(2))}
	}
	return v
}

// ChangedPaths reports exactly the paths of Diff's changes, in order, on
// typed values of every kind Diff walks, with every kind of option, given
// one by one or grouped.
func TestChangedPathsIsDiffPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	optSets := [][]Option{
		nil,
		{EquateEmpty()},
		{ListSets(MustParsePath(".list")), ListKeys(MustParsePath(".ports"), "port")},
		{Ignore(MustParsePath(".labels.k1")), Only(MustParsePath(".labels"), MustParsePath(".ports"), MustParsePath(".any"))},
	}
	nonEmpty := 0
	for i := range 3000 {
		a, b := randomCPValue(rng), randomCPValue(rng)
		for _, opts := range optSets {
			want := Diff(a, b, opts...).Paths()
			got := ChangedPaths(a, b, opts...)
			require.True(t, slices.EqualFunc(want, got, Path.Equal), "case %d: ChangedPaths %v, Diff %v", i, got, want)
			grouped := ChangedPaths(&a, &b, Options(opts...))
			require.True(t, slices.EqualFunc(want, grouped, Path.Equal), "case %d: grouped options %v, Diff %v", i, grouped, want)
			if len(want) > 0 {
				nonEmpty++
			}
		}
	}
	require.Greater(t, nonEmpty, 1000, "most pairs differ")
	require.Nil(t, ChangedPaths(cpValue{Name: "x"}, cpValue{Name: "x"}))
}

// The paths ChangedPaths returns are the caller's: appending to one does
// not change another, and a later call does not change them.
func TestChangedPathsAreIndependent(t *testing.T) {
	ps := ChangedPaths(map[string]any{"a": 1.0, "b": 1.0}, map[string]any{"a": 2.0, "b": 2.0})
	require.Len(t, ps, 2)
	_ = append(ps[0], Element{Kind: FieldElem, Name: "x"})
	require.Equal(t, ".b", ps[1].String())
	_ = ChangedPaths(map[string]any{"c": 1.0}, map[string]any{"c": 2.0})
	require.Equal(t, ".a", ps[0].String())
	require.Equal(t, ".b", ps[1].String())
}

// A grouped option applied to a config does not let the config's later
// appends write into the group.
func TestOptionsGroupIsNotModifiedByLaterOptions(t *testing.T) {
	g := Options(Ignore(MustParsePath(".a")))
	x, y := map[string]any{"a": 1.0, "b": 1.0, "c": 1.0}, map[string]any{"a": 2.0, "b": 2.0, "c": 2.0}
	require.Equal(t, "[.c]", fmt.Sprint(Diff(x, y, g, Ignore(MustParsePath(".b"))).Paths()))
	require.Equal(t, "[.b .c]", fmt.Sprint(Diff(x, y, g).Paths()))
}

// A change of one field, the usual event (a replica count, a status
// field), costs ChangedPaths little memory: the path's copy is cut from an
// arena sized for it, not one of six elements (448 bytes for a path of
// one).
func TestChangedPathsOfOneFieldAllocatesLittle(t *testing.T) {
	if race.Enabled {
		t.Skip("counts allocations: under the race detector the differs' pool keeps none")
	}
	type spec struct {
		Replicas int64             `json:"replicas"`
		Image    string            `json:"image"`
		Selector map[string]string `json:"selector"`
	}
	a := spec{Replicas: 1, Image: "web", Selector: map[string]string{"app": "web"}}
	b := a
	b.Replicas = 2
	require.Equal(t, "[.replicas]", fmt.Sprint(ChangedPaths(&a, &b)))
	const n = 1000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		ChangedPaths(&a, &b)
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes a call", perCall)
	require.LessOrEqual(t, perCall, uint64(160), "bytes allocated a call (480 with an arena of six elements)")
}

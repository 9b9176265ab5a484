package reconcile

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// richStatus has the kinds whose equality is subtle: nil and empty maps
// and slices, NaN, pointers.
type richStatus struct {
	Phase  string         `json:"phase,omitempty"`
	Counts map[string]int `json:"counts,omitempty"`
	Items  []string       `json:"items,omitempty"`
	Ratio  float64        `json:"ratio,omitempty"`
	Ptr    *int           `json:"ptr,omitempty"`
}

// FromStore's source settles the status section of an event with its
// Store's equality of the status type, built once (reflect.DeepEqual,
// which the other sources use, walks the type on every call), and finds
// the sections reflect.DeepEqual finds, on random pairs of statuses and on
// an object compared with itself.
func TestStoreSourceSectionDiffAgreesWithDeepEqual(t *testing.T) {
	st, err := store.New[appSpec, richStatus](memstore.New(), "Rich")
	require.NoError(t, err)
	src := FromStore(cache.New[appSpec, richStatus](st), st).(storeSource[appSpec, richStatus])
	require.NotNil(t, src.statusEqual, "FromStore's source has its Store's status equality")
	rng := rand.New(rand.NewPCG(26, 1))
	one, two := 1, 2
	status := func() richStatus {
		var s richStatus
		s.Phase = []string{"", "Running", "Done"}[rng.IntN(3)]
		switch rng.IntN(4) {
		case 1:
			s.Counts = map[string]int{}
		case 2:
			s.Counts = map[string]int{"a": rng.IntN(2)}
		case 3:
			s.Counts = map[string]int{"a": 1, "b": rng.IntN(2)}
		}
		switch rng.IntN(3) {
		case 1:
			s.Items = []string{}
		case 2:
			s.Items = []string{"x", []string{"y", "z"}[rng.IntN(2)]}
		}
		s.Ratio = []float64{0, 0.5, math.NaN()}[rng.IntN(3)]
		s.Ptr = []*int{nil, &one, &two, new(int)}[rng.IntN(4)]
		return s
	}
	differ := 0
	for range 2000 {
		old := &store.Object[appSpec, richStatus]{Status: status()}
		new := &store.Object[appSpec, richStatus]{Status: status()}
		if rng.IntN(8) == 0 {
			new = old
		}
		want := sectionDiff(nil, old, new, nil)
		got := sectionDiff(nil, old, new, src.statusEqual)
		require.Equal(t, pathStrings(want), pathStrings(got), "%+v -> %+v", old.Status, new.Status)
		if len(want) > 0 {
			differ++
		}
	}
	require.Greater(t, differ, 200, "most pairs differ")
	require.Less(t, differ, 1900, "some do not")
}

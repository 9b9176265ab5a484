package store

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/objpath"
	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store/kv"
)

// fieldChangesFull is FieldChanges without its shortcuts: both sides'
// ownership decoded for every change. The specification FieldChanges must
// agree with.
func fieldChangesFull[S, T any](s *Store[S, T], old, new *Object[S, T], manager string) (owned, foreign []diff.Path) {
	specChanges := diff.Diff(specView[S]{metaViewOf(&old.Meta), old.Spec}, specView[S]{metaViewOf(&new.Meta), new.Spec},
		diff.ListSets(objpath.Finalizers), diff.EquateEmpty()).Paths()
	statusChanges := diff.Diff(statusView[T]{old.Status, nonNil(old.Conditions)}, statusView[T]{new.Status, nonNil(new.Conditions)},
		diff.ListKeys(objpath.Conditions, "type"), diff.EquateEmpty()).Paths()
	if old.Meta.DeletionRequested != new.Meta.DeletionRequested {
		foreign = append(foreign, objpath.DeletionRequested)
	}
	if len(specChanges)+len(statusChanges) == 0 {
		return owned, foreign
	}
	oldSpec, oldStatus := managedFull(s, old)
	newSpec, newStatus := managedFull(s, new)
	specOwned, specForeign := ownership.Attribute(manager, specChanges, oldSpec, newSpec)
	statusOwned, statusForeign := ownership.Attribute(manager, statusChanges, oldStatus, newStatus)
	return append(specOwned, statusOwned...), append(append(foreign, specForeign...), statusForeign...)
}

// managedFull is obj's ownership of each side, decoded afresh.
func managedFull[S, T any](s *Store[S, T], obj *Object[S, T]) (spec, status ownership.Managed) {
	raw, err := rawFromObject(obj)
	if err != nil {
		panic(err)
	}
	specT, err := specTree(raw)
	if err != nil {
		panic(err)
	}
	statusT, err := statusTree(raw)
	if err != nil {
		panic(err)
	}
	return s.schemas.decodeManaged(&raw.Meta, specSide, specT), s.schemas.decodeManaged(&raw.Meta, statusSide, statusT)
}

// changedByFull is ChangedBy without its shortcuts: ownership.ChangedBy of
// each path, from new's ownership of its side decoded afresh.
func changedByFull[S, T any](s *Store[S, T], new *Object[S, T], manager string, paths []diff.Path) (mine, others []diff.Path) {
	spec, status := managedFull(s, new)
	for _, p := range paths {
		m := spec
		if objpath.StatusSide(p) {
			m = status
		}
		if ownership.ChangedBy(manager, new.Meta.LastWrite.Manager, p, m) {
			mine = append(mine, p)
		} else {
			others = append(others, p)
		}
	}
	return mine, others
}

// txnHookBackend is a mapBackend that calls after, when set, once a Txn has
// landed and before it returns: where a watch beside the writer can deliver
// the write's event to a cache, which judges it before the write returns.
// Before, when set, it calls before, once, where another writer can land
// first.
type txnHookBackend struct {
	*mapBackend
	before, after func()
}

func (b *txnHookBackend) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if before := b.before; before != nil {
		b.before = nil
		before()
	}
	rev, err := b.mapBackend.Txn(ctx, conds, w)
	if after := b.after; err == nil && after != nil {
		b.after = nil
		after()
	}
	return rev, err
}

// FieldChanges gives the verdicts of the full judgement (every side's
// ownership decoded) on random histories of writes by several managers, for
// every manager, whether or not it has fields on the changed side, and
// whether the new record alone decides (the old one is then not decoded)
// or not. Every other typed status apply is judged while
// the write is under way, its value read back before the write returned (as
// a cache's watch can deliver it), which takes its record from the write
// under way; and now and then another client's status write lands just
// before a typed status apply's, and is judged before the apply's write,
// under way, fails: the record of the write under way is not the record of
// that value. A quarter of the objects under -race (see race.Sweep).
func TestFieldChangesAgreesWithFullJudgement(t *testing.T) {
	ctx := context.Background()
	backend := &txnHookBackend{mapBackend: newMapBackend()}
	st, err := New[keepSpec, keepStatus](backend, "Keep")
	require.NoError(t, err)
	managers := []string{"user", "ctrl", "scaler", "nobody"}
	rng := rand.New(rand.NewPCG(17, 1))
	checked, shortcut := 0, 0
	newOnly, bothDecoded := 0, 0 // judgements of a side from new's record alone, and from both
	applied := 0                 // typed status applies whose record the Store knew from its write
	underWay := 0                // and judged before the write returned, from the write under way
	interloped := 0              // another client's value judged while a write of the key was under way
	other, err := New[keepSpec, keepStatus](backend.mapBackend, "Keep", WithLastValues(0))
	require.NoError(t, err)
	// sameGen counts judgements of a spec taken for unchanged by its
	// Generation (sameSpec), recreated those of an object deleted and
	// created again at the same Generation (a relist can merge them),
	// othersOnly those of ChangedBy giving every path to others at once.
	sameGen, recreated, othersOnly := 0, 0, 0
	leafOnly, walked := 0, 0 // struct sides whose changes are leaves' alone, and those the diff walks
	// lagged counts typed status applies judged only after more of the
	// Store's own writes than it keeps decoded (a cache lagging behind the
	// Loop), their record still taken from the Store's memory.
	lagged := 0
	fillers := make([]string, maxDecoded+1)
	for i := range fillers {
		fillers[i] = fmt.Sprintf("filler-%d", i)
		_, err := st.As("user").Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: fillers[i]}})
		require.NoError(t, err)
	}
	flood := func(step int) {
		for _, f := range fillers {
			_, err := st.As("ctrl").ApplyStatus(ctx, f, keepStatus{Ready: step}, nil, WithForce())
			require.NoError(t, err)
		}
	}
	judge := func(obj, step int, old, new *Object[keepSpec, keepStatus]) {
		eq := st.sideEquals()
		for _, c := range [][2]bool{
			{userMetaSideEqual(old, new), func() bool {
				ps, ok := eq.specFields.changes(nil, unsafe.Pointer(&old.Spec), unsafe.Pointer(&new.Spec))
				return ok && ps != nil
			}()},
			{slices.Equal(old.Conditions, new.Conditions), func() bool {
				ps, ok := eq.statusFields.changes(nil, unsafe.Pointer(&old.Status), unsafe.Pointer(&new.Status))
				return ok && ps != nil
			}()},
		} {
			switch {
			case !c[0]:
			case c[1]:
				leafOnly++
			default:
				walked++
			}
		}
		for _, m := range managers {
			wantOwned, wantForeign := fieldChangesFull(st, old, new, m)
			fresh := obj%2 == 0 // old is a new object: whether it was decoded shows in a fresh memo
			if fresh {
				st.memo = &managedMemo{}
			}
			for i := range 2 { // the second time from the memo of decoded ownership
				gotOwned, gotForeign := st.FieldChanges(old, new, m)
				require.Equal(t, pathsText(wantOwned), pathsText(gotOwned), "owned, manager %s, step %d of %s", m, step, new.Meta.Name)
				require.Equal(t, pathsText(wantForeign), pathsText(gotForeign), "foreign, manager %s, step %d of %s", m, step, new.Meta.Name)
				if i == 0 {
					// Appended to lists the caller keeps (reconcile's
					// judge), after what they hold: the same verdicts,
					// however the lists' room falls.
					held := objpath.DeletionRequested
					appOwned, appForeign := (*internalView[keepSpec, keepStatus])(st).FieldChangesAppend(old, new, m,
						[]diff.Path{held}, append(make([]diff.Path, 0, 1+step%4), held))
					require.Equal(t, pathsText(append([]diff.Path{held}, wantOwned...)), pathsText(appOwned), "appended owned, manager %s, step %d of %s", m, step, new.Meta.Name)
					require.Equal(t, pathsText(append([]diff.Path{held}, wantForeign...)), pathsText(appForeign), "appended foreign, manager %s, step %d of %s", m, step, new.Meta.Name)
					// Who made them, as the Loop's oscillation detector asks.
					changed := slices.Concat(wantOwned, wantForeign)
					wantMine, wantOthers := changedByFull(st, new, m, changed)
					gotMine, gotOthers := (*internalView[keepSpec, keepStatus])(st).ChangedBy(new, m, changed)
					require.Equal(t, pathsText(wantMine), pathsText(gotMine), "ChangedBy mine, manager %s, step %d of %s", m, step, new.Meta.Name)
					require.Equal(t, pathsText(wantOthers), pathsText(gotOthers), "ChangedBy others, manager %s, step %d of %s", m, step, new.Meta.Name)
					if new.Meta.LastWrite.Manager != m && len(changed) > 0 && noneOwnable(&new.Meta, m, changed) {
						othersOnly++
					}
				}
				for _, side := range []string{specSide, statusSide} {
					_, newDecoded := st.memo.get(new, new.Meta.Revision, side)
					_, oldDecoded := st.memo.get(old, old.Meta.Revision, side)
					switch {
					case !fresh || i > 0 || !newDecoded:
					case oldDecoded:
						bothDecoded++
					default:
						newOnly++
					}
				}
			}
			checked++
			if sameSpec(&old.Meta, &new.Meta) {
				sameGen++
			}
			if old.Meta.Generation == new.Meta.Generation && old.Meta.UID != new.Meta.UID {
				recreated++
			}
			if !hasEntry(&old.Meta, specSide, m) && !hasEntry(&new.Meta, specSide, m) ||
				!hasEntry(&old.Meta, statusSide, m) && !hasEntry(&new.Meta, statusSide, m) {
				shortcut++
			}
		}
	}
	for obj := range race.Sweep(20, 4) {
		name := fmt.Sprintf("k%d", obj)
		_, err := st.As("user").Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: name}, Spec: keepSpec{Replicas: 1}})
		require.NoError(t, err)
		var prev *Object[keepSpec, keepStatus]
		for step := range 40 {
			old := prev // as a cache hands them over: this event's new is the next one's old
			if old == nil || obj%2 == 0 {
				old, err = st.Get(ctx, name)
				require.NoError(t, err)
			}
			w := st.As(managers[rng.IntN(3)])
			o := *old
			o.Spec.Env = cloneMap(old.Spec.Env)
			o.Meta.Labels = cloneMap(old.Meta.Labels)
			o.Conditions = append([]Condition(nil), old.Conditions...)
			v := rng.IntN(4)
			op := rng.IntN(11)
			var early *Object[keepSpec, keepStatus] // new, when judged before its write returned
			var mid *Object[keepSpec, keepStatus]   // another client's value, judged while the write was under way
			switch op {
			case 0:
				o.Spec.Replicas = v
				_, err = w.Update(ctx, &o)
			case 1:
				if o.Spec.Env == nil {
					o.Spec.Env = map[string]string{}
				}
				o.Spec.Env[fmt.Sprint("E", v)] = fmt.Sprint(step)
				if v == 0 {
					o.Meta.Labels = map[string]string{"l": fmt.Sprint(step)}
				}
				_, err = w.Update(ctx, &o)
			case 2:
				_, err = w.Apply(ctx, name, map[string]any{"image": fmt.Sprint("img", v)}, WithForce())
			case 3:
				o.Status.Ready = v
				_, err = w.UpdateStatus(ctx, &o)
			case 4:
				_, err = w.ApplyStatus(ctx, name, map[string]any{"message": fmt.Sprint("m", v)},
					[]Condition{{Type: fmt.Sprint("C", v%2), Status: ConditionTrue}}, WithForce())
			case 5:
				o.Status.Message = fmt.Sprint(step)
				o.Spec.Replicas = v // ignored by UpdateStatus
				_, err = w.UpdateStatus(ctx, &o)
			case 7, 8, 9:
				// A typed status, applied again and again by one manager
				// as a controller does: the write keeps the record, and the
				// Store remembers it decoded for the judge (see sideManaged).
				switch {
				case step%3 == 0:
					// Another client's write lands first: the apply's
					// write under way fails and goes again.
					backend.before = func() {
						cur, err := other.Get(ctx, name)
						require.NoError(t, err)
						cur.Status.Ready = 10 + step
						_, err = other.As("user").UpdateStatus(ctx, cur)
						require.NoError(t, err)
						mid, err = st.Get(ctx, name)
						require.NoError(t, err)
						st.last.mu.Lock()
						pending := slices.ContainsFunc(st.last.pending, func(p pendingWrite) bool { return p.key == st.prefix+name })
						st.last.mu.Unlock()
						if pending {
							interloped++
						}
						judge(obj, step, old, mid)
					}
				case (obj+step)%2 == 1:
					// Judged as its write lands, before it returns.
					backend.after = func() {
						var err error
						early, err = st.Get(ctx, name)
						require.NoError(t, err)
						e, ok := st.last.lookup(st.prefix+name, early.Meta.Revision)
						require.True(t, ok)
						require.False(t, e.written, "the write is not remembered yet")
						if _, ok := st.writtenManaged(early, statusSide); ok {
							underWay++
						}
						judge(obj, step, old, early)
					}
				}
				var res ApplyResult
				res, err = st.As("ctrl").ApplyStatus(ctx, name, keepStatus{Ready: v, Message: fmt.Sprint("m", v%2)}, nil, WithForce())
				if e, ok := st.last.lookup(st.prefix+name, res.Revision); ok && e.sides.status != nil {
					applied++
				}
				backend.before, backend.after = nil, nil
			case 10:
				// Deleted and created again with another spec: a new UID,
				// Generation 1 again.
				_, err = w.Delete(ctx, name)
				require.NoError(t, err)
				_, err = w.Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: name}, Spec: keepSpec{Replicas: 100 + step}})
			case 6:
				if v == 2 {
					// A pointer to a leaf: set, changed, cleared.
					if o.Spec.Ptr == nil || *o.Spec.Ptr == step {
						o.Spec.Ptr = &step
					} else {
						o.Spec.Ptr = nil
					}
				} else if v == 3 && len(o.Spec.Tags) == 0 {
					// No tags, stored as null or as []: no change, as the
					// diff's EquateEmpty has it.
					if o.Spec.Tags == nil {
						o.Spec.Tags = []string{}
					} else {
						o.Spec.Tags = nil
					}
				} else if tag := fmt.Sprint("t", v); !slices.Contains(o.Spec.Tags, tag) {
					o.Spec.Tags = append(slices.Clone(o.Spec.Tags), tag)
				} else {
					o.Spec.Tags = slices.DeleteFunc(slices.Clone(o.Spec.Tags), func(s string) bool { return s == tag })
				}
				_, err = w.Update(ctx, &o)
			}
			require.NoError(t, err)
			if early != nil {
				prev = early
				continue
			}
			// A status apply judged late: its value read (decoded, as a
			// cache's watch does) after the flood of later own writes,
			// or before it.
			lag := op >= 7 && mid == nil
			if lag && step%4 < 2 {
				flood(step)
			}
			if mid != nil {
				old = mid // the next event a cache sees
			}
			new, err := st.Get(ctx, name)
			require.NoError(t, err)
			prev = new
			if lag && step%4 >= 2 {
				flood(step)
			}
			if _, ok := st.writtenManaged(new, statusSide); ok && lag {
				lagged++
			}
			judge(obj, step, old, new)
		}
	}
	t.Logf("checked %d, shortcut %d, newOnly %d, bothDecoded %d, applied %d, underWay %d, interloped %d, leafOnly %d, walked %d, lagged %d",
		checked, shortcut, newOnly, bothDecoded, applied, underWay, interloped, leafOnly, walked, lagged)
	t.Logf("sameGen %d, recreated %d, othersOnly %d", sameGen, recreated, othersOnly)
	require.Greater(t, sameGen, checked/10, "the histories exercise the spec unchanged by its Generation")
	require.Greater(t, recreated, 0, "and an object created again at the same Generation")
	require.Greater(t, othersOnly, checked/10, "and ChangedBy's change of others alone")
	require.Greater(t, shortcut, checked/10, "the histories exercise the no-entry shortcut")
	require.Less(t, shortcut, checked, "and the decoding way")
	require.Greater(t, newOnly, 10, "the histories exercise judging from the new record alone")
	require.Greater(t, bothDecoded, 10, "and from both records")
	require.Greater(t, leafOnly, 10, "the histories change leaves alone (no walk of the side)")
	require.Greater(t, walked, 10, "and other fields (a walk)")
	require.Greater(t, applied, 5, "and from the record a status apply kept, known from the write")
	require.Greater(t, underWay, 2, "and from the record of a write under way, its event judged before the write returned")
	require.Greater(t, interloped, 2, "and another client's value judged while a write of the key was under way")
	require.Greater(t, lagged, 2, "and from the record of a write judged after more own writes than the memory keeps decoded")
}

func cloneMap[V any](m map[string]V) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func pathsText(ps []diff.Path) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

// The memo of decoded ownership is by address and revision: a modified copy
// of a judged object, at the same revision, is judged afresh (as
// reconcile's ownsCondition does with its probe copy).
func TestFieldChangesJudgesACopyAtTheSameRevisionAfresh(t *testing.T) {
	ctx := context.Background()
	st, err := New[keepSpec, keepStatus](newMapBackend(), "Keep")
	require.NoError(t, err)
	_, err = st.As("user").Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: "a"}, Spec: keepSpec{Replicas: 1}})
	require.NoError(t, err)
	_, err = st.As("ctrl").ApplyStatus(ctx, "a", map[string]any{"message": "m"}, []Condition{{Type: "C", Status: ConditionTrue}}, WithForce())
	require.NoError(t, err)
	old, err := st.Get(ctx, "a")
	require.NoError(t, err)
	_, err = st.As("user").ApplyStatus(ctx, "a", map[string]any{"message": "n"}, []Condition{{Type: "D", Status: ConditionTrue}}, WithForce())
	require.NoError(t, err)
	new, err := st.Get(ctx, "a")
	require.NoError(t, err)
	for _, m := range []string{"user", "ctrl"} {
		st.FieldChanges(old, new, m) // fills the memo for old and new
		probe := *new
		probe.Conditions = slices.Clone(new.Conditions)
		probe.Conditions[0].Status = "probe"
		probe.Status.Message = "other"
		for _, pair := range [][2]*Object[keepSpec, keepStatus]{{&probe, new}, {old, &probe}} {
			wantOwned, wantForeign := fieldChangesFull(st, pair[0], pair[1], m)
			gotOwned, gotForeign := st.FieldChanges(pair[0], pair[1], m)
			require.Equal(t, pathsText(wantOwned), pathsText(gotOwned), "owned, %s", m)
			require.Equal(t, pathsText(wantForeign), pathsText(gotForeign), "foreign, %s", m)
		}
	}
}

// FieldChangesAppend, reconcile's change judge, allocates nothing once its
// lists have room: neither for the Loop's own status write (owned, judged
// from the new record) nor for another writer's spec update (foreign,
// which FieldChanges copies out of its stack). FieldChanges' own lists are
// new (one allocation each time).
func TestFieldChangesAppendAllocatesNoList(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	ctx := context.Background()
	st, err := New[keepSpec, keepStatus](newMapBackend(), "Keep")
	require.NoError(t, err)
	_, err = st.As("user").Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: "a"}, Spec: keepSpec{Replicas: 1}})
	require.NoError(t, err)
	get := func() *Object[keepSpec, keepStatus] {
		o, err := st.Get(ctx, "a")
		require.NoError(t, err)
		return o
	}
	_, err = st.As("ctrl").ApplyStatus(ctx, "a", keepStatus{Ready: 1}, nil)
	require.NoError(t, err)
	before := get()
	_, err = st.As("ctrl").ApplyStatus(ctx, "a", keepStatus{Ready: 2}, nil)
	require.NoError(t, err)
	statusWrite := get()
	o := get()
	o.Spec.Replicas = 2
	_, err = st.As("user").Update(ctx, o)
	require.NoError(t, err)
	specWrite := get()
	v := (*internalView[keepSpec, keepStatus])(st)
	var buf [8]diff.Path
	for _, c := range []struct {
		name           string
		old, new       *Object[keepSpec, keepStatus]
		owned, foreign string
	}{
		{"the Loop's own status write", before, statusWrite, "[.status.ready]", "[]"},
		{"another writer's spec update", statusWrite, specWrite, "[]", "[.spec.replicas]"},
	} {
		owned, foreign := v.FieldChangesAppend(c.old, c.new, "ctrl", buf[:0:4], buf[4:4:8])
		require.Equal(t, c.owned, fmt.Sprint(pathsText(owned)), c.name)
		require.Equal(t, c.foreign, fmt.Sprint(pathsText(foreign)), c.name)
		allocs := testing.AllocsPerRun(100, func() { v.FieldChangesAppend(c.old, c.new, "ctrl", buf[:0:4], buf[4:4:8]) })
		require.Zero(t, allocs, "allocations judging %s into lists with room", c.name)
		allocs = testing.AllocsPerRun(100, func() { st.FieldChanges(c.old, c.new, "ctrl") })
		require.Equal(t, 1.0, allocs, "FieldChanges' allocations judging %s: its list", c.name)
	}
}

// The ownership before a change decides only the paths nobody owns after
// it (ownership.Attribute): a change whose every path the judged manager
// owns after it is judged from the new object's record alone, the old
// one's is not decoded (the Loop's own status write, every event). A
// change that leaves a path not the manager's still decodes both.
func TestFieldChangesDecodesTheOldRecordOnlyWhenTheNewLeavesAPathUndecided(t *testing.T) {
	ctx := context.Background()
	st, err := New[keepSpec, keepStatus](newMapBackend(), "Keep")
	require.NoError(t, err)
	_, err = st.As("user").Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: "a"}, Spec: keepSpec{Replicas: 1}})
	require.NoError(t, err)
	_, err = st.As("user").ApplyStatus(ctx, "a", map[string]any{"ready": 1}, nil, WithForce())
	require.NoError(t, err)
	for i, c := range []struct {
		writer, judged string
		oldDecoded     bool
	}{
		{"ctrl", "ctrl", false}, // ctrl's own write of the field it owns
		{"ctrl", "ctrl", false}, // and again
		{"ctrl", "user", true},  // judged by another manager with fields on the side: foreign
	} {
		old, err := st.Get(ctx, "a")
		require.NoError(t, err)
		_, err = st.As(c.writer).ApplyStatus(ctx, "a", map[string]any{"message": fmt.Sprint("m", i)}, nil, WithForce())
		require.NoError(t, err)
		new, err := st.Get(ctx, "a")
		require.NoError(t, err)
		st.memo = &managedMemo{}
		wantOwned, wantForeign := fieldChangesFull(st, old, new, c.judged)
		gotOwned, gotForeign := st.FieldChanges(old, new, c.judged)
		require.Equal(t, pathsText(wantOwned), pathsText(gotOwned), "owned, case %d", i)
		require.Equal(t, pathsText(wantForeign), pathsText(gotForeign), "foreign, case %d", i)
		_, decoded := st.memo.get(old, old.Meta.Revision, statusSide)
		require.Equal(t, c.oldDecoded, decoded, "old's status side decoded, case %d", i)
		_, decoded = st.memo.get(new, new.Meta.Revision, statusSide)
		require.True(t, decoded, "new's status side decoded, case %d", i)
	}
}

// wideSpec has a field of every kind judgedFields treats apart: leaves
// (bool, integers, string, pointers to them), and fields the diff walks
// (a float, whose NaN it equates; slices and maps, whose empty forms it
// equates; a struct, a pointer to one), besides fields it leaves out.
type wideSpec struct {
	B      bool              `json:"b"`
	I8     int8              `json:"i8,omitempty"`
	U      uint              `json:"u"`
	Name   string            // untagged: its Go name
	PS     *string           `json:"ps"`
	PI     *int64            `json:"pi"`
	F      float64           `json:"f"`
	L      []string          `json:"l"`
	M      map[string]string `json:"m"`
	Port   keepPort          `json:"port"`
	PPort  *keepPort         `json:"pport"`
	Ignore int               `json:"-"`
	hidden int
}

// structChanges, the judge's walk of a struct side by its fields, gives
// the paths of sideOnlyChanges, the diff's walk, in the same order, for
// random pairs of values that differ in a few fields; and judgedFields
// is nil (the diff walks every change) for a struct it cannot name as the
// diff does.
func TestStructChangesAgreesWithTheDiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 2))
	fields := fieldsOf(reflect.TypeFor[wideSpec](), objpath.Spec)
	require.Len(t, fields, 11)
	str := func(s string) *string { return &s }
	i64 := func(i int64) *int64 { return &i }
	set := []func(*wideSpec, int){
		func(w *wideSpec, v int) { w.B = v%2 == 1 },
		func(w *wideSpec, v int) { w.I8 = int8(v - 1) },
		func(w *wideSpec, v int) { w.U = uint(v) },
		func(w *wideSpec, v int) { w.Name = fmt.Sprint("n", v%2) },
		func(w *wideSpec, v int) { w.PS = []*string{nil, str(""), str("a"), str("a")}[v] },
		func(w *wideSpec, v int) { w.PI = []*int64{nil, i64(0), i64(1), nil}[v] },
		func(w *wideSpec, v int) { w.F = []float64{0, math.NaN(), math.Copysign(0, -1), 1}[v] },
		func(w *wideSpec, v int) { w.L = [][]string{nil, {}, {"a"}, {"a", "b"}}[v] },
		func(w *wideSpec, v int) { w.M = []map[string]string{nil, {}, {"a": "1"}, {"a": "2"}}[v] },
		func(w *wideSpec, v int) { w.Port.Port = v % 2 },
		func(w *wideSpec, v int) { w.PPort = []*keepPort{nil, {}, {Name: "a"}, nil}[v] },
		func(w *wideSpec, v int) { w.Ignore = v },
		func(w *wideSpec, v int) { w.hidden = v },
	}
	fast, walked := 0, 0
	for range race.Sweep(4000, 4) {
		var a, b wideSpec
		for _, f := range set {
			v := rng.IntN(4)
			f(&a, v)
			if rng.IntN(4) == 0 {
				v = rng.IntN(4)
			}
			f(&b, v)
		}
		want := sideOnlyChanges(objpath.Spec, &a, &b)
		got := structChanges(nil, fields, objpath.Spec, &a, &b)
		require.Equal(t, pathsText(want), pathsText(got), "%+v\n%+v", a, b)
		if _, ok := fields.changes(nil, unsafe.Pointer(&a), unsafe.Pointer(&b)); ok {
			fast++
		} else {
			walked++
		}
	}
	require.Greater(t, fast, 50, "pairs judged by their leaves alone")
	require.Greater(t, walked, 50, "and by the diff's walk")

	type embedded struct{ keepPort }
	type dup struct {
		A int `json:"B"`
		B int // named B too
	}
	type withTime struct {
		T time.Time `json:"t"`
	}
	require.Nil(t, fieldsOf(reflect.TypeFor[embedded](), objpath.Spec), "an embedded struct")
	require.Nil(t, fieldsOf(reflect.TypeFor[dup](), objpath.Spec), "two fields of one name")
	require.Nil(t, fieldsOf(reflect.TypeFor[time.Time](), objpath.Spec), "a time")
	require.Nil(t, fieldsOf(reflect.TypeFor[map[string]int](), objpath.Spec), "not a struct")
	tf := fieldsOf(reflect.TypeFor[withTime](), objpath.Spec)
	require.Len(t, tf, 1)
	require.False(t, tf[0].leaf, "a time field is not a leaf")
}

// A list FieldChanges finds empty is nil, as before it appended to lists
// of its own: a field the manager stopped applying is judged its own from
// the record before the change (nobody owns it after), and foreign, which
// the judgement from the new record alone had filled, is nil again.
func TestFieldChangesEmptyListIsNil(t *testing.T) {
	type dropStatus struct {
		Ready   int    `json:"ready,omitempty"`
		Message string `json:"message,omitempty"`
	}
	ctx := context.Background()
	st, err := New[keepSpec, dropStatus](newMapBackend(), "Keep")
	require.NoError(t, err)
	_, err = st.As("user").Create(ctx, &Object[keepSpec, dropStatus]{Meta: Meta{Name: "a"}})
	require.NoError(t, err)
	_, err = st.As("ctrl").ApplyStatus(ctx, "a", dropStatus{Ready: 1, Message: "x"}, nil)
	require.NoError(t, err)
	old, err := st.Get(ctx, "a")
	require.NoError(t, err)
	_, err = st.As("ctrl").ApplyStatus(ctx, "a", dropStatus{Ready: 1}, nil)
	require.NoError(t, err)
	new, err := st.Get(ctx, "a")
	require.NoError(t, err)
	owned, foreign := st.FieldChanges(old, new, "ctrl")
	require.Equal(t, []string{".status.message"}, pathsText(owned))
	require.Nil(t, foreign)
}

// A struct side is compared field by field alone (no equality of the whole
// S or T first): FieldChanges then gives the full judgement's paths when
// nothing changed, when leaves changed, and when a field the diff walks
// changed (a map, a slice, a float, a struct, with a leaf or alone), on
// either side, for a manager that owns the side's fields and one that
// owns none.
func TestFieldChangesOfAStructSideWalksWhatIsNotALeaf(t *testing.T) {
	ctx := context.Background()
	st, err := New[wideSpec, wideSpec](newMapBackend(), "Wide")
	require.NoError(t, err)
	_, err = st.As("user").Create(ctx, &Object[wideSpec, wideSpec]{Meta: Meta{Name: "a"}})
	require.NoError(t, err)
	base, err := st.Get(ctx, "a")
	require.NoError(t, err)
	base.Spec.M, base.Status.M = map[string]string{"k": "v"}, map[string]string{"k": "v"}
	_, err = st.As("ctrl").Update(ctx, base)
	require.NoError(t, err)
	base.Status.L = []string{"x"}
	_, err = st.As("ctrl").UpdateStatus(ctx, base)
	require.NoError(t, err)
	old, err := st.Get(ctx, "a")
	require.NoError(t, err)
	for i, change := range []func(*wideSpec){
		func(*wideSpec) {},
		func(w *wideSpec) { w.B = true },
		func(w *wideSpec) { w.M = map[string]string{"k": "w", "j": "u"} },
		func(w *wideSpec) { w.L = append(slices.Clone(w.L), "y"); w.U = 3 },
		func(w *wideSpec) { w.F = 1.5 },
		func(w *wideSpec) { w.Port.Name = "p" },
		func(w *wideSpec) { w.hidden = 7 },
	} {
		for _, side := range []string{specSide, statusSide} {
			new := *old
			new.Spec.M, new.Status.M = maps.Clone(old.Spec.M), maps.Clone(old.Status.M)
			if side == specSide {
				change(&new.Spec)
				new.Meta.Generation++
			} else {
				change(&new.Status)
			}
			for _, m := range []string{"ctrl", "nobody"} {
				wantOwned, wantForeign := fieldChangesFull(st, old, &new, m)
				gotOwned, gotForeign := st.FieldChanges(old, &new, m)
				require.Equal(t, pathsText(wantOwned), pathsText(gotOwned), "owned, change %d of the %s side, %s", i, side, m)
				require.Equal(t, pathsText(wantForeign), pathsText(gotForeign), "foreign, change %d of the %s side, %s", i, side, m)
			}
		}
	}
}

// The status side's record of the Store's own status write (a typed
// apply's, remembered with the write) is taken from the memory of values
// and not put in the memo: judging the write's event, as the Loop does
// every other event, leaves the memo as it was, and judges again alike.
func TestFieldChangesTakesAWrittenRecordOutsideTheMemo(t *testing.T) {
	ctx := context.Background()
	st, err := New[keepSpec, keepStatus](newMapBackend(), "Keep")
	require.NoError(t, err)
	_, err = st.As("user").Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: "a"}, Spec: keepSpec{Replicas: 1}})
	require.NoError(t, err)
	_, err = st.As("ctrl").ApplyStatus(ctx, "a", keepStatus{Ready: 1}, nil)
	require.NoError(t, err)
	old, err := st.Get(ctx, "a")
	require.NoError(t, err)
	_, err = st.As("ctrl").ApplyStatus(ctx, "a", keepStatus{Ready: 2}, nil)
	require.NoError(t, err)
	new, err := st.Get(ctx, "a")
	require.NoError(t, err)
	require.NotNil(t, st.last.writtenStatus(st.prefix, "a", new.Meta.Revision), "the apply's record is remembered")
	st.memo = &managedMemo{}
	for range 2 {
		owned, foreign := st.FieldChanges(old, new, "ctrl")
		require.Equal(t, []string{".status.ready"}, pathsText(owned))
		require.Empty(t, foreign)
		_, memoized := st.memo.get(new, new.Meta.Revision, statusSide)
		require.False(t, memoized, "the written record put in the memo")
	}
}

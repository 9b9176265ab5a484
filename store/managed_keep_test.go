package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store/kv"
)

type keepSpec struct {
	Replicas int               `json:"replicas"`
	Image    string            `json:"image"`
	Ptr      *int              `json:"ptr"`
	Env      map[string]string `json:"env"`
	Tuned    map[string]int    `json:"tuned" steady:"atomic"`
	Tags     []string          `json:"tags" steady:"set"`
	Ports    []keepPort        `json:"ports" steady:"keys=name"`
	Args     []string          `json:"args"`
}

type keepPort struct {
	Name string `json:"name"`
	Port int    `json:"port"`
}

type keepStatus struct {
	Ready   int    `json:"ready"`
	Message string `json:"message"`
}

// decodeManaged returns the ownership record of one side of the stored meta,
// whose tree on that side is tree, with a Codec of its own: the reference
// the Codecs and sets a Store remembers must agree with.
func (sc schemas) decodeManaged(meta *Meta, side string, tree map[string]any) ownership.Managed {
	return sc.decodeSide(meta, side, tree).managed
}

// setManaged is setManagedWith with a Codec of its own, of the side's new
// tree (see decodeManaged).
func (sc schemas) setManaged(meta *Meta, side string, managed ownership.Managed, tree map[string]any) {
	var codec *ownership.Codec
	if len(managed) > 0 {
		codec = ownership.NewCodec(tree, sc.of(side))
	}
	sc.setManagedWith(meta, side, managed, codec)
}

// recordUpdateGeneral is recordUpdate without the keepManaged shortcut: the
// specification the shortcut must agree with.
func recordUpdateGeneral(sc schemas, cur, next *rawObject, side, manager string) error {
	oldTree, err := sideTree(cur, side)
	if err != nil {
		return err
	}
	newTree, err := sideTree(next, side)
	if err != nil {
		return err
	}
	res, err := ownership.Update(oldTree, newTree, manager, sc.decodeManaged(&cur.Meta, side, oldTree), ownership.WithSchema(sc.of(side)))
	if err != nil {
		return err
	}
	sc.setManaged(&next.Meta, side, res.Managed, newTree)
	return nil
}

// An ordinary write that keeps the ownership record as stored records exactly
// what ownership.Update gives, for writes the shortcut takes and writes it
// must leave to the general way alike.
func TestKeepManagedAgreesWithUpdate(t *testing.T) {
	ctx := context.Background()
	st, err := New[keepSpec, keepStatus](newMapBackend(), "Keep")
	require.NoError(t, err)
	one := 1
	base := func() *Object[keepSpec, keepStatus] {
		return &Object[keepSpec, keepStatus]{
			Meta: Meta{Name: "k", Labels: map[string]string{"app": "a"}},
			Spec: keepSpec{Replicas: 1, Image: "i", Env: map[string]string{"A": "1", "B": "2"}, Tuned: map[string]int{"x": 1},
				Tags: []string{"t1", "t2"}, Ports: []keepPort{{"http", 80}, {"dns", 53}}, Args: []string{"-v"}},
			Status: keepStatus{Ready: 1, Message: "m"},
		}
	}
	// Histories put several managers' entries on both sides.
	histories := map[string]func(t *testing.T, name string){
		"created": func(t *testing.T, name string) {},
		"applied by other": func(t *testing.T, name string) {
			_, err := st.As("other").Apply(ctx, name, map[string]any{"replicas": 1, "env": map[string]any{"B": "2"}, "tuned": map[string]any{"x": 1}}, WithForce())
			require.NoError(t, err)
		},
		"applied by writer": func(t *testing.T, name string) {
			_, err := st.As("writer").Apply(ctx, name, map[string]any{"image": "i"})
			require.NoError(t, err)
		},
		"record written around the store": func(t *testing.T, name string) {
			raw, err := st.getRaw(ctx, name, nil)
			require.NoError(t, err)
			m := &raw.Meta
			m.Managed = append([]ManagedFields{
				{Manager: "status-first", Operation: "Update", Subresource: statusSide, Fields: "status(ready)"},
				{Manager: "broken", Operation: "Update", Fields: "~garbage"},
			}, m.Managed...)
			for i := range m.Managed {
				if m.Managed[i].Manager == "writer" && m.Managed[i].Subresource == specSide {
					m.Managed[i].Fields = "spec(replicas,image,env(A,B))" // self-contained form
				}
			}
			val, err := raw.encode()
			require.NoError(t, err)
			_, err = st.Backend().Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: st.keyOf(name), Value: val})
			require.NoError(t, err)
		},
		"status by other": func(t *testing.T, name string) {
			_, err := st.As("other").ApplyStatus(ctx, name, map[string]any{"message": "m"}, nil, WithForce())
			require.NoError(t, err)
		},
	}
	edits := map[string]func(o *Object[keepSpec, keepStatus]){
		"nothing":          func(o *Object[keepSpec, keepStatus]) {},
		"replicas":         func(o *Object[keepSpec, keepStatus]) { o.Spec.Replicas = 7 },
		"replicas+image":   func(o *Object[keepSpec, keepStatus]) { o.Spec.Replicas, o.Spec.Image = 7, "j" },
		"env value":        func(o *Object[keepSpec, keepStatus]) { o.Spec.Env["A"] = "9" },
		"env value B":      func(o *Object[keepSpec, keepStatus]) { o.Spec.Env["B"] = "9" },
		"env key added":    func(o *Object[keepSpec, keepStatus]) { o.Spec.Env["C"] = "3" },
		"env key removed":  func(o *Object[keepSpec, keepStatus]) { delete(o.Spec.Env, "B") },
		"atomic map value": func(o *Object[keepSpec, keepStatus]) { o.Spec.Tuned["x"] = 2 },
		"null to value":    func(o *Object[keepSpec, keepStatus]) { o.Spec.Ptr = &one },
		"set item":         func(o *Object[keepSpec, keepStatus]) { o.Spec.Tags = []string{"t1", "t3"} },
		"keyed item field": func(o *Object[keepSpec, keepStatus]) { o.Spec.Ports[1].Port = 5353 },
		"atomic list":      func(o *Object[keepSpec, keepStatus]) { o.Spec.Args = []string{"-q"} },
		"label value":      func(o *Object[keepSpec, keepStatus]) { o.Meta.Labels["app"] = "b" },
		"status field":     func(o *Object[keepSpec, keepStatus]) { o.Status.Ready = 2 },
		"status message":   func(o *Object[keepSpec, keepStatus]) { o.Status.Message = "n" },
		"condition":        func(o *Object[keepSpec, keepStatus]) { o.Conditions = []Condition{{Type: "Ready", Status: "True"}} },
	}
	n := 0
	for hname, history := range histories {
		for ename, edit := range edits {
			for _, side := range []string{specSide, statusSide} {
				t.Run(fmt.Sprintf("%s/%s/%q", hname, ename, side), func(t *testing.T) {
					n++
					name := fmt.Sprintf("k%d", n)
					obj := base()
					obj.Meta.Name = name
					_, err := st.As("writer").Create(ctx, obj)
					require.NoError(t, err)
					history(t, name)
					cur, err := st.getRaw(ctx, name, nil)
					require.NoError(t, err)
					typed, err := st.Get(ctx, name)
					require.NoError(t, err)
					edit(typed)
					edited, err := rawFromObject(typed)
					require.NoError(t, err)
					next := *cur
					if side == specSide {
						next.Spec = edited.Spec
						next.Meta.Labels = edited.Meta.Labels
					} else {
						next.Status, next.Conditions = edited.Status, edited.Conditions
					}
					want := next
					require.NoError(t, recordUpdateGeneral(st.schemas, cur, &want, side, "writer"))
					got := next
					kept, err := st.schemas.recordUpdate(cur, &got, side, "writer", nil)
					require.NoError(t, err)
					require.Equal(t, want.Meta.Managed, got.Meta.Managed)
					if kept != nil { // the record kept is next's, as decoded afresh
						shape, err := sideTreeOf(&got, side, true)
						require.NoError(t, err)
						require.Equal(t, st.schemas.decodeSide(&got.Meta, side, shape), *kept)
					}
					// A Store that remembers no values records the same,
					// and keeps no decoded record it would not remember.
					forgetful := st.schemas
					forgetful.remember = false
					got = next
					kept, err = forgetful.recordUpdate(cur, &got, side, "writer", nil)
					require.NoError(t, err)
					require.Equal(t, want.Meta.Managed, got.Meta.Managed)
					require.Nil(t, kept)
					// Given cur's decoded record, as the Store's memory of
					// its writes gives it, recordUpdate records the same.
					curShape, err := sideTreeOf(cur, side, true)
					require.NoError(t, err)
					known := st.schemas.decodeSide(&cur.Meta, side, curShape)
					withKnown := next
					_, err = st.schemas.recordUpdate(cur, &withKnown, side, "writer", &known)
					require.NoError(t, err)
					require.Equal(t, want.Meta.Managed, withKnown.Meta.Managed)

					full, err := sideTree(cur, side)
					require.NoError(t, err)
					shape, err := sideTreeOf(cur, side, true)
					require.NoError(t, err)
					require.Equal(t, st.schemas.decodeSide(&cur.Meta, side, full), st.schemas.decodeSide(&cur.Meta, side, shape),
						"the shape decodes the record as the tree does")
				})
			}
		}
	}
}

// The shortcut is taken where it should be: the writer changing leaves it
// alone owns keeps the record (same slice) without building anything.
func TestKeepManagedTakesOwnLeafChanges(t *testing.T) {
	ctx := context.Background()
	st, err := New[keepSpec, keepStatus](newMapBackend(), "Keep")
	require.NoError(t, err)
	obj := &Object[keepSpec, keepStatus]{Meta: Meta{Name: "k"}, Spec: keepSpec{Replicas: 1, Env: map[string]string{"A": "1"}}}
	_, err = st.As("writer").Create(ctx, obj)
	require.NoError(t, err)
	cur, err := st.getRaw(ctx, "k", nil)
	require.NoError(t, err)
	shape, err := sideTreeOf(cur, specSide, true)
	require.NoError(t, err)
	require.True(t, st.schemas.decodeSide(&cur.Meta, specSide, shape).canonical)
	obj.Spec.Replicas, obj.Spec.Env["A"] = 2, "2"
	edited, err := rawFromObject(obj)
	require.NoError(t, err)
	next := *cur
	next.Spec = edited.Spec
	keep, _ := st.schemas.keepManaged(cur, &next, specSide, "writer", nil)
	require.True(t, keep)
	keep, _ = st.schemas.keepManaged(cur, &next, specSide, "someone-else", nil)
	require.False(t, keep, "another manager takes the fields")
}

// mapBackend is a minimal Backend for the package's internal tests, which
// cannot import memstore (it imports this package).
type mapBackend struct {
	mu  sync.Mutex
	m   map[string]kv.KeyValue
	rev int64
}

func newMapBackend() *mapBackend { return &mapBackend{m: map[string]kv.KeyValue{}} }

func (b *mapBackend) Get(_ context.Context, key string) (kv.KeyValue, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.m[key]
	if !ok {
		return kv.KeyValue{}, ErrNotFound
	}
	return e, nil
}

func (b *mapBackend) List(context.Context, string, kv.ListOptions) (kv.List, error) {
	return kv.List{}, fmt.Errorf("mapBackend: List not supported")
}

func (b *mapBackend) Txn(_ context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, c := range conds {
		e := b.m[c.Key]
		have := e.ModRevision
		if c.Target == kv.CreateRevision {
			have = e.CreateRevision
		}
		if have != c.Revision {
			return 0, &kv.CondFailedError{Index: i, Cond: c, Actual: have}
		}
	}
	b.rev++
	if w.Kind == kv.WriteDelete {
		delete(b.m, w.Key)
		return b.rev, nil
	}
	created := b.m[w.Key].CreateRevision
	if created == 0 {
		created = b.rev
	}
	b.m[w.Key] = kv.KeyValue{Key: w.Key, Value: w.Value, CreateRevision: created, ModRevision: b.rev}
	return b.rev, nil
}

func (b *mapBackend) Watch(context.Context, string, int64) (<-chan kv.Event, error) {
	return nil, fmt.Errorf("mapBackend: Watch not supported")
}

// rawFromObject encodes the Spec and Status of a typed object as stored.
func rawFromObject[S, T any](obj *Object[S, T]) (*rawObject, error) {
	spec, err := encodeJSON("spec", obj.Spec)
	if err != nil {
		return nil, err
	}
	status, err := encodeJSON("status", obj.Status)
	if err != nil {
		return nil, err
	}
	return &rawObject{Meta: obj.Meta, Spec: spec, Status: status, Conditions: obj.Conditions}, nil
}

// Writes through a Store store what they store through one that remembers
// no Codecs, sets or kept records (schemas.codecs nil: every record
// decoded, checked and, where it changes, encoded afresh), byte for byte,
// over random objects, managers and writes: Updates and UpdateStatuses
// that change leaves their manager owns alone or not, over objects whose
// shapes (map keys, labels) and records (applies by other managers) vary,
// the writes keepManaged keeps the record of next to ones it must not.
func TestWritesStoreWhatTheFullPathStores(t *testing.T) {
	for _, remember := range []bool{true, false} {
		t.Run(fmt.Sprintf("remember=%v", remember), func(t *testing.T) {
			testWritesStoreWhatTheFullPathStores(t, remember)
		})
	}
}

func testWritesStoreWhatTheFullPathStores(t *testing.T, remember bool) {
	ctx := context.Background()
	type store = Store[keepSpec, keepStatus]
	var opts []Option
	if !remember {
		opts = append(opts, WithLastValues(0))
	}
	newStore := func(full bool) (*store, *mapBackend) {
		b := newMapBackend()
		st, err := New[keepSpec, keepStatus](b, "Keep", opts...)
		require.NoError(t, err)
		if full {
			st.schemas.codecs = nil
		}
		uid := 0
		st.SetUIDs(func() string { uid++; return fmt.Sprintf("uid-%d", uid) })
		return st, b
	}
	fast, fastB := newStore(false)
	full, fullB := newStore(true)
	rnd := rand.New(rand.NewPCG(47, 1))
	pick := func(s ...string) string { return s[rnd.IntN(len(s))] }
	managers := []string{"writer", "writer", "other", "third"}
	names := []string{"a", "b", "c", "d", "e", "f"}
	for _, name := range names {
		obj := &Object[keepSpec, keepStatus]{Meta: Meta{Name: name}, Spec: keepSpec{Replicas: 1, Image: "i", Env: map[string]string{}}}
		for _, k := range []string{"A", "B", "C"} {
			if rnd.IntN(2) == 0 {
				obj.Spec.Env[k] = "1"
			}
		}
		if rnd.IntN(2) == 0 {
			obj.Meta.Labels = map[string]string{"app": "x"}
		}
		for _, st := range []*store{fast, full} {
			o := *obj
			_, err := st.As("writer").Create(ctx, &o)
			require.NoError(t, err)
		}
	}
	// edit changes one leaf of the spec or status, mostly values, now and
	// then a key (a new shape): key k, added or, for an even v, removed.
	edit := func(o *Object[keepSpec, keepStatus], what string, v int, k string) {
		switch what {
		case "replicas":
			o.Spec.Replicas = v
		case "image":
			o.Spec.Image = fmt.Sprint("i", v)
		case "env":
			for _, k := range []string{"A", "B", "C"} {
				if _, ok := o.Spec.Env[k]; ok {
					o.Spec.Env[k] = fmt.Sprint(v)
					break
				}
			}
		case "env key":
			if _, ok := o.Spec.Env[k]; ok && v%2 == 0 {
				delete(o.Spec.Env, k)
			} else {
				o.Spec.Env[k] = "1"
			}
		case "ready":
			o.Status.Ready = v
		case "message":
			o.Status.Message = fmt.Sprint("m", v)
		}
	}
	for i := range 3000 {
		name, manager := pick(names...), pick(managers...)
		op := pick("update", "update", "update", "update", "status", "status", "apply", "apply status")
		var what []string
		switch op {
		case "update":
			what = []string{pick("replicas", "replicas", "image", "env", "env key")}
			if rnd.IntN(4) == 0 {
				what = append(what, pick("replicas", "image", "env"))
			}
		case "status":
			what = []string{pick("ready", "ready", "message")}
		}
		v, k := rnd.IntN(3), pick("A", "B", "C")
		var config any
		switch op {
		case "apply":
			config = map[string]any{pick("replicas", "image"): v}
			if config.(map[string]any)["image"] != nil {
				config = map[string]any{"image": fmt.Sprint("i", v)}
			}
		case "apply status":
			config = map[string]any{"ready": v}
		}
		var results [2]string
		for j, st := range []*store{fast, full} {
			w := st.As(manager)
			var err error
			switch op {
			case "update", "status":
				var o *Object[keepSpec, keepStatus]
				if o, err = st.Get(ctx, name); err != nil {
					break
				}
				for _, f := range what {
					edit(o, f, v, k)
				}
				if op == "update" {
					_, err = w.Update(ctx, o)
				} else {
					_, err = w.UpdateStatus(ctx, o)
				}
			case "apply":
				_, err = w.Apply(ctx, name, config, WithForce())
			case "apply status":
				_, err = w.ApplyStatus(ctx, name, config, nil, WithForce())
			}
			results[j] = fmt.Sprint(err)
		}
		require.Equal(t, results[1], results[0], "write %d: %s %s by %s (%v)", i, op, name, manager, what)
		key := fast.keyOf(name)
		require.Equal(t, string(fullB.m[key].Value), string(fastB.m[key].Value), "write %d: %s %s by %s (%v)", i, op, name, manager, what)
	}
}

// A write's decision to keep its record is taken from the last kept write
// only when it is that write's, whatever write came before: for each pair
// of writes, the second, after the first was kept (twice, so that it is
// remembered), records what ownership.Update gives. The writes differ in
// one input at a time: the manager, the changed leaf, the record (another
// manager's apply), the shape (another map key, labels), or only the shape
// under the same record text (a record moved to an object of another
// shape, as a value written around the store may hold), and the side.
func TestKeepManagedRemembersOnlyItsOwnWrite(t *testing.T) {
	ctx := context.Background()
	st, err := New[keepSpec, keepStatus](newMapBackend(), "Keep")
	require.NoError(t, err)
	type write struct {
		name           string
		cur, next      *rawObject
		side, manager  string
		want           []ManagedFields
		keptAtFullPath bool
	}
	objects := map[string]*rawObject{}
	for _, o := range []struct {
		name   string
		env    []string
		labels map[string]string
		apply  map[string]any // by "other", forced
	}{
		{"ab", []string{"A", "B"}, nil, nil},
		{"abc", []string{"A", "B", "C"}, nil, nil},
		{"ab-labeled", []string{"A", "B"}, map[string]string{"app": "a"}, nil},
		{"ab-other-replicas", []string{"A", "B"}, nil, map[string]any{"replicas": 1}},
		{"abc-other-env-c", []string{"A", "B", "C"}, nil, map[string]any{"env": map[string]any{"C": "1"}}},
	} {
		obj := &Object[keepSpec, keepStatus]{Meta: Meta{Name: o.name, Labels: o.labels}, Spec: keepSpec{Replicas: 1, Image: "i", Env: map[string]string{}}}
		for _, k := range o.env {
			obj.Spec.Env[k] = "1"
		}
		_, err := st.As("writer").Create(ctx, obj)
		require.NoError(t, err)
		obj.Status.Ready = 1
		_, err = st.As("writer").UpdateStatus(ctx, obj)
		require.NoError(t, err)
		if o.apply != nil {
			_, err = st.As("other").Apply(ctx, o.name, o.apply, WithForce())
			require.NoError(t, err)
		}
		objects[o.name], err = st.getRaw(ctx, o.name, nil)
		require.NoError(t, err)
	}
	// Records moved to objects of another shape.
	for to, from := range map[string]string{"abc": "ab", "ab": "abc", "ab-labeled": "ab"} {
		moved := *objects[to]
		moved.Meta.Managed = objects[from].Meta.Managed
		objects[to+"/record of "+from] = &moved
	}
	var writes []write
	for oname, cur := range objects {
		for _, e := range []struct {
			what string
			side string
			edit func(*Object[keepSpec, keepStatus])
		}{
			{"replicas", specSide, func(o *Object[keepSpec, keepStatus]) { o.Spec.Replicas = 2 }},
			{"image", specSide, func(o *Object[keepSpec, keepStatus]) { o.Spec.Image = "j" }},
			{"env A", specSide, func(o *Object[keepSpec, keepStatus]) { o.Spec.Env["A"] = "2" }},
			{"env C", specSide, func(o *Object[keepSpec, keepStatus]) { o.Spec.Env["C"] = "2" }},
			{"ready", statusSide, func(o *Object[keepSpec, keepStatus]) { o.Status.Ready = 2 }},
		} {
			val, err := cur.encode()
			require.NoError(t, err)
			typed, err := st.decode(kv.KeyValue{Key: st.keyOf(cur.Meta.Name), Value: val, ModRevision: cur.Meta.Revision})
			require.NoError(t, err)
			if e.what == "env C" && typed.Spec.Env["C"] == "" {
				continue
			}
			e.edit(typed)
			edited, err := rawFromObject(typed)
			require.NoError(t, err)
			for _, manager := range []string{"writer", "other"} {
				next := *cur
				next.Spec, next.Status, next.shape = edited.Spec, edited.Status, knownShape{}
				want := next
				require.NoError(t, recordUpdateGeneral(st.schemas, cur, &want, e.side, manager))
				alone := st.schemas
				alone.codecs = nil
				keep, _ := alone.keepManaged(cur, &next, e.side, manager, nil)
				writes = append(writes, write{fmt.Sprintf("%s %s by %s", oname, e.what, manager), cur, &next, e.side, manager, want.Meta.Managed, keep})
			}
		}
	}
	kept := 0
	for _, w := range writes {
		if w.keptAtFullPath {
			kept++
		}
	}
	require.Greater(t, kept, 4, "writes that keep their record")
	for _, remember := range []bool{true, false} {
		for _, first := range writes {
			if !first.keptAtFullPath {
				continue
			}
			for _, second := range writes {
				sc := st.schemas
				sc.codecs, sc.remember = &codecCache{}, remember
				for range 2 {
					next := *first.next
					_, err := sc.recordUpdate(first.cur, &next, first.side, first.manager, nil)
					require.NoError(t, err)
				}
				require.NotNil(t, sc.codecs.lastKept(), "%s is remembered", first.name)
				next := *second.next
				_, err := sc.recordUpdate(second.cur, &next, second.side, second.manager, nil)
				require.NoError(t, err)
				require.Equal(t, second.want, next.Meta.Managed, "%s after %s (remember=%v)", second.name, first.name, remember)
				keep, _ := sc.keepManaged(second.cur, second.next, second.side, second.manager, nil)
				require.Equal(t, second.keptAtFullPath, keep, "%s after %s (remember=%v)", second.name, first.name, remember)
			}
		}
	}
}

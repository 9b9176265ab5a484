package ownership

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/diff"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// obj decodes JSON into a tree.
func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	if s == "" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v map[string]any
	require.NoError(t, dec.Decode(&v), "bad test JSON %s", s)
	return deepCopy(v).(map[string]any)
}

// pathStrings lists a set's members as sorted path strings.
func pathStrings(s *Set) []string {
	var out []string
	for _, p := range s.Paths() {
		out = append(out, p.String())
	}
	sort.Strings(out)
	return out
}

func sorted(ss ...string) []string {
	out := append([]string(nil), ss...)
	sort.Strings(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// ownedBy returns the sorted paths of (manager, op), nil if absent.
func ownedBy(m Managed, manager string, op Operation) []string {
	if i := m.Find(manager, op); i >= 0 {
		return pathStrings(m[i].Set)
	}
	return nil
}

// conflictStrings formats conflicts as "manager path".
func conflictStrings(err error) []string {
	ce, ok := err.(*ConflictError)
	if !ok {
		return nil
	}
	var out []string
	for _, c := range ce.Conflicts {
		out = append(out, c.Manager+" "+c.Path.String())
	}
	return out
}

func requireObject(t testing.TB, want string, got map[string]any) {
	t.Helper()
	w := obj(t, want)
	if w == nil {
		w = map[string]any{}
	}
	require.True(t, deepEqual(w, got, MaxDepth), "object:\nwant %s\ngot  %s", want, mustJSON(got))
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func p(s string) diff.Path { return diff.MustParsePath(s) }

// applyOK applies and requires success.
func applyOK(t testing.TB, live map[string]any, cfg any, manager string, m Managed, opts ...Option) Result {
	t.Helper()
	r, err := Apply(live, cfg, manager, m, opts...)
	require.NoError(t, err)
	return r
}

// checkInvariants asserts that every owned path exists in the object, and
// that no entry is empty or listed twice.
func checkInvariants(t testing.TB, r Result, sch *Schema) {
	t.Helper()
	all := NewCodec(r.Object, sch).all
	seen := map[string]bool{}
	for _, e := range r.Managed {
		key := e.Manager + "/" + string(e.Operation)
		require.False(t, seen[key], "entry %s twice", key)
		seen[key] = true
		require.False(t, e.Set.Empty(), "entry %s is empty", key)
		missing := e.Set.Difference(all)
		require.True(t, missing.Empty(), "%s owns paths missing from the object: %v\nobject: %s", key, pathStrings(missing), mustJSON(r.Object))
	}
}

package store

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store/kv"
)

// requireHead holds the head decodeRawFast gave raw, read from value, to
// what it must be: value's text up to its last write, which appendTo
// writes for raw's metadata too; and present whenever value is what
// appendTo writes, with the metadata as appendMeta writes them.
func requireHead(t *testing.T, raw *rawObject, value []byte) {
	t.Helper()
	full, err := raw.encode()
	require.NoError(t, err)
	if raw.head.text() == nil {
		_, plain := appendMeta(nil, &raw.Meta)
		require.False(t, plain && bytes.Equal(value, full), "no head for %s", value)
		return
	}
	n := len(raw.head.text())
	require.Equal(t, string(value[:n]), string(raw.head.text()), "the head is the value's")
	require.Equal(t, string(full[:n]), string(raw.head.text()), "the head is what appendTo writes: %s", value)
	require.True(t, bytes.HasPrefix(full[n:], []byte(`,"lastWrite":`)), "the head ends before the last write: %s", full)
}

// looseMeta is Meta as an encoder without omitempty writes it: an empty
// map as {}, an empty subresource or trace, a zero status generation.
type looseMeta struct {
	Kind              string            `json:"kind"`
	Name              string            `json:"name"`
	UID               string            `json:"uid"`
	Labels            map[string]string `json:"labels"`
	Annotations       map[string]string `json:"annotations"`
	Owners            []OwnerRef        `json:"owners,omitempty"`
	Finalizers        []string          `json:"finalizers,omitempty"`
	DeletionRequested bool              `json:"deletionRequested,omitempty"`
	Managed           []struct {
		Manager     string `json:"manager"`
		Operation   string `json:"operation"`
		Subresource string `json:"subresource"`
		Fields      string `json:"fields"`
	} `json:"managed,omitempty"`
	LastWrite struct {
		Manager string `json:"manager"`
		Op      string `json:"op"`
		Trace   string `json:"trace"`
	} `json:"lastWrite"`
	Generation       int64 `json:"generation"`
	StatusGeneration int64 `json:"statusGeneration"`
}

// storedBy returns raw's value as one of the writers a stored value may
// come from: the Store (appendTo), encoding/json, an encoder that leaves
// <, > and & as they are, one without omitempty (looseMeta), one that
// writes -0, and a value spoiled as edited spoils one (bad, maybe).
func storedBy(t *testing.T, rng *rand.Rand, raw *rawObject) []byte {
	t.Helper()
	obj := struct {
		Meta       any             `json:"metadata"`
		Spec       json.RawMessage `json:"spec"`
		Status     json.RawMessage `json:"status"`
		Conditions []Condition     `json:"conditions,omitempty"`
	}{raw.Meta, orNull(raw.Spec), orNull(raw.Status), raw.Conditions}
	switch rng.IntN(6) {
	case 0:
		return must(raw.encode())
	case 1:
		return must(json.Marshal(obj))
	case 2:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(obj))
		return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	case 3:
		m := &raw.Meta
		loose := looseMeta{Kind: m.Kind, Name: m.Name, UID: m.UID, Labels: m.Labels, Annotations: m.Annotations, Owners: m.Owners,
			Finalizers: m.Finalizers, DeletionRequested: m.DeletionRequested, Generation: m.Generation, StatusGeneration: m.StatusGeneration}
		if loose.Labels == nil {
			loose.Labels = map[string]string{}
		}
		for _, e := range m.Managed {
			loose.Managed = append(loose.Managed, struct {
				Manager     string `json:"manager"`
				Operation   string `json:"operation"`
				Subresource string `json:"subresource"`
				Fields      string `json:"fields"`
			}{e.Manager, e.Operation, e.Subresource, e.Fields})
		}
		loose.LastWrite.Manager, loose.LastWrite.Op, loose.LastWrite.Trace = m.LastWrite.Manager, string(m.LastWrite.Op), m.LastWrite.Trace
		obj.Meta = loose
		return must(json.Marshal(obj))
	case 4:
		v := must(raw.encode())
		return bytes.Replace(v, []byte(`"generation":0`), []byte(`"generation":-0`), 1)
	}
	return edited(rng, must(raw.encode()))
}

// changedHead returns a copy of m with one of its members before the last
// write changed, or the same again in new memory (a map or list equal to
// m's), or nothing; the last write and the generations move on as a
// write moves them.
func changedHead(rng *rand.Rand, m Meta, plain bool) Meta {
	n := m
	n.LastWrite = LastWrite{Manager: []string{"user", "app-controller", "a<b"}[rng.IntN(3)], Op: ownership.OpApplyStatus}
	n.Generation += int64(rng.IntN(2))
	n.StatusGeneration = int64(rng.IntN(3))
	word := randomMeta(rng, plain).Name
	switch rng.IntN(12) {
	case 0:
		n.Kind = word
	case 1:
		n.Name = word
	case 2:
		n.UID = word
	case 3:
		n.Labels = maps.Clone(n.Labels)
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[word] = word
	case 4:
		n.Annotations = maps.Clone(n.Annotations) // the same entries
	case 5:
		n.Owners = append(slices.Clone(n.Owners), OwnerRef{Kind: word, Name: "o", UID: "u"})
	case 6:
		n.Finalizers = slices.Clone(n.Finalizers) // the same elements
	case 7:
		n.DeletionRequested = !n.DeletionRequested
	case 8:
		n.Managed = slices.Clone(n.Managed)
		if len(n.Managed) > 0 {
			n.Managed[rng.IntN(len(n.Managed))].Subresource = word
		}
	case 9:
		if len(n.Managed) > 0 {
			n.Managed = n.Managed[:len(n.Managed)-1]
		}
	}
	return n
}

// A write's value is the same, byte for byte, whether it copies the head
// of the value it was computed from (encodeOver) or writes it (encode),
// whatever wrote that value (storedBy: the Store, encoding/json with and
// without its HTML escapes, without omitempty, -0) and whatever the write
// changed of the metadata (changedHead), for metadata with strings that
// need escapes, UTF-8, invalid UTF-8, DEL, <, > and & or none; and the
// write takes the head of its own value for the next. A spoiled value
// gives a clear error or none, never a panic. An eighth of the cases
// under -race.
func TestEncodeOverIsFullEncode(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 1))
	scratch := new(decodeScratch)
	spliced, whole := 0, 0
	for i := range race.Sweep(6000, 8) {
		plain := rng.IntN(4) > 0
		raw := &rawObject{Meta: randomMeta(rng, plain), Spec: json.RawMessage(`{"replicas":1}`), Status: json.RawMessage(`{"ready":2}`)}
		if rng.IntN(3) == 0 { // printable ASCII that encoding/json escapes, and another encoder may not
			m := &raw.Meta
			html := "x<y>&z"
			switch rng.IntN(4) {
			case 0:
				m.UID = html
			case 1:
				m.Finalizers = append(m.Finalizers, html)
			case 2:
				m.Managed = append(m.Managed, ManagedFields{Manager: "m", Operation: "Apply", Fields: html})
			default:
				m.Labels = map[string]string{"a": html}
			}
		}
		if rng.IntN(4) == 0 {
			raw.Conditions = []Condition{{Type: "Ready", Status: ConditionTrue, LastTransitionTime: time.Unix(int64(i), 0).UTC()}}
		}
		value := storedBy(t, rng, raw)
		cur := new(rawObject)
		d := &metaDecoder{scratch: scratch}
		if !decodeRawFast(value, cur, d) {
			require.Nil(t, cur.head.text(), "a head of a value that did not decode: %s", value)
			_, err := decodeRaw(kv.KeyValue{Key: "k", Value: value}, d)
			if err != nil {
				require.ErrorIs(t, err, ErrInvalid)
			}
			continue
		}
		requireHead(t, cur, value)
		for range 3 {
			next := *cur
			next.Meta = changedHead(rng, cur.Meta, plain)
			next.Status = json.RawMessage(`{"ready":3}`)
			got, head, err := next.encodeOver(cur)
			want, wantErr := next.encode()
			require.Equal(t, wantErr, err)
			require.Equal(t, string(want), string(got), "over %s", value)
			if cur.headFor(&next.Meta) != nil {
				spliced++
			} else {
				whole++
			}
			if head > 0 {
				next.head = headText(got[:head])
				requireHead(t, &next, got)
			}
		}
	}
	require.Greater(t, spliced, race.Sweep(6000, 8)/4, "writes that copied the head")
	require.Greater(t, whole, race.Sweep(6000, 8)/4, "writes that wrote it")
}

// TestAppendToGrowsAnEmptyBufferOnce checks that appendTo sizes an empty
// buffer for the whole value at once, its head copied from the value it
// was computed from or written: a write's encoding grows its pooled buffer
// once at most. The last write's trace takes every length up to 256, so
// that the value ends just past each size class an allocation rounds up to
// in that span, and the generations their longest: a hint short by a byte
// of what follows the head allocates twice for one of them.
func TestAppendToGrowsAnEmptyBufferOnce(t *testing.T) {
	if race.Enabled {
		t.Skip("counts allocations")
	}
	m := Meta{Kind: "App", Name: "a", UID: "0b7c2d9e-4f1a-4c3b-9d8e-7f6a5b4c3d2e", Labels: map[string]string{"app": "web", "tier": "front"},
		LastWrite: LastWrite{Manager: "user", Op: ownership.OpUpdate}, Generation: 7}
	for i := range 6 {
		m.Managed = append(m.Managed, ManagedFields{Manager: "manager-" + string(rune('a'+i)), Operation: "Apply",
			Fields: "spec.containers.image,spec.containers.args,spec.containers.ports,spec.selector"})
	}
	raw := &rawObject{Meta: m, Spec: json.RawMessage(`{"replicas":1}`), Status: json.RawMessage(`{"ready":2}`)}
	value, err := raw.encode()
	require.NoError(t, err)
	cur := new(rawObject)
	require.True(t, decodeRawFast(value, cur, &metaDecoder{scratch: new(decodeScratch)}))
	require.Greater(t, len(cur.head.text()), 600, "a head longer than the slack")
	next := *cur
	next.Meta.Generation, next.Meta.StatusGeneration = math.MaxInt64, math.MaxInt64
	trace := strings.Repeat("0", 256)
	for _, c := range []struct {
		name string
		over *rawObject
	}{{"head copied", cur}, {"head written", nil}} {
		t.Run(c.name, func(t *testing.T) {
			for n := range len(trace) + 1 {
				next.Meta.LastWrite = LastWrite{Manager: "another-user", Op: ownership.OpUpdate, Trace: trace[:n]}
				allocs := testing.AllocsPerRun(20, func() {
					_, _, err = next.appendTo(nil, next.headOver(c.over))
				})
				require.NoError(t, err)
				require.Equal(t, 1.0, allocs, "a trace of %d bytes", n)
				_, head, _ := next.appendTo(nil, next.headOver(c.over))
				require.Equal(t, len(cur.head.text()), head, "the head is cur's")
			}
		})
	}
}

// TestEncodeOverAllocatesItsExactLength checks that a write's value over
// the value it was computed from, its head copied, is the full encoding,
// in an allocation of its exact length; that lengthOver tells that length
// before it is written when the last write's strings are plain (and the
// value has no conditions), so that no copy is made; and that decimalLen
// is the length of strconv's text of an integer.
func TestEncodeOverAllocatesItsExactLength(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 9, 10, -9, -10, 99, 100, 1 << 40, math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		require.Equal(t, len(strconv.FormatInt(v, 10)), decimalLen(v), "%d", v)
	}
	rng := rand.New(rand.NewPCG(58, 3))
	for range 30 {
		v := rng.Int64() >> rng.IntN(64)
		require.Equal(t, len(strconv.FormatInt(v, 10)), decimalLen(v), "%d", v)
		require.Equal(t, len(strconv.FormatInt(-v, 10)), decimalLen(-v), "%d", -v)
	}
	strs := []string{"", "user", "Update", "a-much-longer-manager-name", "trace-0123456789abcdef", "q\"uote", "<b>", "\x7f"}
	told := 0
	for i := range 2000 {
		m := randomMeta(rng, true)
		raw := &rawObject{Meta: m, Spec: json.RawMessage(`{"replicas":1}`), Status: json.RawMessage(`{"ready":2}`)}
		value, err := raw.encode()
		require.NoError(t, err)
		cur := new(rawObject)
		if !decodeRawFast(value, cur, &metaDecoder{scratch: new(decodeScratch)}) || cur.head.text() == nil {
			continue
		}
		next := *cur
		next.Meta.LastWrite = LastWrite{Manager: strs[rng.IntN(len(strs))], Op: ownership.Operation(strs[rng.IntN(len(strs))])}
		if i%3 == 0 {
			next.Meta.LastWrite.Trace = strs[rng.IntN(len(strs))]
		}
		next.Meta.Generation, next.Meta.StatusGeneration = rng.Int64()>>rng.IntN(64)-1<<20, rng.Int64()>>rng.IntN(64)*int64(rng.IntN(2))
		switch rng.IntN(3) {
		case 0:
			next.Spec = nil
		case 1:
			next.Status = json.RawMessage(`{"ready":3,"message":"longer"}`)
		}
		if i%5 == 0 {
			next.Conditions = []Condition{{Type: "Ready", Status: ConditionTrue, LastTransitionTime: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)}}
		}
		got, _, err := next.encodeOver(cur)
		require.NoError(t, err)
		want, err := next.encode()
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
		require.Equal(t, len(got), cap(got), "the value's exact length")
		text := next.headOver(cur)
		require.NotNil(t, text)
		w := next.Meta.LastWrite
		n := next.lengthOver(text)
		switch {
		case len(next.Conditions) > 0:
			require.Zero(t, n, "conditions")
		case plainJSONString(w.Manager) && plainJSONString(string(w.Op)) && plainJSONString(w.Trace):
			require.Equal(t, len(got), n, "%s", got)
			told++
		}
	}
	require.Greater(t, told, 500, "values whose length lengthOver told")
}

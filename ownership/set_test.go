package ownership

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
)

func paths(ss ...string) []diff.Path {
	out := make([]diff.Path, len(ss))
	for i, s := range ss {
		out[i] = p(s)
	}
	return out
}

func TestSetMembership(t *testing.T) {
	s := MustNewSet(paths(`.spec.replicas`, `.spec.ports[port=80,protocol="TCP"]`, `.spec.ports[port=80,protocol="TCP"].name`,
		`.spec.tags[="a"]`, `.metadata.labels["app.kubernetes.io/name"]`, `.n[="x"]`, `.f[=1.5]`)...)
	require.Equal(t, 7, s.Len())
	require.True(t, s.Has(p(`.spec.replicas`)))
	require.True(t, s.Has(p(`.spec.ports[port=80.0,protocol="TCP"]`)), "numbers by value")
	require.True(t, s.Has(p(`.metadata.labels["app.kubernetes.io/name"]`)))
	require.True(t, s.Has(p(`.f[=1.5]`)))
	require.False(t, s.Has(p(`.spec`)), "interior maps are not members")
	require.False(t, s.Has(p(`.spec.ports[port=81,protocol="TCP"]`)))
	require.False(t, s.Has(p(`.args[0]`)), "index elements are never members")
	require.False(t, s.Has(nil))

	_, err := NewSet(diff.Path{})
	require.Error(t, err)
	_, err = NewSet(p(`.args[0]`))
	require.Error(t, err)

	var empty *Set
	require.True(t, empty.Empty())
	require.Zero(t, empty.Len())
	require.Nil(t, empty.Paths())
	require.Equal(t, "", empty.Encode())
	require.True(t, empty.Equal(&Set{}))
}

func TestSetPathsRoundTrip(t *testing.T) {
	in := []string{`.a`, `.b.c`, `.l[k="x",n=2]`, `.l[k="x",n=2].v`, `.s[=true]`, `.s[=null]`, `.s[="q"]`}
	s := MustNewSet(paths(in...)...)
	require.Equal(t, sorted(in...), pathStrings(s))
	again := MustNewSet(s.Paths()...)
	require.True(t, again.Equal(s))
}

func TestSetOperations(t *testing.T) {
	a := MustNewSet(paths(`.x`, `.m.a`, `.l[k="1"]`, `.l[k="1"].v`)...)
	b := MustNewSet(paths(`.y`, `.m.a`, `.l[k="1"]`)...)
	require.Equal(t, sorted(`.x`, `.y`, `.m.a`, `.l[k="1"]`, `.l[k="1"].v`), pathStrings(a.Union(b)))
	require.Equal(t, sorted(`.m.a`, `.l[k="1"]`), pathStrings(a.Intersect(b)))
	require.Equal(t, sorted(`.x`, `.l[k="1"].v`), pathStrings(a.Difference(b)), "exact: the item's field stays")
	require.Equal(t, sorted(`.x`), pathStrings(a.Without(b)), "recursive: the item's field goes too")
	require.True(t, a.Union(nil).Equal(a))
	require.True(t, a.Intersect(nil).Empty())
}

// Moved is what a rename makes of a set: the members at and below from,
// at the same places below to, and nothing (no allocation) when from holds
// no member.
func TestSetMoved(t *testing.T) {
	s := MustNewSet(paths(`.spec.image`, `.spec.ports[name="http"]`, `.spec.ports[name="http"].port`, `.spec.replicas`)...)
	m, err := s.Moved(p(`.spec.ports`), p(`.spec.endpoints`))
	require.NoError(t, err)
	require.Equal(t, sorted(`.spec.endpoints[name="http"]`, `.spec.endpoints[name="http"].port`), pathStrings(m))
	m, err = s.Moved(p(`.spec.image`), p(`.spec.container.image`))
	require.NoError(t, err)
	require.Equal(t, []string{`.spec.container.image`}, pathStrings(m))
	m, err = s.Moved(p(`.spec.image`), p(`.spec.image`))
	require.NoError(t, err)
	require.Equal(t, sorted(`.spec.ports[name="http"]`, `.spec.ports[name="http"].port`, `.spec.replicas`), pathStrings(s.Difference(m)))

	for _, from := range []string{`.spec.command`, `.spec.image.x`, `.status`} {
		m, err = s.Moved(p(from), p(`.spec.other`))
		require.NoError(t, err)
		require.Nil(t, m, from)
	}
	absent, to := p(`.spec.command`), p(`.spec.other`)
	require.Zero(t, testing.AllocsPerRun(10, func() { _, _ = s.Moved(absent, to) }))
	_, err = s.Moved(p(`.spec.image`), nil)
	require.Error(t, err, "the root cannot be owned")
	_, err = s.Moved(p(`.spec.image`), diff.Path{}.Index(0))
	require.Error(t, err)
}

func TestEncodeRoundTrip(t *testing.T) {
	s := MustNewSet(paths(`.metadata.labels["app.kubernetes.io/name"]`, `.spec.ports[port=80,protocol="TCP"]`,
		`.spec.ports[port=80,protocol="TCP"].port`, `.spec.tags[="a b"]`, `.spec.replicas`, `.x.y`, `.x`)...)
	enc := s.Encode()
	require.Equal(t, `metadata(labels("app.kubernetes.io/name")),spec(ports([port=80,protocol="TCP"](port)),replicas,tags([="a b"])),x!(y)`, enc)
	back, err := DecodeSet(enc)
	require.NoError(t, err)
	require.True(t, back.Equal(s))
	require.Equal(t, enc, back.Encode())

	// Non-canonical spellings normalize.
	n, err := DecodeSet(`l([k=1.0]~,z,a)`)
	require.Error(t, err, "stray ~")
	n, err = DecodeSet(`z,a,l([k=1.0,"x y"=2e0])`)
	require.NoError(t, err)
	require.Equal(t, `a,l([k=1,"x y"=2]),z`, n.Encode())
}

func TestDecodeSetRejectsGarbage(t *testing.T) {
	for _, bad := range []string{`(`, `a(`, `a()`, `a,`, `a!`, `[k=]`, `[k="x"`, `[="x"`, `a,a`, `"unterminated`, `a)`, `[1=2]`, `[k=nope]`, `1a`} {
		_, err := DecodeSet(bad)
		require.Error(t, err, bad)
	}
}

func TestCodecEncodesRelativeToTheObject(t *testing.T) {
	o := obj(t, `{"spec":{"ports":[{"port":80,"protocol":"TCP"}],"a":1,"b":{"c":2}}}`)
	c := NewCodec(o, portsSchema)
	s := MustNewSet(paths(`.spec.a`, `.spec.ports[port=80,protocol="TCP"]`, `.spec.gone`, `.other[="x"]`)...)
	enc := c.Encode(s)
	require.Equal(t, byte('~'), enc[0])
	require.Contains(t, enc, `|other([="x"]),spec(gone)`, "paths the object lacks are spelled out")
	back, err := c.Decode(enc)
	require.NoError(t, err)
	require.True(t, back.Equal(s))
	require.Equal(t, "", c.Encode(nil))

	plain, err := c.Decode(s.Encode())
	require.NoError(t, err, "self-contained encodings decode too")
	require.True(t, plain.Equal(s))

	other := NewCodec(obj(t, `{"spec":{"a":1}}`), portsSchema)
	_, err = other.Decode(enc)
	require.ErrorContains(t, err, "another shape")
	same := NewCodec(obj(t, `{"spec":{"ports":[{"port":80,"protocol":"TCP"}],"a":"changed","b":{"c":[1]}}}`), portsSchema)
	_, err = same.Decode(enc)
	require.NoError(t, err, "values do not matter, only shape")

	for _, bad := range []string{"~", "~" + c.hash + "!!", "~" + c.hash + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "~" + c.hash + "AQ"} {
		_, err := c.Decode(bad)
		require.Error(t, err, bad)
	}
}

// Issue 13, item 4: a key field listed twice is an error wherever a key
// is read, as diff.ParsePath rejects it, so no set lists a path its own
// Has denies.
func TestKeyFieldListedTwiceIsAnError(t *testing.T) {
	_, err := DecodeSet(`spec(items([a=0,a=""]))`)
	require.ErrorContains(t, err, "listed twice")
	_, err = DecodeSet(`spec(items([a=0,b=""]))`)
	require.NoError(t, err)

	_, err = NewSchema(map[string]Strategy{".items": Keyed("a", "a")})
	require.ErrorContains(t, err, "listed twice")

	type item struct {
		A string `json:"a"`
	}
	type obj struct {
		Items []item `json:"items" steady:"keys=a,a"`
	}
	_, err = SchemaFor(obj{})
	require.ErrorContains(t, err, "listed twice")
}

// moveOneByOne is Set.Move made of Moved, Difference and Union, a move at
// a time: each takes what no earlier move took.
func moveOneByOne(t *testing.T, s *Set, moves []Move) *Set {
	rest := s
	var moved []*Set
	for _, m := range moves {
		sub, err := rest.Moved(m.From, m.From)
		require.NoError(t, err)
		if sub == nil {
			continue
		}
		rest = rest.Difference(sub)
		if m.To != nil {
			to, err := sub.Moved(m.From, m.To)
			require.NoError(t, err)
			moved = append(moved, to)
		}
	}
	for _, m := range moved {
		rest = rest.Union(m)
	}
	return rest
}

// Set.Move makes its moves at once, as moving one after another does:
// nested and overlapping Froms, a To inside a From, onto existing paths,
// and removals.
func TestSetMove(t *testing.T) {
	vocab := []string{`.a`, `.a.b`, `.a.b.c`, `.a.d`, `.e`, `.e[k="1"]`, `.e[k="1"].f`, `.e[k="2"]`, `.g`, `.g.a`}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var ps []diff.Path
		for _, v := range vocab {
			if r.IntN(2) == 0 {
				ps = append(ps, p(v))
			}
		}
		s := MustNewSet(ps...)
		var moves []Move
		for range r.IntN(4) {
			m := Move{From: p(vocab[r.IntN(len(vocab))])}
			if r.IntN(5) > 0 {
				m.To = p(vocab[r.IntN(len(vocab))])
			}
			moves = append(moves, m)
		}
		got, err := s.Move(moves...)
		require.NoError(t, err)
		want := moveOneByOne(t, s, moves)
		require.True(t, want.Equal(got), "set %v moves %v: want %v, got %v", pathStrings(s), moves, pathStrings(want), pathStrings(got))
	}
	s := MustNewSet(paths(`.spec.image`, `.spec.replicas`)...)
	from, to := p(`.spec.command`), p(`.spec.other`)
	require.Zero(t, testing.AllocsPerRun(10, func() { _, _ = s.Move(Move{From: from, To: to}) }), "nothing to move")
	same, err := s.Move(Move{From: from, To: to})
	require.NoError(t, err)
	require.Same(t, s, same)
	for _, bad := range []Move{{From: nil, To: p(`.x`)}, {From: p(`.spec.image`), To: diff.Path{}}, {From: diff.Path{}.Index(0), To: p(`.x`)}, {From: p(`.spec.image`), To: diff.Path{}.Field("x").Index(0)}} {
		_, err := s.Move(bad)
		require.Error(t, err, "%v", bad)
	}
}

package store

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/ownership"
)

// Field ownership across versions. Meta.Managed is stored in the paths of
// the version the value is stored at. A Store converts the records with the
// value: from the stored version's paths to the hub's (its Renames, From to
// To), then to the served version's (its Renames, To to From), and back on
// write. So Apply merges, and reports conflicts, in the writer's version's
// paths. A path under a Rename whose To is "" has no counterpart in the hub:
// it is dropped from its record, with a log line, never an error on read
// (the field's ownership is reset, as for a record that no longer decodes).

// renameRule is a parsed Rename.
type renameRule struct{ from, to diff.Path }

// parseRenames parses the Renames of version name.
func parseRenames(name string, rs []Rename) ([]renameRule, error) {
	out := make([]renameRule, 0, len(rs))
	dotted := func(p string) string {
		if p != "" && p[0] != '.' && p[0] != '[' {
			return "." + p
		}
		return p
	}
	for _, r := range rs {
		r.From, r.To = dotted(r.From), dotted(r.To)
		from, err := diff.ParsePath(r.From)
		if err != nil {
			return nil, fmt.Errorf("version %q: rename from %q: %v", name, r.From, err)
		}
		var to diff.Path
		if r.To != "" {
			if to, err = diff.ParsePath(r.To); err != nil {
				return nil, fmt.Errorf("version %q: rename to %q: %v", name, r.To, err)
			}
		}
		if len(from) == 0 {
			return nil, fmt.Errorf("version %q: rename of the root", name)
		}
		out = append(out, renameRule{from, to})
	}
	return out, nil
}

// convertManaged returns meta's ownership records, made against the sides of
// from (the value at version a), converted to the sides of to (the same
// value at version b). With to nil (a read), the records are encoded in
// the self-contained form (ownership.Set.Encode), which needs no tree of
// the converted value, and each converted record is remembered (see
// convertedMemo): a read of a record seen before costs a scan of its
// side's shape and a lookup, not the shape's tree and codec. A write, whose
// to is stored, encodes relative to to, compactly; so does a write at the
// same version (a == b) of records a read left self-contained. An entry
// that does not decode, or a path that does not map, is dropped and logged
// (on a read, the first time it is converted). A read's records are
// converted in place: meta.Managed must be the read's own.
//
// specKey, when not nil, is the shape key of from's spec (as
// jsonscan.AppendShapeKey gives it), read as the value was decoded: the
// spec is not read again.
func (s *Store[S, T]) convertManaged(meta *Meta, a, b *Version, from, to *rawObject, specKey []byte) []ManagedFields {
	if len(meta.Managed) == 0 || a == b && (to == nil || allRelative(meta.Managed)) {
		return meta.Managed
	}
	out := convertTarget(meta.Managed, to == nil)
	var sides [2]sideConversion
	// The memo keys: per side, the stored version and the side's shape
	// (made when a record relative to it is first met; nil when it has
	// none), then the record's text. Self-contained records need no shape.
	var arr [2][512]byte
	var shapes, shapeKeys [2][]byte
	var shaped [2]bool
	var key []byte
	for _, e := range meta.Managed {
		side := sideIndex(e.Subresource)
		key = nil
		if to == nil {
			switch relative := e.Fields != "" && e.Fields[0] == '~'; {
			case relative && !shaped[side]:
				shaped[side] = true
				k := append(append(arr[side][:0], a.name...), 0)
				k, ok := readShapeKey(k, from, e.Subresource, specKey)
				if ok {
					shapes[side] = append(k, 0)
					shapeKeys[side] = k[len(a.name)+1:]
				}
				fallthrough
			case relative:
				if shapes[side] != nil {
					key = append(shapes[side], e.Fields...)
				}
			default:
				key = append(append([]byte(a.name), 1, byte('0'+side)), e.Fields...)
			}
		}
		fields := s.convertMemo(key, meta, e, &sides[side], shapeKeys[side], a, b, from, to)
		if fields == "" {
			continue
		}
		e.Fields = fields
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// convertTarget is where convertManaged appends: a read converts the
// records it decoded, its own, in place; a write gets a new slice.
func convertTarget(m []ManagedFields, inPlace bool) []ManagedFields {
	if inPlace {
		return m[:0]
	}
	return make([]ManagedFields, 0, len(m))
}

// sideIndex is 0 for the spec side, 1 for the status side.
func sideIndex(subresource string) int {
	if subresource == statusSide {
		return 1
	}
	return 0
}

// readShapeKey appends a read's shape key for the side subresource to k.
// The spec side uses specKey, the key read as the value was decoded, when
// there is one.
func readShapeKey(k []byte, from *rawObject, subresource string, specKey []byte) ([]byte, bool) {
	if subresource != statusSide && specKey != nil {
		return specShapeKey(k, specKey, &from.Meta), true
	}
	return sideShapeKey(k, from, subresource)
}

// convertMemo is convertRecord through the memo: key (nil: not memoised)
// is looked up first, and a miss's result is stored under it.
func (s *Store[S, T]) convertMemo(key []byte, meta *Meta, e ManagedFields, side *sideConversion, shapeKey []byte, a, b *Version, from, to *rawObject) string {
	if key != nil {
		if fields, ok := s.ver.converted.get(key); ok {
			return fields
		}
	}
	fields := s.convertRecord(meta, e, side, shapeKey, a, b, from, to)
	if key != nil {
		s.ver.converted.put(key, fields)
	}
	return fields
}

// sideConversion is the codecs of the records of one side of a value, made
// when a record first needs them.
type sideConversion struct {
	from, to *ownership.Codec
	err      error // the side does not decode as a tree
}

// convertRecord returns the Fields of record e of meta converted from
// version a to b, "" when nothing of it is left, as convertManaged does.
// shape is the shape key of e's side (sideShapeKey), nil when not known.
func (s *Store[S, T]) convertRecord(meta *Meta, e ManagedFields, c *sideConversion, shape []byte, a, b *Version, from, to *rawObject) string {
	if c.err == nil && c.from == nil && (to != nil || e.Fields == "" || e.Fields[0] == '~') {
		// A self-contained record needs no codec to decode.
		c.err = c.makeCodecs(e.Subresource, shape, a, b, from, to)
	}
	if c.err != nil {
		s.dropManaged(meta, e, fmt.Sprintf("the value does not decode as a tree: %v", c.err))
		return ""
	}
	var set *ownership.Set
	var err error
	if c.from != nil {
		set, err = c.from.Decode(e.Fields)
	} else {
		set, err = ownership.DecodeSet(e.Fields)
	}
	if err != nil {
		s.dropManaged(meta, e, err.Error())
		return ""
	}
	if a != b {
		if set, err = s.renameSet(meta, e, set, a, b); err != nil {
			s.dropManaged(meta, e, err.Error())
			return ""
		}
	}
	switch {
	case set.Empty():
		return ""
	case to == nil:
		return set.Encode()
	default:
		return c.to.Encode(set)
	}
}

// makeCodecs makes c's codecs of side: from's, at version a, remembered in
// a's codec cache by shape, the side's shape key, when not nil (a Codec
// depends on the tree's shape only), and for a write to's, at version b.
func (c *sideConversion) makeCodecs(side string, shape []byte, a, b *Version, from, to *rawObject) error {
	if shape != nil {
		c.from = a.schemas.codecs.get(shape)
	}
	var err error
	if c.from == nil {
		if c.from, err = sideCodec(from, side, a.schemas.of(side)); err != nil {
			return err
		}
		if shape != nil {
			a.schemas.codecs.put(shape, c.from)
		}
	}
	if to != nil {
		c.to, err = sideCodec(to, side, b.schemas.of(side))
	}
	return err
}

// convertedMemo remembers, for a versioned Store's reads, the records it
// converted: by the version they were stored at and their text and, for a
// record encoded relative to its value, the value's shape (sideShapeKey),
// which with the text fixes the set. One controller's values mostly repeat
// both from one revision to the next (and often from one object to the
// next), so a read converts a record once. A conversion that drops a record
// or a path logs when it is first made. It is safe for concurrent use.
type convertedMemo struct {
	mu    sync.Mutex
	m     map[string]string
	bytes int
}

// maxConvertedBytes bounds the keys and texts convertedMemo holds; when
// full, it forgets them all.
const maxConvertedBytes = 1 << 20

func (m *convertedMemo) get(key []byte) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[string(key)]
	return v, ok
}

func (m *convertedMemo) put(key []byte, fields string) {
	n := len(key) + len(fields)
	if n > maxConvertedBytes/16 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bytes+n > maxConvertedBytes {
		clear(m.m)
		m.bytes = 0
	}
	if m.m == nil {
		m.m = map[string]string{}
	}
	m.m[string(key)] = fields
	m.bytes += n
}

// renameSet maps set, in the paths of version a, to the paths of version b
// (through the hub: a path goes by the first rule whose source is a prefix
// of it), dropping with a log line a path that has no counterpart. A set
// under no rename is returned as it is.
func (s *Store[S, T]) renameSet(meta *Meta, e ManagedFields, set *ownership.Set, a, b *Version) (*ownership.Set, error) {
	set, err := s.moveSet(meta, e, set, a, b, a.rules, false)
	if err != nil {
		return nil, err
	}
	return s.moveSet(meta, e, set, a, b, b.rules, true)
}

// moveSet applies rules to set at once (or, with back, the rules reversed):
// each rule takes what no earlier rule took, on the way from version a to b.
func (s *Store[S, T]) moveSet(meta *Meta, e ManagedFields, set *ownership.Set, a, b *Version, rules []renameRule, back bool) (*ownership.Set, error) {
	var arr, earlier [8]ownership.Move
	moves, taken := arr[:0], earlier[:0] // taken: the moves so far, as removals
	for _, r := range rules {
		m := ownership.Move{From: r.from, To: r.to}
		if back {
			if m.From, m.To = r.to, r.from; m.From == nil {
				continue
			}
		}
		if m.To == nil {
			// Log what is dropped: what this rule takes and no earlier
			// one does.
			rest, err := set.Move(taken...)
			if err != nil {
				return nil, err
			}
			sub, err := rest.Moved(m.From, m.From)
			if err != nil {
				return nil, err
			}
			for _, p := range sub.Paths() {
				s.dropManaged(meta, e, fmt.Sprintf("path %s of version %s has no counterpart at version %s", p, a.name, b.name))
			}
		}
		moves = append(moves, m)
		taken = append(taken, ownership.Move{From: m.From})
	}
	return set.Move(moves...)
}

// hasRelative reports whether a record of side (specSide or statusSide) is
// encoded relative to its object.
func hasRelative(ms []ManagedFields, side string) bool {
	for _, e := range ms {
		if e.Subresource == side && e.Fields != "" && e.Fields[0] == '~' {
			return true
		}
	}
	return false
}

// allRelative reports whether every record is encoded relative to its
// object (ownership.Codec.Encode), as stored records are.
func allRelative(ms []ManagedFields) bool {
	for _, e := range ms {
		if e.Fields != "" && e.Fields[0] != '~' {
			return false
		}
	}
	return true
}

// dropManaged logs a record, or a path of it, that conversion drops.
func (s *Store[S, T]) dropManaged(meta *Meta, e ManagedFields, why string) {
	s.logger.LogAttrs(context.Background(), slog.LevelWarn, "store: dropping a field ownership record that does not convert",
		slog.String("kind", s.kind), slog.String("name", meta.Name), slog.String("manager", e.Manager),
		slog.String("subresource", e.Subresource), slog.String("reason", why))
}

// WithLogger sets the logger of what the Store drops rather than fails on,
// such as an ownership record that does not convert between versions, and
// the stack of a panic in a Spec or Status type's own decoding (the value
// is a *DecodeError) (default: slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

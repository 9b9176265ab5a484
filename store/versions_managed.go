package store

import (
	"context"
	"fmt"
	"log/slog"

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
// the converted value: the only tree built is from's shape, so a read
// costs its one decode, the user's funcs and that shape. A write, whose
// to is stored, encodes relative to to, compactly; so does a write at the
// same version (a == b) of records a read left self-contained. An entry
// that does not decode, or a path that does not map, is dropped and logged.
func (s *Store[S, T]) convertManaged(meta *Meta, a, b *Version, from, to *rawObject) []ManagedFields {
	if len(meta.Managed) == 0 || a == b && (to == nil || allRelative(meta.Managed)) {
		return meta.Managed
	}
	out := make([]ManagedFields, 0, len(meta.Managed))
	var codecs [2][2]*ownership.Codec // [side][from, to]
	for _, e := range meta.Managed {
		side := 0
		if e.Subresource == statusSide {
			side = 1
		}
		if codecs[side][0] == nil {
			// A codec depends on the tree's shape only.
			ft, err := sideTreeOf(from, e.Subresource, true)
			var tt map[string]any
			if err == nil && to != nil {
				tt, err = sideTreeOf(to, e.Subresource, true)
			}
			if err != nil {
				s.dropManaged(meta, e, fmt.Sprintf("the value does not decode as a tree: %v", err))
				continue
			}
			codecs[side][0] = ownership.NewCodec(ft, a.schemas.of(e.Subresource))
			if to != nil {
				codecs[side][1] = ownership.NewCodec(tt, b.schemas.of(e.Subresource))
			}
		}
		set, err := codecs[side][0].Decode(e.Fields)
		if err != nil {
			s.dropManaged(meta, e, err.Error())
			continue
		}
		if a != b {
			if set, err = s.renameSet(meta, e, set, a, b); err != nil {
				s.dropManaged(meta, e, err.Error())
				continue
			}
		}
		if set.Empty() {
			continue
		}
		if to == nil {
			e.Fields = set.Encode()
		} else {
			e.Fields = codecs[side][1].Encode(set)
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// renameSet maps set, in the paths of version a, to the paths of version b
// (through the hub: a path goes by the first rule whose source is a prefix
// of it), dropping with a log line a path that has no counterpart. It works
// on the set itself, so a set under no rename is returned as it is.
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
	rest := set
	var moved []*ownership.Set
	for _, r := range rules {
		src, dst := r.from, r.to
		if back {
			if src, dst = r.to, r.from; src == nil {
				continue
			}
		}
		sub, err := rest.Moved(src, src)
		if err != nil {
			return nil, err
		}
		if sub == nil {
			continue
		}
		rest = rest.Difference(sub)
		if dst == nil {
			for _, p := range sub.Paths() {
				s.dropManaged(meta, e, fmt.Sprintf("path %s of version %s has no counterpart at version %s", p, a.name, b.name))
			}
			continue
		}
		m, err := sub.Moved(src, dst)
		if err != nil {
			return nil, err
		}
		moved = append(moved, m)
	}
	for _, m := range moved {
		rest = rest.Union(m)
	}
	return rest, nil
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
// such as an ownership record that does not convert between versions
// (default: slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

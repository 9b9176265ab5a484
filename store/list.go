package store

import (
	"github.com/steady-go/steady/store/kv"

	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// ListOptions selects the objects and the page of a Store.List.
type ListOptions struct {
	// Selector keeps the objects whose labels it matches; nil keeps all.
	Selector Selector
	// Limit is the most objects one page returns; 0 returns every match.
	// Negative is invalid.
	Limit int
	// Continue is List.Continue of the previous page; "" starts a listing.
	Continue string
	// NamePrefix keeps the objects whose name starts with it; "" keeps
	// all. The Backend filters it: List reads only the keys under the
	// Store's prefix + kind + "/" + NamePrefix. A NamePrefix with a "/"
	// is invalid.
	NamePrefix string
	// Keep, when not nil, keeps the objects whose name it accepts, judged
	// before decoding: a key it rejects is read from the Backend (no
	// Backend filters by it) but neither decoded nor remembered (see
	// WithLastValues), nor reported as Undecodable. A sharded replica's
	// cache lists its shards' objects this way (cache.WithKeep).
	Keep func(name string) bool
}

// List is one page of a Store.List.
type List[S, T any] struct {
	// Items are the matching objects in name order, each with its
	// Meta.Revision.
	Items []*Object[S, T]
	// Revision is the store revision the listing reflects: every page of one
	// listing reflects the revision of its first page, so a Watch from it
	// misses nothing and repeats nothing.
	Revision int64
	// Continue is non-empty when more objects may follow; pass it back in
	// ListOptions.Continue for the next page.
	Continue string
	// Undecodable are the values of the page's key range that are not
	// objects of the kind (see DecodeError), in key order. They are left out
	// of Items and do not count towards Limit.
	Undecodable []*DecodeError
}

// List returns the objects matching opts.Selector, in name order.
//
// With a Limit, a page holds at most Limit matches and List reads as many
// backend pages as it takes to fill it, so a page is short only at the end.
// The pages of one listing all reflect the first page's revision. If that
// revision is no longer available when a later page is asked for, List
// returns an error wrapping ErrExpired: start the listing again. A malformed
// Continue or a negative Limit gives an error wrapping ErrInvalid. A value
// that does not decode as an object of the kind does not fail the List: it
// is left out of Items and reported in Undecodable, whatever the Selector.
func (s *Store[S, T]) List(ctx context.Context, opts ListOptions) (*List[S, T], error) {
	return s.list(ctx, opts, nil, false)
}

// ListReusing is List for a caller that keeps its own copy of the objects,
// as store/cache's Cache does: for each stored object, before decoding it,
// it calls reuse (when not nil) with the object's name and revision, and
// when reuse returns a non-nil object it puts that object in Items in place
// of decoding the stored value. reuse must return only an object it got
// from this Store at exactly that revision (Meta.Revision equal to it),
// which is then the stored value decoded, or nil; the Selector is matched
// against the reused object's labels. reuse is called on the caller's
// goroutine, one call at a time. Everything else is as List
// describes. A Cache that relists after its watch fell behind decodes only
// the objects that changed meanwhile.
//
// shared is the caller's promise that it holds the objects it lists shared
// and read-only (a Cache without a transform, which changes the objects it
// gets): objects of different names then share their ownership records,
// labels and annotations, and the []string and map[string]string fields of
// a Spec or Status, when equal to ones the listing decoded before (see
// sharedValues).
// It is store/cache's, reached through internal/storeaccess (see internalView).
func (v *internalView[S, T]) ListReusing(ctx context.Context, opts ListOptions, reuse func(name string, revision int64) *Object[S, T], shared bool) (*List[S, T], error) {
	return (*Store[S, T])(v).list(ctx, opts, reuse, shared)
}

// list is List and ListReusing.
func (s *Store[S, T]) list(ctx context.Context, opts ListOptions, reuse func(name string, revision int64) *Object[S, T], shared bool) (*List[S, T], error) {
	bopts, err := s.backendListOptions(opts)
	if err != nil {
		return nil, err
	}
	sel := opts.Selector
	if sel == nil {
		sel = everything{}
	}
	out := &List[S, T]{Revision: bopts.Revision}
	scratch := s.borrowScratch()
	defer s.giveBack(scratch)
	if shared {
		// What a listing's objects share is the Store's from one listing
		// to the next (a Cache lists a page per call), one at a time.
		v := s.listSharing.Swap(nil)
		if v == nil {
			v = new(sharedValues)
		}
		scratch.sharing = v
		defer s.listSharing.Store(v)
	}
	for {
		page, err := s.b.List(ctx, s.prefix+opts.NamePrefix, bopts)
		if err != nil {
			return nil, err
		}
		if out.Revision == 0 {
			out.Revision = page.Revision
		}
		for i, kv := range page.KVs {
			obj, bad := s.listed(kv, scratch, reuse, opts.Keep)
			if bad != nil {
				out.Undecodable = append(out.Undecodable, bad)
			}
			if obj == nil {
				continue
			}
			if !sel.Matches(obj.Meta.Labels) {
				continue
			}
			out.Items = append(out.Items, obj)
			if opts.Limit > 0 && len(out.Items) == opts.Limit {
				if i < len(page.KVs)-1 || page.Continue != "" {
					out.Continue = s.formatContinue(out.Revision, kv.Key)
				}
				return out, nil
			}
		}
		if page.Continue == "" || len(page.KVs) == 0 {
			return out, nil
		}
		bopts.Revision = out.Revision
		bopts.Continue = page.KVs[len(page.KVs)-1].Key
	}
}

// backendListOptions returns the Backend's options for the first page of
// opts, or an error wrapping ErrInvalid.
func (s *Store[S, T]) backendListOptions(opts ListOptions) (kv.ListOptions, error) {
	if opts.Limit < 0 {
		return kv.ListOptions{}, fmt.Errorf("%w: negative List limit %d", ErrInvalid, opts.Limit)
	}
	if strings.Contains(opts.NamePrefix, "/") {
		return kv.ListOptions{}, fmt.Errorf("%w: List NamePrefix %q contains a /", ErrInvalid, opts.NamePrefix)
	}
	bopts := kv.ListOptions{Limit: opts.Limit}
	if opts.Continue != "" {
		rev, after, err := s.parseContinue(opts.Continue)
		if err != nil {
			return kv.ListOptions{}, err
		}
		bopts.Revision, bopts.Continue = rev, after
	}
	return bopts, nil
}

// listed returns the object of kv for a listing: the one reuse returns for
// it, or kv decoded with scratch. It returns nil for a key outside the
// Store's key space, and nil and the error for a value that does not
// decode.
func (s *Store[S, T]) listed(kv kv.KeyValue, scratch *decodeScratch, reuse func(name string, revision int64) *Object[S, T], keep func(string) bool) (*Object[S, T], *DecodeError) {
	name, ours := s.nameOf(kv.Key)
	if !ours || keep != nil && !keep(name) {
		return nil, nil
	}
	if reuse != nil {
		// A reused object is not remembered again: its reader got it
		// from this Store at this revision, and so the memory saw it then.
		// (Remembering each listed value costs more than the listing when
		// the kind outgrows the memory, every read forgetting another.)
		if obj := reuse(name, kv.ModRevision); obj != nil {
			return obj, nil
		}
	}
	from, err := s.decodeLike(kv, scratch, nil, copies{})
	if err != nil {
		return nil, err.(*DecodeError)
	}
	s.last.readWhole(kv, from.plain, from.headEnd) // headEnd: 0 unless plain
	return from.obj, nil
}

// A continue token is the listing revision and the last key returned,
// base64url encoded so callers treat it as opaque.
func (s *Store[S, T]) formatContinue(rev int64, lastKey string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(rev, 10) + ":" + lastKey))
}

func (s *Store[S, T]) parseContinue(tok string) (rev int64, lastKey string, err error) {
	bad := fmt.Errorf("%w: malformed List continue token %q", ErrInvalid, tok)
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, "", bad
	}
	r, key, ok := strings.Cut(string(b), ":")
	if !ok || !strings.HasPrefix(key, s.prefix) {
		return 0, "", bad
	}
	if rev, err = strconv.ParseInt(r, 10, 64); err != nil || rev <= 0 {
		return 0, "", bad
	}
	return rev, key, nil
}

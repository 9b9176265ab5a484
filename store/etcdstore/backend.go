package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Backend is a kv.Backend on an etcd cluster. Every key lives under the
// Backend's prefix in etcd, and the store revision is etcd's cluster-wide
// revision. It is safe for concurrent use.
type Backend struct {
	cli      *clientv3.Client
	prefix   string
	progress time.Duration
	timeout  time.Duration // per call

	watchEvents, watchBytes int
}

// DefaultCallTimeout is how long a Get, List, Txn or Compact waits for etcd
// by default (see WithCallTimeout).
const DefaultCallTimeout = 15 * time.Second

// WithCallTimeout bounds every call the Backend makes to etcd (Get, List,
// Txn, Compact; a watch runs until its ctx ends) to d, whatever the caller's
// ctx allows: without quorum, or with every member unreachable, the etcd
// client retries a call for as long as its ctx lets it, so a caller without
// a deadline would wait for ever. A call that runs out of d fails with
// store.ErrUnavailable (a write may or may not have been carried out); a
// caller's own shorter deadline still ends it first, with the ctx's error.
// The default is DefaultCallTimeout, above etcd's own request timeout (5 s
// plus two election timeouts by default) so that etcd's errors come first
// when a server answers. d must be positive.
func WithCallTimeout(d time.Duration) Option { return func(b *Backend) { b.timeout = d } }

// Default watch limits: how far a watch's reader may fall behind before the
// watch ends with store.ErrExpired.
const (
	DefaultWatchEvents = 10_000
	DefaultWatchBytes  = 64 << 20
)

// WithWatchLimits bounds what a watch holds for a reader that falls behind:
// at most events events and bytes bytes of keys and values (default
// DefaultWatchEvents and DefaultWatchBytes). Past either, the watch ends with
// store.ErrExpired, as the kv.Backend contract has it for a watcher too
// slow to keep up. Both must be positive.
func WithWatchLimits(events, bytes int) Option {
	return func(b *Backend) { b.watchEvents, b.watchBytes = events, bytes }
}

// Option configures a Backend.
type Option func(*Backend)

// WithPrefix puts every key under p in etcd (default "/steady/"). A prefix
// that does not end in "/" gets one ("/app" is "/app/"), so two Backends with
// different prefixes share a cluster without seeing each other: "/app" never
// reads "/app-staging/...".
func WithPrefix(p string) Option { return func(b *Backend) { b.prefix = p } }

// WithProgressInterval sets how often an idle watch asks etcd for a progress
// notification, so a watcher learns that writes outside its prefix advanced
// the revision (default 1s; etcd's own periodic notification is minutes).
func WithProgressInterval(d time.Duration) Option {
	return func(b *Backend) { b.progress = d }
}

// New returns a Backend over cli. The caller keeps ownership of cli and
// closes it after the Backend is no longer used. Once cli is closed, the
// Backend's calls fail with an error wrapping store.ErrClosed and its
// watches end with an event wrapping it.
func New(cli *clientv3.Client, opts ...Option) (*Backend, error) {
	if cli == nil {
		return nil, errors.New("etcdstore: nil etcd client")
	}
	b := &Backend{cli: cli, prefix: "/steady/", progress: time.Second, timeout: DefaultCallTimeout,
		watchEvents: DefaultWatchEvents, watchBytes: DefaultWatchBytes}
	for _, o := range opts {
		if o != nil {
			o(b)
		}
	}
	if b.prefix != "" && !strings.HasSuffix(b.prefix, "/") {
		b.prefix += "/"
	}
	if b.watchEvents <= 0 || b.watchBytes <= 0 {
		return nil, fmt.Errorf("etcdstore: watch limits must be positive, got %d events and %d bytes", b.watchEvents, b.watchBytes)
	}
	if b.progress <= 0 {
		return nil, fmt.Errorf("etcdstore: progress interval must be positive, got %v", b.progress)
	}
	if b.timeout <= 0 {
		return nil, fmt.Errorf("etcdstore: call timeout must be positive, got %v", b.timeout)
	}
	return b, nil
}

// Client returns the etcd client the Backend uses.
func (b *Backend) Client() *clientv3.Client { return b.cli }

// Prefix returns the etcd key prefix under which the Backend's keys live.
func (b *Backend) Prefix() string { return b.prefix }

func (b *Backend) keyValue(k *mvccpb.KeyValue) kv.KeyValue {
	return kv.KeyValue{
		Key:            strings.TrimPrefix(string(k.Key), b.prefix),
		Value:          k.Value,
		CreateRevision: k.CreateRevision,
		ModRevision:    k.ModRevision,
	}
}

// Get implements kv.Backend.
func (b *Backend) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	if key == "" {
		return kv.KeyValue{}, fmt.Errorf("etcdstore: get of an empty key: %w", store.ErrInvalid)
	}
	cctx, cancel := b.call(ctx)
	defer cancel()
	resp, err := b.cli.Get(cctx, b.prefix+key)
	if err != nil {
		return kv.KeyValue{}, b.mapCallErr(ctx, cctx, err)
	}
	if len(resp.Kvs) == 0 {
		return kv.KeyValue{}, fmt.Errorf("etcdstore: get %q: %w", key, store.ErrNotFound)
	}
	return b.keyValue(resp.Kvs[0]), nil
}

// List implements kv.Backend. Pages are served by etcd range reads pinned
// to the first page's revision; a revision etcd has compacted gives
// store.ErrExpired.
func (b *Backend) List(ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
	if opts.Limit < 0 || opts.Revision < 0 {
		return kv.List{}, fmt.Errorf("etcdstore: list limit %d or revision %d is negative: %w", opts.Limit, opts.Revision, store.ErrInvalid)
	}
	full := b.prefix + prefix
	start := full
	if opts.Continue != "" {
		if !strings.HasPrefix(opts.Continue, prefix) {
			return kv.List{}, fmt.Errorf("etcdstore: continue key %q is not under prefix %q: %w", opts.Continue, prefix, store.ErrInvalid)
		}
		start = b.prefix + opts.Continue + "\x00"
	}
	ops := []clientv3.OpOption{clientv3.WithRange(clientv3.GetPrefixRangeEnd(full))}
	if opts.Limit > 0 {
		ops = append(ops, clientv3.WithLimit(int64(opts.Limit)))
	}
	if opts.Revision > 0 {
		ops = append(ops, clientv3.WithRev(opts.Revision))
	}
	cctx, cancel := b.call(ctx)
	defer cancel()
	resp, err := b.cli.Get(cctx, start, ops...)
	if err != nil {
		return kv.List{}, b.mapCallErr(ctx, cctx, err)
	}
	res := kv.List{KVs: make([]kv.KeyValue, len(resp.Kvs)), Revision: resp.Header.Revision}
	if opts.Revision > 0 {
		res.Revision = opts.Revision
	}
	for i, k := range resp.Kvs {
		res.KVs[i] = b.keyValue(k)
	}
	if resp.More && len(res.KVs) > 0 {
		res.Continue = res.KVs[len(res.KVs)-1].Key
	}
	return res, nil
}

// Txn implements kv.Backend with one etcd transaction: the conds become
// compares, the write is the Then branch, and the Else branch reads every
// compared key so a failure can name the cond that failed. A request over
// etcd's size limits (the server's --max-request-bytes, 1.5 MiB by
// default, or the client's 2 MiB message limit: a long key with a large
// value, or a key that long) gives an error wrapping store.ErrTooLarge
// and writes nothing.
func (b *Backend) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if err := kv.CheckTxn(conds, w); err != nil {
		return 0, fmt.Errorf("etcdstore: %w", err)
	}
	cmps := make([]clientv3.Cmp, 0, len(conds)+1)
	elses := make([]clientv3.Op, 0, len(conds)+1)
	for _, c := range conds {
		k := b.prefix + c.Key
		if c.Target == kv.ModRevision {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", c.Revision))
		} else {
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(k), "=", c.Revision))
		}
		elses = append(elses, clientv3.OpGet(k, clientv3.WithKeysOnly()))
	}
	then := clientv3.OpPut(b.prefix+w.Key, string(w.Value))
	if w.Kind == kv.WriteDelete {
		// Deleting an absent key is ErrNotFound, and must not be a no-op
		// commit: require that the key exists.
		cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(b.prefix+w.Key), ">", 0))
		then = clientv3.OpDelete(b.prefix + w.Key)
	}
	cctx, cancel := b.call(ctx)
	defer cancel()
	resp, err := b.cli.Txn(cctx).If(cmps...).Then(then).Else(elses...).Commit()
	if err != nil {
		return 0, b.mapCallErr(ctx, cctx, err)
	}
	if resp.Succeeded {
		return resp.Header.Revision, nil
	}
	for i, c := range conds {
		var actual int64
		if kvs := resp.Responses[i].GetResponseRange().GetKvs(); len(kvs) > 0 {
			if c.Target == kv.ModRevision {
				actual = kvs[0].ModRevision
			} else {
				actual = kvs[0].CreateRevision
			}
		}
		if actual != c.Revision {
			return 0, &kv.CondFailedError{Index: i, Cond: c, Actual: actual}
		}
	}
	// Every user cond held when read back, so the implicit existence check of
	// a delete failed (or a cond changed between the compare and the read,
	// which the caller cannot act on differently from a conflict).
	if w.Kind == kv.WriteDelete {
		return 0, fmt.Errorf("etcdstore: delete %q: %w", w.Key, store.ErrNotFound)
	}
	return 0, fmt.Errorf("etcdstore: txn on %q failed its preconditions: %w", w.Key, kv.ErrCondFailed)
}

// Compact discards etcd's history before rev (store/storetest.Compactor).
// Lists pinned below rev, and watches from before it, then fail with
// store.ErrExpired. Compacting to a revision already compacted is a no-op,
// as on the other backends; a negative revision, or one above the current
// revision, gives an error wrapping store.ErrInvalid.
func (b *Backend) Compact(ctx context.Context, rev int64) error {
	if rev < 0 {
		return fmt.Errorf("etcdstore: compact to negative revision %d: %w", rev, store.ErrInvalid)
	}
	cctx, cancel := b.call(ctx)
	defer cancel()
	_, err := b.cli.Compact(cctx, rev, clientv3.WithCompactPhysical())
	if err != nil && ctx.Err() == nil && errors.Is(err, rpctypes.ErrCompacted) {
		return nil // etcd has compacted to rev or past it already: what Compact asks for holds
	}
	if err != nil {
		return b.mapCallErr(ctx, cctx, err)
	}
	return nil
}

// errCallTimeout is the cause of a call's ctx that ran out of the call
// timeout.
var errCallTimeout = errors.New("etcdstore: call timeout")

// call returns the ctx of one call to etcd: ctx, ended after the call
// timeout at the latest.
func (b *Backend) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, b.timeout, errCallTimeout)
}

// mapCallErr is mapErr for a call made with cctx, from call(ctx): a call
// that ran out of the call timeout, not of the caller's ctx, is
// store.ErrUnavailable, and says so. cctx may have been cancelled since.
func (b *Backend) mapCallErr(ctx, cctx context.Context, err error) error {
	if ctx.Err() == nil && b.cli.Ctx().Err() != nil {
		return fmt.Errorf("etcdstore: the etcd client is closed (%v): %w", err, store.ErrClosed)
	}
	if ctx.Err() == nil && errors.Is(context.Cause(cctx), errCallTimeout) {
		return fmt.Errorf("etcdstore: no answer from etcd within the call timeout of %v (%v): %w", b.timeout, err, store.ErrUnavailable)
	}
	return mapErr(ctx, err)
}

// mapErr turns etcd and gRPC errors into the store's sentinels. The etcd
// client hands back most server errors as rpctypes.EtcdError values, whose
// gRPC code status.Code cannot see, so they are matched by identity first
// and by their own Code() after. A call on a closed etcd client is
// store.ErrClosed: nothing was sent, and no retry can help.
func mapErr(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case clientClosing(err):
		return fmt.Errorf("etcdstore: the etcd client is closed (%v): %w", err, store.ErrClosed)
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("etcdstore: %v: %w", err, store.ErrExpired)
	case errors.Is(err, rpctypes.ErrFutureRev):
		return fmt.Errorf("etcdstore: %v: %w", err, store.ErrInvalid)
	case errors.Is(err, rpctypes.ErrRequestTooLarge), tooLargeToSend(err):
		return fmt.Errorf("etcdstore: %v: %w", err, store.ErrTooLarge)
	case isUnavailable(err):
		return fmt.Errorf("etcdstore: %v: %w", err, store.ErrUnavailable)
	}
	return fmt.Errorf("etcdstore: %w", err)
}

// clientClosing reports whether err is gRPC's refusal of a call on a
// closed connection, which is what a call on a closed etcd client gets.
func clientClosing(err error) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.Canceled && strings.Contains(st.Message(), "client connection is closing")
}

// tooLargeToSend reports whether err is the gRPC client's refusal to send
// a request over its message size limit (2 MiB by default; a key that
// long): ResourceExhausted, like an overloaded server's answer, but nothing
// was sent, so nothing can have committed and a retry fails the same way.
func tooLargeToSend(err error) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.ResourceExhausted && strings.Contains(st.Message(), "trying to send message larger than max")
}

// unavailable are the etcd errors after which a request may or may not have
// been carried out: timeouts (plain, after a leader failure, after a lost
// connection, waiting for the applied index), no leader, a leader change,
// an unhealthy or stopped server, and too many requests.
var unavailable = []error{
	rpctypes.ErrTimeout,
	rpctypes.ErrTimeoutDueToLeaderFail,
	rpctypes.ErrTimeoutDueToConnectionLost,
	rpctypes.ErrTimeoutWaitAppliedIndex,
	rpctypes.ErrNoLeader,
	rpctypes.ErrLeaderChanged,
	rpctypes.ErrUnhealthy,
	rpctypes.ErrStopped,
	rpctypes.ErrTooManyRequests,
	rpctypes.ErrGRPCTimeout,
	rpctypes.ErrGRPCTimeoutDueToLeaderFail,
	rpctypes.ErrGRPCTimeoutDueToConnectionLost,
	rpctypes.ErrGRPCTimeoutWaitAppliedIndex,
	rpctypes.ErrGRPCNoLeader,
	rpctypes.ErrGRPCLeaderChanged,
	rpctypes.ErrGRPCUnhealthy,
	rpctypes.ErrGRPCStopped,
	rpctypes.ErrGRPCRequestTooManyRequests,
	context.DeadlineExceeded, // the client's own per-request timeout
}

// isUnavailable reports whether err is one of unavailable, or carries the
// gRPC code Unavailable, DeadlineExceeded or ResourceExhausted (in a gRPC
// status or an rpctypes.EtcdError).
func isUnavailable(err error) bool {
	for _, u := range unavailable {
		if errors.Is(err, u) {
			return true
		}
	}
	code := status.Code(err)
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		code = ee.Code()
	}
	switch code {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		return true
	}
	return false
}

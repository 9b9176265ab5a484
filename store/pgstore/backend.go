package pgstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// Defaults of the options.
const (
	DefaultSchema       = "steady"
	DefaultWatchBuffer  = 256
	DefaultPollInterval = 2 * time.Second
	DefaultHistorySize  = 10_000
)

// Backend is a kv.Backend on a PostgreSQL database. Its keys, their
// history and the store revision live in the tables of one schema
// (WithSchema), so Backends on different schemas share a database without
// seeing each other. It is safe for concurrent use.
type Backend struct {
	pool   *pgxpool.Pool
	schema string // quoted identifier
	name   string // unquoted, also the NOTIFY channel
	cfg    config
	hub    *hub
	sql    queries
	held   atomic.Int64 // events the watches read and have not sent yet
}

type config struct {
	schema      string
	watchBuffer int
	poll        time.Duration
	clk         clock.Clock
	history     int64
}

// Option configures a Backend.
type Option func(*config)

// WithSchema puts the Backend's tables in schema (default DefaultSchema),
// which New creates if it does not exist. The name is a lower-case SQL
// identifier: a letter or underscore, then letters, digits or underscores,
// at most 63 bytes. Every Backend on one schema shares its keys and revision.
func WithSchema(schema string) Option { return func(c *config) { c.schema = schema } }

// WithWatchBuffer sets the capacity of a watch's channel, which is also the
// most events a watch reads from the database at a time (default
// DefaultWatchBuffer). A watch reads its next batch only once the last one is
// in the channel, so a receiver that stops reading holds at most two batches
// in memory; its backlog stays in the database. Values below 1 mean 1.
func WithWatchBuffer(n int) Option { return func(c *config) { c.watchBuffer = max(n, 1) } }

// WithPollInterval sets how often a watch reads the database when no
// notification woke it (default DefaultPollInterval). Notifications are only
// a wake-up; the poll bounds how late a watch can be if one is lost while
// the listening connection is down and not yet known to be. It must be
// positive.
func WithPollInterval(d time.Duration) Option { return func(c *config) { c.poll = d } }

// WithHistorySize sets how many of the latest writes the log keeps (default
// DefaultHistorySize): the history a Watch resumes from and a List page
// pinned to an older revision reads. Each write whose revision is a
// multiple of n/8 then compacts to n writes back, as part of its Txn call
// (best effort: an error there does not fail the write, and the next one
// tries again). A Watch or a pinned List older than the last n writes may
// then get store.ErrExpired. 0 turns this off: the log keeps everything
// until Compact is called.
func WithHistorySize(n int) Option { return func(c *config) { c.history = int64(n) } }

// WithClock sets the clock of the watches' polls and of the listener's
// reconnection backoff (default clock.Real).
func WithClock(clk clock.Clock) Option { return func(c *config) { c.clk = clk } }

var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// New returns a Backend on pool, creating its schema, tables and function
// if they do not exist (concurrent News on one database are safe). The
// caller keeps ownership of pool and closes it after every watch of the
// Backend has ended. A connection failure gives an error wrapping
// store.ErrUnavailable.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Backend, error) {
	if pool == nil {
		return nil, errors.New("pgstore: nil pool")
	}
	cfg := config{schema: DefaultSchema, watchBuffer: DefaultWatchBuffer, poll: DefaultPollInterval, clk: clock.Real{}, history: DefaultHistorySize}
	for _, o := range opts {
		o(&cfg)
	}
	if !identRE.MatchString(cfg.schema) {
		return nil, fmt.Errorf("pgstore: schema name %.80q is not a lower-case SQL identifier of at most 63 bytes: %w", cfg.schema, store.ErrInvalid)
	}
	if cfg.poll <= 0 {
		return nil, fmt.Errorf("pgstore: poll interval must be positive, got %v: %w", cfg.poll, store.ErrInvalid)
	}
	if cfg.history < 0 {
		return nil, fmt.Errorf("pgstore: history size must not be negative, got %d: %w", cfg.history, store.ErrInvalid)
	}
	if cfg.clk == nil {
		return nil, fmt.Errorf("pgstore: nil clock: %w", store.ErrInvalid)
	}
	b := &Backend{pool: pool, schema: pgx.Identifier{cfg.schema}.Sanitize(), name: cfg.schema, cfg: cfg}
	b.sql = newQueries(b.schema)
	b.hub = newHub(b)
	if err := b.migrate(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// Schema returns the name of the schema that holds the Backend's tables.
func (b *Backend) Schema() string { return b.name }

// Pool returns the pool the Backend uses.
func (b *Backend) Pool() *pgxpool.Pool { return b.pool }

// The schema. head holds the store revision and the compaction floor in one
// row, whose row lock every write takes first and holds until it commits:
// writes commit one at a time, in revision order, so a reader that sees
// revision N in head sees every write up to N in log. A sequence would not
// do: concurrent transactions commit in another order than they draw
// numbers, and a watch that read past a gap would skip the late one.
//
// log has one row per write: the key's value after it (NULL for a delete),
// its create revision, and prev_rev, the key's previous row (0 for a
// create), which gives a watch event its Prev. The current value of a key is
// its latest row; a pinned List reads the latest row at or below its
// revision. Keys are bytea: store keys are Go strings, which need not be
// UTF-8 and may hold NUL bytes, and bytea compares bytewise, as key order
// requires.
const schemaSQL = `
CREATE SCHEMA IF NOT EXISTS %[1]s;
CREATE TABLE IF NOT EXISTS %[1]s.head (
	one boolean PRIMARY KEY DEFAULT true CHECK (one),
	rev bigint NOT NULL,
	compacted bigint NOT NULL
);
INSERT INTO %[1]s.head (rev, compacted) VALUES (0, 0) ON CONFLICT DO NOTHING;
CREATE TABLE IF NOT EXISTS %[1]s.log (
	rev bigint PRIMARY KEY,
	key bytea NOT NULL,
	value bytea,
	create_rev bigint NOT NULL,
	prev_rev bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS log_key_rev ON %[1]s.log (key, rev DESC);

-- txn2 applies one write if every cond holds, in one statement (one round
-- trip). failed is -1 on success, -2 when a delete finds no key, else the
-- index of the first cond that failed, with actual its revision. Each query
-- of a volatile function sees what committed before it, so the conds are
-- read after head's row is locked, when every earlier write is visible.
-- Locking head is also drawing the next revision (one statement); a write
-- that does not happen puts it back before its transaction commits, so no
-- one sees it. A write runs three statements: head, the key's row, and the
-- new row with its NOTIFY. (txn2, not txn: txn, of an older version,
-- returned a table, and CREATE OR REPLACE cannot change that.)
CREATE OR REPLACE FUNCTION %[1]s.txn2(ckeys bytea[], ctargets int[], crevs bigint[],
	wdelete boolean, wkey bytea, wvalue bytea, chan text,
	OUT new_rev bigint, OUT failed int, OUT actual bigint)
LANGUAGE plpgsql AS $$
DECLARE
	cur bigint;
	r record;
	a bigint;
	p_rev bigint;
	p_create bigint;
	gone boolean;
	v text;
BEGIN
	UPDATE %[1]s.head SET rev = rev + 1 RETURNING rev INTO cur;
	-- The written key's row first: a cond on that key, the usual one,
	-- reads it from here.
	SELECT l.rev, l.create_rev, l.value IS NULL INTO p_rev, p_create, gone
		FROM %[1]s.log l WHERE l.key = wkey ORDER BY l.rev DESC LIMIT 1;
	IF NOT FOUND OR gone THEN
		p_rev := 0;
		p_create := 0;
	END IF;
	new_rev := 0;
	actual := 0;
	FOR i IN 1 .. coalesce(array_length(ckeys, 1), 0) LOOP
		IF ckeys[i] = wkey THEN
			a := CASE WHEN ctargets[i] = 0 THEN p_rev ELSE p_create END;
		ELSE
			SELECT l.rev AS mod, l.create_rev AS crt, l.value IS NULL AS gone INTO r
				FROM %[1]s.log l WHERE l.key = ckeys[i] ORDER BY l.rev DESC LIMIT 1;
			a := 0;
			IF FOUND AND NOT r.gone THEN
				a := CASE WHEN ctargets[i] = 0 THEN r.mod ELSE r.crt END;
			END IF;
		END IF;
		IF a <> crevs[i] THEN
			UPDATE %[1]s.head SET rev = rev - 1;
			failed := i - 1;
			actual := a;
			RETURN;
		END IF;
	END LOOP;
	IF wdelete AND p_rev = 0 THEN
		UPDATE %[1]s.head SET rev = rev - 1;
		failed := -2;
		RETURN;
	END IF;
	WITH w AS (INSERT INTO %[1]s.log (rev, key, value, create_rev, prev_rev) VALUES (cur, wkey,
		CASE WHEN wdelete THEN NULL ELSE wvalue END,
		CASE WHEN wdelete THEN 0 WHEN p_create = 0 THEN cur ELSE p_create END,
		p_rev) RETURNING rev)
	SELECT pg_notify(chan, w.rev::text)::text INTO v FROM w;
	new_rev := cur;
	failed := -1;
END $$;
`

// migrateLock is the advisory lock key that serializes New's DDL, since
// CREATE ... IF NOT EXISTS races with itself.
const migrateLock = 0x5374656164790001

func (b *Backend) migrate(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, fmt.Sprintf(schemaSQL, b.schema))
		return err
	})
	if err != nil {
		return mapErr(ctx, "create schema "+b.name, err)
	}
	return nil
}

type queries struct {
	get, list, txn, watch, head, compact, prune string
}

func newQueries(s string) queries {
	return queries{
		get: `SELECT rev, create_rev, value FROM ` + s + `.log WHERE key = $1 ORDER BY rev DESC LIMIT 1`,
		// One statement, so one snapshot: the head it reports is the state
		// the rows show. $3 is the pinned revision (0: head), $4 the limit
		// (NULL: none).
		list: `WITH h AS (SELECT rev, compacted FROM ` + s + `.head)
SELECT h.rev, h.compacted, k.key, k.value, k.create_rev, k.rev FROM h LEFT JOIN LATERAL (
	SELECT d.* FROM (
		SELECT DISTINCT ON (l.key) l.key, l.value, l.create_rev, l.rev FROM ` + s + `.log l
		WHERE l.key >= $1 AND ($2::bytea IS NULL OR l.key < $2)
			AND l.rev <= CASE WHEN $3::bigint = 0 THEN h.rev ELSE $3::bigint END
		ORDER BY l.key, l.rev DESC
	) d WHERE d.value IS NOT NULL ORDER BY d.key LIMIT $4
) k ON true ORDER BY k.key`,
		txn: `SELECT new_rev, failed, actual FROM ` + s + `.txn2($1, $2, $3, $4, $5, $6, $7)`,
		// The events after $1 under the prefix [$2, $3), scanning at most
		// $5 revisions and returning at most $4 events, with each event's
		// previous row, and the head they were read at.
		watch: `WITH h AS (SELECT rev, compacted FROM ` + s + `.head)
SELECT h.rev, h.compacted, e.rev, e.key, e.value, e.create_rev, p.value, p.create_rev, p.rev FROM h LEFT JOIN LATERAL (
	SELECT l.* FROM ` + s + `.log l
	WHERE l.rev > $1 AND l.rev <= least(h.rev, $1 + $5) AND l.key >= $2 AND ($3::bytea IS NULL OR l.key < $3)
	ORDER BY l.rev LIMIT $4
) e ON true LEFT JOIN ` + s + `.log p ON p.rev = e.prev_rev ORDER BY e.rev`,
		head:    `SELECT rev, compacted FROM ` + s + `.head`,
		compact: `UPDATE ` + s + `.head SET compacted = greatest(compacted, $1) WHERE $1 <= rev RETURNING rev`,
		// A row older than the floor $1 goes when no List at or above the
		// floor can see it (a later row of its key is also below the floor)
		// and no watch from floor-1 needs it as a Prev (the same), and every
		// delete row below the floor goes: no row points to one as its Prev.
		prune: `DELETE FROM ` + s + `.log l WHERE l.rev < $1 AND (l.value IS NULL OR EXISTS (
	SELECT 1 FROM ` + s + `.log n WHERE n.key = l.key AND n.rev > l.rev AND n.rev < $1))`,
	}
}

// Get implements kv.Backend.
func (b *Backend) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	if key == "" {
		return kv.KeyValue{}, fmt.Errorf("pgstore: get of an empty key: %w", store.ErrInvalid)
	}
	var (
		kvp   = kv.KeyValue{Key: key}
		value []byte
	)
	err := b.pool.QueryRow(ctx, b.sql.get, []byte(key)).Scan(&kvp.ModRevision, &kvp.CreateRevision, &value)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && value == nil {
		return kv.KeyValue{}, fmt.Errorf("pgstore: get %q: %w", key, store.ErrNotFound)
	}
	if err != nil {
		return kv.KeyValue{}, mapErr(ctx, fmt.Sprintf("get %q", key), err)
	}
	kvp.Value = value
	return kvp, nil
}

// List implements kv.Backend. Every page is one query that reads the
// latest row of each key at or below the listing's revision; a revision
// below the last Compact gives store.ErrExpired.
func (b *Backend) List(ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
	if opts.Limit < 0 || opts.Revision < 0 {
		return kv.List{}, fmt.Errorf("pgstore: list limit %d or revision %d is negative: %w", opts.Limit, opts.Revision, store.ErrInvalid)
	}
	start, end := []byte(prefix), prefixEnd(prefix)
	if opts.Continue != "" {
		if !strings.HasPrefix(opts.Continue, prefix) {
			return kv.List{}, fmt.Errorf("pgstore: continue key %q is not under prefix %q: %w", opts.Continue, prefix, store.ErrInvalid)
		}
		start = append([]byte(opts.Continue), 0)
	}
	var limit *int
	if opts.Limit > 0 {
		n := opts.Limit + 1 // one more tells whether another page follows
		limit = &n
	}
	rows, err := b.pool.Query(ctx, b.sql.list, start, end, opts.Revision, limit)
	if err != nil {
		return kv.List{}, mapErr(ctx, "list "+prefix, err)
	}
	res, head, low, err := scanList(rows)
	if err != nil {
		return kv.List{}, mapErr(ctx, "list "+prefix, err)
	}
	res.Revision = head
	switch {
	case opts.Revision > head:
		return kv.List{}, fmt.Errorf("pgstore: list at revision %d, after the current %d: %w", opts.Revision, head, store.ErrInvalid)
	case opts.Revision > 0 && opts.Revision < low:
		return kv.List{}, fmt.Errorf("pgstore: list at revision %d, compacted (history starts at %d): %w", opts.Revision, low, store.ErrExpired)
	case opts.Revision > 0:
		res.Revision = opts.Revision
	}
	if opts.Limit > 0 && len(res.KVs) > opts.Limit {
		res.KVs = res.KVs[:opts.Limit]
		res.Continue = res.KVs[opts.Limit-1].Key
	}
	return res, nil
}

// scanList reads the rows of the list query: the keys, and the head and
// floor revisions every row carries.
func scanList(rows pgx.Rows) (res kv.List, head, low int64, err error) {
	defer rows.Close()
	for rows.Next() {
		var (
			key, value  []byte
			create, mod *int64
		)
		if err := rows.Scan(&head, &low, &key, &value, &create, &mod); err != nil {
			return kv.List{}, 0, 0, err
		}
		if key != nil {
			res.KVs = append(res.KVs, kv.KeyValue{Key: string(key), Value: value, CreateRevision: *create, ModRevision: *mod})
		}
	}
	return res, head, low, rows.Err()
}

// prefixEnd is the smallest key after every key under prefix, or nil when
// there is none (an empty prefix, or one of only 0xff bytes).
func prefixEnd(prefix string) []byte {
	end := []byte(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// Txn implements kv.Backend as one call of the schema's txn2 function:
// one statement, one round trip. A connection lost before the answer gives
// an error wrapping store.ErrUnavailable: the write may have committed.
func (b *Backend) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if err := kv.CheckTxn(conds, w); err != nil {
		return 0, fmt.Errorf("pgstore: %w", err)
	}
	keys := make([][]byte, len(conds))
	targets := make([]int32, len(conds))
	revs := make([]int64, len(conds))
	for i, c := range conds {
		keys[i], targets[i], revs[i] = []byte(c.Key), int32(c.Target), c.Revision
	}
	value := w.Value
	if value == nil {
		value = []byte{} // nil would be NULL, which marks a delete
	}
	var (
		rev, actual int64
		failed      int
	)
	err := b.pool.QueryRow(ctx, b.sql.txn, keys, targets, revs, w.Kind == kv.WriteDelete, []byte(w.Key), value, b.name).
		Scan(&rev, &failed, &actual)
	if err != nil {
		return 0, mapErr(ctx, fmt.Sprintf("txn on %q", w.Key), err)
	}
	switch {
	case failed == -1:
		if n := b.cfg.history; n > 0 && rev > n && rev%max(n/8, 1) == 0 {
			_ = b.Compact(ctx, rev-n) // best effort: see WithHistorySize
		}
		return rev, nil
	case failed == -2:
		return 0, fmt.Errorf("pgstore: delete %q: %w", w.Key, store.ErrNotFound)
	case failed >= 0 && failed < len(conds):
		return 0, &kv.CondFailedError{Index: failed, Cond: conds[failed], Actual: actual}
	}
	return 0, fmt.Errorf("pgstore: txn on %q: unexpected answer %d from the txn function", w.Key, failed)
}

// Compact discards the history before rev (store/storetest.Compactor): a
// List pinned below rev, and a Watch from below rev-1, then fail with
// store.ErrExpired. Compacting to a revision already compacted is a no-op;
// one above the current revision gives an error wrapping store.ErrInvalid.
// Writes compact on their own (WithHistorySize); Compact is for other
// policies, and for tests.
func (b *Backend) Compact(ctx context.Context, rev int64) error {
	if rev < 0 {
		return fmt.Errorf("pgstore: compact to negative revision %d: %w", rev, store.ErrInvalid)
	}
	var head int64
	err := b.pool.QueryRow(ctx, b.sql.compact, rev).Scan(&head)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("pgstore: compact to revision %d, after the current revision: %w", rev, store.ErrInvalid)
	}
	if err != nil {
		return mapErr(ctx, "compact", err)
	}
	// The floor is raised first, so no reader still counts on the rows
	// that go now.
	if _, err := b.pool.Exec(ctx, b.sql.prune, rev); err != nil {
		return mapErr(ctx, "compact", err)
	}
	return nil
}

// mapErr turns driver errors into the store's sentinels. An error from the
// server is passed on, except those that say the server is going away,
// overloaded or not reachable, and serialization failures: those, and every
// error that is not the server's (a dial, read or write failure, a lost
// connection, a closed pool), wrap store.ErrUnavailable, since a write whose
// answer was lost may have committed.
func mapErr(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("pgstore: %s: %w", op, ctx.Err())
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			strings.HasPrefix(pe.Code, "53"),       // insufficient resources
			strings.HasPrefix(pe.Code, "57P"),      // operator intervention: shutdown, crash, cannot connect now
			pe.Code == "40001", pe.Code == "40P01": // serialization failure, deadlock
			return fmt.Errorf("pgstore: %s: %w: %w", op, err, store.ErrUnavailable)
		case pe.Code == "54000" && strings.Contains(pe.Message, "too large"):
			return fmt.Errorf("pgstore: %s: %w: %w", op, err, store.ErrTooLarge)
		}
		return fmt.Errorf("pgstore: %s: %w", op, err)
	}
	return fmt.Errorf("pgstore: %s: %w: %w", op, err, store.ErrUnavailable)
}

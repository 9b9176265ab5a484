package pgstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"

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
// seeing each other. It is safe for concurrent use. Close ends its
// watches; the pool stays the caller's.
type Backend struct {
	pool   *pgxpool.Pool
	schema string // quoted identifier
	name   string // unquoted, also the NOTIFY channel
	cfg    config
	hub    *hub
	sql    queries
	held   atomic.Int64 // events the watches read and have not sent yet

	// closing is cancelled by Close; it ends the watches.
	closing   context.Context
	stop      context.CancelFunc
	mu        sync.Mutex     // orders Watch's watches.Add before Close's stop and Wait
	watches   sync.WaitGroup // one per watch goroutine
	closeOnce sync.Once
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
// at most 63 bytes, not starting with "pg_", which PostgreSQL reserves for
// its own schemas (New refuses it with store.ErrInvalid). Every Backend on
// one schema shares its keys and revision.
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

// New returns a Backend on pool, creating its schema, tables and functions
// if they do not exist (concurrent News on one database are safe), and
// migrating a schema of an older pgstore, which kept the revision log
// alone, in one transaction that waits for the older writes in flight (see
// the package doc). The
// caller keeps ownership of pool and closes it after every watch of the
// Backend has ended. A connection failure gives an error wrapping
// store.ErrUnavailable.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Backend, error) {
	if pool == nil {
		return nil, errors.New("pgstore: nil pool")
	}
	cfg := config{schema: DefaultSchema, watchBuffer: DefaultWatchBuffer, poll: DefaultPollInterval, clk: clock.Real{}, history: DefaultHistorySize}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if !identRE.MatchString(cfg.schema) {
		return nil, fmt.Errorf("pgstore: schema name %.80q is not a lower-case SQL identifier of at most 63 bytes: %w", cfg.schema, store.ErrInvalid)
	}
	if strings.HasPrefix(cfg.schema, "pg_") {
		return nil, fmt.Errorf("pgstore: schema name %q starts with \"pg_\", which PostgreSQL reserves for its own schemas: %w", cfg.schema, store.ErrInvalid)
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
	b.closing, b.stop = context.WithCancel(context.Background())
	if err := b.migrate(ctx); err != nil {
		b.stop()
		return nil, err
	}
	return b, nil
}

// Close ends every watch of the Backend, each with a final event wrapping
// store.ErrClosed if its channel has room for it then (Close does not wait
// for a receiver that is behind), and waits for their goroutines, the listening connection's
// among them, to end. It does not close the pool, which is the caller's.
// The calls after Close fail with an error wrapping store.ErrClosed; calls
// in flight when it comes finish as they would have. Close is idempotent,
// safe to call concurrently (every call returns once the first is done),
// and returns nil.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.stop()
		b.mu.Unlock()
		b.watches.Wait()
	})
	return nil
}

// closedErr is the error of a call op after Close. Callers check
// b.closing.Err() first, so that a call on an open Backend does not format
// op.
func closedErr(op string) error {
	return fmt.Errorf("pgstore: %s: backend closed: %w", op, store.ErrClosed)
}

// Schema returns the name of the schema that holds the Backend's tables.
func (b *Backend) Schema() string { return b.name }

// Pool returns the pool the Backend uses.
func (b *Backend) Pool() *pgxpool.Pool { return b.pool }

// The schema. revision holds the store revision and the compaction floor
// in one row, whose row lock every write takes first and holds until it
// commits: writes commit one at a time, in revision order, so a reader that
// sees revision N there sees every write up to N. A sequence would not do:
// concurrent transactions commit in another order than they draw numbers,
// and a watch that read past a gap would skip the late one. Every write
// updates that row, leaving a dead version of it behind, and finds the
// live one by reading every version on its page; revision's fillfactor of
// 10 makes PostgreSQL prune the page of dead versions once it is a tenth
// full, not full (about 15 versions, not 150), which cuts the server's
// work per write by about 4%.
//
// The row is also the cheapest way found to draw a revision in commit
// order, and these three tables the cheapest layout: what a write costs is
// the number of statements it runs, not the tables it writes. Server
// instructions per update of one key (a 200-byte value), prepared, over
// the wire to a server run under callgrind (./testdata/instr/run.sh): a
// raw UPDATE ... WHERE rev = $1, 75k; that UPDATE inside a PL/pgSQL
// function, 92k; that and an INSERT of a log row, with no revision order
// at all, 129k; put3, 177k (205k with a Writer's fence: checking it in
// kv's UPDATE instead costs as much). Of put3's, writing heap tuples and
// index entries takes about 24k, starting up and shutting down its
// statements' executors about 50k, its NOTIFY 5k. Cutting a table costs
// more than the write it saves. The log alone, as kine keeps it (a key's current value
// its newest row, found by a (key, rev) index; the revision drawn as
// max(rev) + 1 by an INSERT ... ON CONFLICT DO NOTHING that retries when
// it loses a race) costs 245k, and kv and the log with that draw instead
// of the revision row 229k: a btree scan for a key's newest row or for
// max(rev) reads its whole leaf page (about 43k per write), where the
// revision row is one HOT update. An advisory lock with the log's max(rev)
// costs more too. One WITH statement that updates revision and kv costs
// more than the two statements (188k). A sequence drawn under an advisory
// lock costs less but is not transactional: a write that fails after
// drawing (a value too large, a lost connection) would skip a revision,
// and a failed write must not advance it. Write-ahead log per update:
// put3 560 bytes (the HOT updates of revision and kv 71 each, the log's
// row 287 and its index entry 64, the commit 34), the raw UPDATE 122,
// kine's layout 528.
//
// kv holds the current value of each live key, which Get, List and the
// conds read by key. log has one row per write, for watches and Lists at a
// past revision: the key's value after it (NULL for a delete), its create
// revision, and prev_rev, the key's previous row (0 for a create), which
// gives a watch event its Prev and a List at revision R the value of a key
// written since R (the prev_rev of its first write after R). Keys are
// bytea: store keys are Go strings, which need not be UTF-8 and may hold
// NUL bytes, and bytea compares bytewise, as key order requires.
//
// Migration. An older pgstore kept no kv table: the current value of a key
// was its latest log row, head was what revision is now, and txn2 (or, at
// first, txn) wrote the log alone. New migrates such a schema in one
// transaction: it locks head, which every older write locks first (so the
// older writes in flight commit before, and none starts until after), fills
// kv from the log, and renames head to revision, leaving in its place a
// view that older processes can read and cannot write: an older write that
// was waiting fails (it re-resolves "head" to the view, and cannot lock or
// update it), as does an older New, rather than write the log behind kv's
// back. txn2 becomes a wrapper of txn3, so older processes that are running
// go on writing correctly until they are replaced. The log's (key, rev)
// index goes: nothing reads the log by key any more.
const schemaSQL = `
CREATE SCHEMA IF NOT EXISTS %[1]s;
DO $migrate$
BEGIN
	IF to_regclass('%[1]s.revision') IS NOT NULL THEN
		RETURN;
	END IF;
	IF to_regclass('%[1]s.head') IS NULL THEN
		CREATE TABLE %[1]s.revision (
			one boolean PRIMARY KEY DEFAULT true CHECK (one),
			rev bigint NOT NULL,
			compacted bigint NOT NULL
		) WITH (fillfactor = 10);
		INSERT INTO %[1]s.revision (rev, compacted) VALUES (0, 0);
		CREATE TABLE %[1]s.log (
			rev bigint PRIMARY KEY,
			key bytea NOT NULL,
			value bytea,
			create_rev bigint NOT NULL,
			prev_rev bigint NOT NULL
		);
	ELSE
		LOCK TABLE %[1]s.head IN ACCESS EXCLUSIVE MODE;
		ALTER TABLE %[1]s.head RENAME TO revision;
		ALTER TABLE %[1]s.revision SET (fillfactor = 10);
		DROP INDEX IF EXISTS %[1]s.log_key_rev;
		DROP FUNCTION IF EXISTS %[1]s.txn(bytea[], int[], bigint[], boolean, bytea, bytea, text);
	END IF;
	-- DISTINCT: a view that cannot be updated or locked.
	CREATE VIEW %[1]s.head AS SELECT DISTINCT rev, compacted FROM %[1]s.revision;
	CREATE TABLE %[1]s.kv (
		key bytea PRIMARY KEY,
		value bytea NOT NULL,
		create_rev bigint NOT NULL,
		mod_rev bigint NOT NULL
	);
	INSERT INTO %[1]s.kv (key, value, create_rev, mod_rev)
		SELECT l.key, l.value, l.create_rev, l.rev FROM (
			SELECT DISTINCT ON (key) key, value, create_rev, rev FROM %[1]s.log ORDER BY key, rev DESC
		) l WHERE l.value IS NOT NULL;
END $migrate$;
-- A revision table of the layout before put3 gets its fillfactor too.
-- This ALTER TABLE takes a lock that writes do not wait for.
DO $fillfactor$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_class WHERE oid = '%[1]s.revision'::regclass AND reloptions @> '{fillfactor=10}') THEN
		ALTER TABLE %[1]s.revision SET (fillfactor = 10);
	END IF;
END $fillfactor$;

-- txn3 applies one write if every cond holds, in one call (one round trip).
-- wvalue NULL is a delete. ktarget and krev are the first cond when it is
-- on the written key (ktarget -1: none), okeys, otargets and orevs the
-- others (NULL: none). It returns {new revision, -1, 0} on success,
-- {0, -2, 0} when a delete finds no key, else {0, the cond that failed (0:
-- the first, k: the k-th of the others), its revision}.
--
-- Locking revision's row is drawing the next revision; a write that does
-- not happen puts it back before its transaction commits, so no one sees
-- it. Each statement of a volatile function sees what committed before it
-- (it takes a new snapshot), so what follows the lock sees every earlier
-- write. The usual write, an update of a key at the revision it was read,
-- is put3's (below), which checks its cond in the UPDATE of kv's row (its
-- WHERE); txn3 reads the conds first. Plain statements, not one with CTEs:
-- PostgreSQL sets up a plan with CTEs for more than the statements would
-- cost.
CREATE OR REPLACE FUNCTION %[1]s.txn3(wkey bytea, wvalue bytea, ktarget int, krev bigint,
	okeys bytea[], otargets int[], orevs bigint[])
RETURNS bigint[] LANGUAGE plpgsql AS $$
DECLARE
	-- No defaults: each costs an evaluation on every call.
	cur bigint;
	p_mod bigint;
	p_create bigint;
	failed int;
	actual bigint;
BEGIN
	UPDATE %[1]s.revision SET rev = rev + 1 RETURNING rev INTO cur;
	SELECT k.mod_rev, k.create_rev INTO p_mod, p_create FROM %[1]s.kv k WHERE k.key = wkey;
	IF NOT FOUND THEN
		p_mod := 0;
		p_create := 0;
	END IF;
	failed := -1;
	actual := 0;
	IF ktarget >= 0 THEN
		actual := CASE WHEN ktarget = 0 THEN p_mod ELSE p_create END;
		IF actual <> krev THEN
			failed := 0;
		END IF;
	END IF;
	IF failed = -1 AND okeys IS NOT NULL THEN
		SELECT c.idx, coalesce(CASE WHEN c.ctarget = 0 THEN k.mod_rev ELSE k.create_rev END, 0) INTO failed, actual
			FROM unnest(okeys, otargets, orevs) WITH ORDINALITY c(ckey, ctarget, crev, idx)
			LEFT JOIN %[1]s.kv k ON k.key = c.ckey
			WHERE coalesce(CASE WHEN c.ctarget = 0 THEN k.mod_rev ELSE k.create_rev END, 0) <> c.crev
			ORDER BY c.idx LIMIT 1;
		IF NOT FOUND THEN
			failed := -1;
			actual := 0;
		END IF;
	END IF;
	IF failed = -1 AND wvalue IS NULL AND p_mod = 0 THEN
		failed := -2;
	END IF;
	IF failed <> -1 THEN
		UPDATE %[1]s.revision SET rev = rev - 1;
		RETURN ARRAY[0, failed, actual];
	END IF;
	IF wvalue IS NULL THEN
		DELETE FROM %[1]s.kv k WHERE k.key = wkey;
		p_create := 0;
	ELSIF p_mod = 0 THEN
		INSERT INTO %[1]s.kv (key, value, create_rev, mod_rev) VALUES (wkey, wvalue, cur, cur);
		p_create := cur;
	ELSE
		UPDATE %[1]s.kv k SET value = wvalue, mod_rev = cur WHERE k.key = wkey;
	END IF;
	INSERT INTO %[1]s.log (rev, key, value, create_rev, prev_rev) VALUES (cur, wkey, wvalue, p_create, p_mod);
	NOTIFY %[1]s;
	RETURN ARRAY[cur, -1, 0];
END $$;

-- put3 is the usual write alone: a put of wkey conditioned on its mod_rev
-- being krev, which must be above 0 (an update; a create is txn3's), and,
-- when fkey is not NULL, on fkey's create_rev being frev (a fence). It
-- returns the new revision; or, having written nothing, -2a when the
-- key's own cond fails and -(2a + 1) when the fence does, a being the
-- actual revision of the first that failed. The fence is read before the update, which cannot be undone; the
-- key's own cond, the first, is then read again when the fence fails. A
-- function of its own, with a scalar answer, costs the server 10%% less
-- than txn3 for an update, 28%% less for a fenced one.
CREATE OR REPLACE FUNCTION %[1]s.put3(wkey bytea, wvalue bytea, krev bigint, fkey bytea, frev bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	cur bigint;
	p_create bigint;
	actual bigint;
BEGIN
	UPDATE %[1]s.revision SET rev = rev + 1 RETURNING rev INTO cur;
	IF fkey IS NOT NULL THEN
		-- No row leaves actual NULL.
		SELECT k.create_rev INTO actual FROM %[1]s.kv k WHERE k.key = fkey;
		IF coalesce(actual, 0) <> frev THEN
			UPDATE %[1]s.revision SET rev = rev - 1;
			SELECT k.mod_rev INTO cur FROM %[1]s.kv k WHERE k.key = wkey;
			IF coalesce(cur, 0) <> krev THEN
				RETURN -2 * coalesce(cur, 0);
			END IF;
			RETURN -2 * coalesce(actual, 0) - 1;
		END IF;
	END IF;
	UPDATE %[1]s.kv k SET value = wvalue, mod_rev = cur
		WHERE k.key = wkey AND k.mod_rev = krev RETURNING k.create_rev INTO p_create;
	IF NOT FOUND THEN
		UPDATE %[1]s.revision SET rev = rev - 1;
		SELECT k.mod_rev INTO actual FROM %[1]s.kv k WHERE k.key = wkey;
		RETURN -2 * coalesce(actual, 0);
	END IF;
	INSERT INTO %[1]s.log (rev, key, value, create_rev, prev_rev) VALUES (cur, wkey, wvalue, p_create, krev);
	NOTIFY %[1]s;
	RETURN cur;
END $$;

-- txn2 is the write function of the previous layout, for older processes
-- still running: the same write through txn3.
CREATE OR REPLACE FUNCTION %[1]s.txn2(ckeys bytea[], ctargets int[], crevs bigint[],
	wdelete boolean, wkey bytea, wvalue bytea, chan text,
	OUT new_rev bigint, OUT failed int, OUT actual bigint)
LANGUAGE sql AS $$
	SELECT t[1], CASE WHEN t[2] > 0 THEN t[2] - 1 ELSE t[2] END, t[3]
	FROM %[1]s.txn3(wkey, CASE WHEN wdelete THEN NULL ELSE wvalue END, -1, 0,
		nullif(ckeys, '{}'), ctargets, crevs) t
$$;
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
	get, list, listToEnd, txn, put, watch, compact, prune string
}

func newQueries(s string) queries {
	return queries{
		get:       `SELECT mod_rev, create_rev, value FROM ` + s + `.kv WHERE key = $1`,
		list:      listQuery(s, true),
		listToEnd: listQuery(s, false),
		txn:       `SELECT ` + s + `.txn3($1, $2, $3, $4, $5, $6, $7)`,
		// The usual write, a put conditioned on the key's ModRevision, and
		// on a fence's CreateRevision ($4, $5; NULL: none).
		put: `SELECT ` + s + `.put3($1, $2, $3, $4, $5)`,
		// The events after $1 under the prefix [$2, $3), scanning at most
		// $5 revisions and returning at most $4 events, with each event's
		// previous row, and the head they were read at. revision has one
		// row, but until it is analyzed the planner counts the rows its
		// pages could hold (thousands), and prices the join by them; LIMIT
		// 1 tells it (see listQuery).
		watch: `WITH h AS (SELECT rev, compacted FROM ` + s + `.revision LIMIT 1)
SELECT h.rev, h.compacted, e.rev, e.key, e.value, e.create_rev, p.value, p.create_rev, p.rev FROM h LEFT JOIN LATERAL (
	SELECT l.* FROM ` + s + `.log l
	WHERE l.rev > $1 AND l.rev <= least(h.rev, $1 + $5) AND l.key >= $2 AND ($3::bytea IS NULL OR l.key < $3)
	ORDER BY l.rev LIMIT $4
) e ON true LEFT JOIN ` + s + `.log p ON p.rev = e.prev_rev ORDER BY e.rev`,
		compact: `UPDATE ` + s + `.revision SET compacted = greatest(compacted, $1) WHERE $1 <= rev RETURNING rev`,
		// A row older than the floor $1 goes when no List at or above the
		// floor can see it and no watch from floor-1 needs it as a Prev:
		// when the key's next row, which points to it (prev_rev), is also
		// below the floor. Every delete row below the floor goes: no row
		// points to one.
		prune: `DELETE FROM ` + s + `.log l WHERE l.rev < $1 AND (l.value IS NULL OR l.rev IN (
	SELECT n.prev_rev FROM ` + s + `.log n WHERE n.rev < $1))`,
	}
}

// listQuery is List's query, one statement, so one snapshot: the head it
// reports is the state the rows show. $1 is the first key; with bounded,
// $2 is the end of the range, else it has none and the others move down
// one. Then come the pinned revision R (0: head) and the limit (NULL:
// none). The keys at R are those of kv not written since R, and, of each
// key written since R, the row before its first write after R (none for a
// create). Each side is ordered and limited on its own, so a page reads
// kv's index from its first key on, no further than it needs. h reads
// revision's one row with LIMIT 1: until autovacuum analyzes revision, the
// planner counts the rows its pages could hold (4,525 on a new schema
// after 4,000 writes) and prices the join by them, and a plan priced above
// jit_above_cost (100,000 by default) is JIT-compiled: a List of 100 keys
// took 30 ms instead of 0.3 ms.
func listQuery(s string, bounded bool) string {
	end, rev, limit := "AND k.key < $2", "$3", "$4"
	if !bounded {
		end, rev, limit = "", "$2", "$3"
	}
	return `WITH h AS (SELECT rev, compacted, CASE WHEN ` + rev + `::bigint = 0 THEN rev ELSE ` + rev + `::bigint END AS at FROM ` + s + `.revision LIMIT 1)
SELECT h.rev, h.compacted, d.key, d.value, d.create_rev, d.mod_rev FROM h LEFT JOIN LATERAL (
	(SELECT k.key, k.value, k.create_rev, k.mod_rev FROM ` + s + `.kv k
	WHERE k.key >= $1 ` + end + ` AND k.mod_rev <= h.at ORDER BY k.key LIMIT ` + limit + `)
	UNION ALL
	(SELECT p.key, p.value, p.create_rev, p.rev FROM (
		SELECT DISTINCT ON (k.key) k.prev_rev FROM ` + s + `.log k -- k: end names k.key
		WHERE k.rev > h.at AND k.key >= $1 ` + end + `
		ORDER BY k.key, k.rev
	) c JOIN ` + s + `.log p ON p.rev = c.prev_rev ORDER BY p.key LIMIT ` + limit + `)
	ORDER BY 1 LIMIT ` + limit + `
) d ON true ORDER BY d.key`
}

// Get implements kv.Backend.
func (b *Backend) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	if key == "" {
		return kv.KeyValue{}, fmt.Errorf("pgstore: get of an empty key: %w", store.ErrInvalid)
	}
	if b.closing.Err() != nil {
		return kv.KeyValue{}, closedErr(fmt.Sprintf("get %q", key))
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
	if b.closing.Err() != nil {
		return kv.List{}, closedErr("list " + prefix)
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
	var (
		rows pgx.Rows
		err  error
	)
	if end == nil {
		rows, err = b.pool.Query(ctx, b.sql.listToEnd, start, opts.Revision, limit)
	} else {
		rows, err = b.pool.Query(ctx, b.sql.list, start, end, opts.Revision, limit)
	}
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

// Txn implements kv.Backend as one call of the schema's txn3 function:
// one round trip. A connection lost before the answer gives an error
// wrapping store.ErrUnavailable: the write may have committed. A key is
// an entry of a btree index, which PostgreSQL limits to about 2.7 KB
// after compression (a key of 2,700 random bytes is over it): a put of a
// longer key gives an error wrapping store.ErrInvalid and writes nothing.
func (b *Backend) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if err := kv.CheckTxn(conds, w); err != nil {
		return 0, fmt.Errorf("pgstore: %w", err)
	}
	if b.closing.Err() != nil {
		return 0, closedErr(fmt.Sprintf("txn on %q", w.Key))
	}
	a := newTxnArgs(conds, w)
	if a.ktarget == int32(kv.ModRevision) && a.krev > 0 && w.Kind == kv.WritePut &&
		(len(a.rest) == 0 || len(a.rest) == 1 && a.rest[0].Target == kv.CreateRevision) {
		return b.put(ctx, conds, w.Key, a.value)
	}
	var res []int64 // the new revision, the cond that failed, its revision
	err := b.pool.QueryRow(ctx, b.sql.txn, []byte(w.Key), a.value, a.ktarget, a.krev, a.keys, a.targets, a.revs).Scan(&res)
	if err == nil && len(res) != 3 {
		err = fmt.Errorf("the txn function answered %v", res)
	}
	if err != nil {
		return 0, mapErr(ctx, fmt.Sprintf("txn on %q", w.Key), err)
	}
	rev, failed, actual := res[0], int(res[1]), res[2]
	if failed > 0 && len(a.rest) == len(conds) {
		failed-- // the others are all the conds
	}
	switch {
	case failed == -1:
		b.compactHistory(ctx, rev)
		return rev, nil
	case failed == -2:
		return 0, fmt.Errorf("pgstore: delete %q: %w", w.Key, store.ErrNotFound)
	case failed >= 0 && failed < len(conds):
		return 0, &kv.CondFailedError{Index: failed, Cond: conds[failed], Actual: actual}
	}
	return 0, fmt.Errorf("pgstore: txn on %q: unexpected answer %d from the txn function", w.Key, failed)
}

// put is Txn's usual write as one call of put3: a put of key conditioned
// on its ModRevision (conds[0], above 0) and, when there is a conds[1], on
// another key's CreateRevision, as a Writer's fence is. Its answer is one
// number: the new revision, or -(2a + i) for the first cond i that failed,
// whose actual revision is a.
func (b *Backend) put(ctx context.Context, conds []kv.Cond, key string, value []byte) (int64, error) {
	var (
		fkey []byte // NULL: no fence
		frev int64
		rev  int64
	)
	if len(conds) > 1 {
		fkey, frev = []byte(conds[1].Key), conds[1].Revision
	}
	if err := b.pool.QueryRow(ctx, b.sql.put, []byte(key), value, conds[0].Revision, fkey, frev).Scan(&rev); err != nil {
		return 0, mapErr(ctx, fmt.Sprintf("txn on %q", key), err)
	}
	if rev <= 0 {
		i := int(-rev & 1)
		return 0, &kv.CondFailedError{Index: i, Cond: conds[i], Actual: -rev >> 1}
	}
	b.compactHistory(ctx, rev)
	return rev, nil
}

// txnArgs are Txn's arguments as the txn function takes them.
type txnArgs struct {
	ktarget int32 // the written key's own cond, -1 when there is none
	krev    int64
	rest    []kv.Cond // the other conds, as the arrays below (nil for NULL)
	keys    [][]byte
	targets []int32
	revs    []int64
	value   []byte // nil, NULL, is a delete
}

// newTxnArgs splits conds for the txn function: the first cond, when on the
// written key (an update's own), goes as scalars; the others, as arrays,
// NULL when there are none.
func newTxnArgs(conds []kv.Cond, w kv.Write) txnArgs {
	a := txnArgs{ktarget: -1, rest: conds}
	if len(conds) > 0 && conds[0].Key == w.Key {
		a.ktarget, a.krev, a.rest = int32(conds[0].Target), conds[0].Revision, conds[1:]
	}
	if len(a.rest) > 0 {
		a.keys, a.targets, a.revs = make([][]byte, len(a.rest)), make([]int32, len(a.rest)), make([]int64, len(a.rest))
		for i, c := range a.rest {
			a.keys[i], a.targets[i], a.revs[i] = []byte(c.Key), int32(c.Target), c.Revision
		}
	}
	if w.Kind == kv.WritePut {
		a.value = w.Value
		if a.value == nil {
			a.value = []byte{}
		}
	}
	return a
}

// compactHistory compacts to rev minus the history size, at every eighth
// of it, after a write committed at rev. Best effort: see WithHistorySize.
func (b *Backend) compactHistory(ctx context.Context, rev int64) {
	if n := b.cfg.history; n > 0 && rev > n && rev%max(n/8, 1) == 0 {
		_ = b.Compact(ctx, rev-n)
	}
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
	if b.closing.Err() != nil {
		return closedErr(fmt.Sprintf("compact to %d", rev))
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

// mapErr turns driver errors into the store's sentinels. A closed pool
// wraps store.ErrClosed: nothing was sent, and no retry can help. An error
// from the server is passed on, except those that say the server is going
// away, overloaded or not reachable, and serialization failures: those, and
// every other error that is not the server's (a dial, read or write
// failure, a lost connection), wrap store.ErrUnavailable, since a write
// whose answer was lost may have committed.
func mapErr(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("pgstore: %s: %w", op, ctx.Err())
	}
	if errors.Is(err, puddle.ErrClosedPool) {
		return fmt.Errorf("pgstore: %s: %w: %w", op, err, store.ErrClosed)
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
		case pe.Code == "54000" && strings.HasPrefix(pe.Message, "index row"):
			// A key too long for kv's btree index (see Txn).
			return fmt.Errorf("pgstore: %s: key too long for PostgreSQL's index: %w: %w", op, err, store.ErrInvalid)
		}
		return fmt.Errorf("pgstore: %s: %w", op, err)
	}
	return fmt.Errorf("pgstore: %s: %w: %w", op, err, store.ErrUnavailable)
}

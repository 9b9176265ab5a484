package pgstore_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/pgstore"
)

// layout1SQL is the schema of pgstore before the current-value table: the
// revision log alone, a head table and the txn2 function, as an older
// pgstore created it (and re-created it on each New). %[1]s is the schema.
const layout1SQL = `
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

// TestNewMigratesTheLogOnlyLayout opens, with New, a schema that an older
// pgstore wrote (the revision log alone): nothing of it is lost (Get,
// List at head and at a past revision, a Watch from a past revision with
// its Prevs), writes go on from its revision, an older process's write
// that was already running still lands where the new one reads, and an
// older process's own write paths are shut: its New and any write that
// bumps the revision the old way fail loudly instead of writing the log
// alone behind the current values' back.
func TestNewMigratesTheLogOnlyLayout(t *testing.T) {
	pool := newPool(t)
	ctx := t.Context()
	schema := fmt.Sprintf("t%d", schemas.Add(1))
	_, err := pool.Exec(ctx, fmt.Sprintf(layout1SQL, schema))
	require.NoError(t, err)
	// oldTxn is an older process's Txn: one call of txn2.
	oldTxn := func(del bool, key, value string, conds ...kv.Cond) (rev int64, failed int) {
		t.Helper()
		var (
			keys    = [][]byte{}
			targets = []int32{}
			revs    = []int64{}
			actual  int64
		)
		for _, c := range conds {
			keys, targets, revs = append(keys, []byte(c.Key)), append(targets, int32(c.Target)), append(revs, c.Revision)
		}
		require.NoError(t, pool.QueryRow(ctx, "SELECT new_rev, failed, actual FROM "+schema+".txn2($1, $2, $3, $4, $5, $6, $7)",
			keys, targets, revs, del, []byte(key), []byte(value), schema).Scan(&rev, &failed, &actual))
		return rev, failed
	}
	for i, w := range []struct {
		del        bool
		key, value string
	}{{false, "a", "a1"}, {false, "b", "b1"}, {false, "a", "a2"}, {true, "b", ""}, {false, "c", "c1"}, {false, "b", "b2"}} {
		rev, failed := oldTxn(w.del, w.key, w.value)
		require.Equal(t, -1, failed)
		require.Equal(t, int64(i+1), rev)
	}

	b, err := pgstore.New(ctx, pool, pgstore.WithSchema(schema))
	require.NoError(t, err)
	at := func(key, value string, create, mod int64) kv.KeyValue {
		return kv.KeyValue{Key: key, Value: []byte(value), CreateRevision: create, ModRevision: mod}
	}
	got, err := b.Get(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, at("b", "b2", 6, 6), got, "a key deleted and created again")
	l, err := b.List(ctx, "", kv.ListOptions{})
	require.NoError(t, err)
	require.Equal(t, kv.List{Revision: 6, KVs: []kv.KeyValue{at("a", "a2", 1, 3), at("b", "b2", 6, 6), at("c", "c1", 5, 5)}}, l)
	l, err = b.List(ctx, "", kv.ListOptions{Revision: 3})
	require.NoError(t, err)
	require.Equal(t, kv.List{Revision: 3, KVs: []kv.KeyValue{at("a", "a2", 1, 3), at("b", "b1", 2, 2)}}, l, "the store as it was at revision 3")

	ch, err := b.Watch(ctx, "", 2)
	require.NoError(t, err)
	rev, err := b.Txn(ctx, []kv.Cond{{Key: "a", Target: kv.ModRevision, Revision: 3}}, kv.Write{Kind: kv.WritePut, Key: "a", Value: []byte("a3")})
	require.NoError(t, err)
	require.Equal(t, int64(7), rev, "writes go on from the log's revision")
	want := []kv.Event{
		{Type: kv.EventPut, Revision: 3, KV: at("a", "a2", 1, 3), Prev: at("a", "a1", 1, 1)},
		{Type: kv.EventDelete, Revision: 4, KV: kv.KeyValue{Key: "b", ModRevision: 4}, Prev: at("b", "b1", 2, 2)},
		{Type: kv.EventPut, Revision: 5, KV: at("c", "c1", 5, 5)},
		{Type: kv.EventPut, Revision: 6, KV: at("b", "b2", 6, 6)},
		{Type: kv.EventPut, Revision: 7, KV: at("a", "a3", 1, 7), Prev: at("a", "a2", 1, 3)},
	}
	for _, w := range want {
		ev := <-ch
		for ev.Progress {
			ev = <-ch
		}
		require.NoError(t, ev.Err)
		require.Equal(t, w, ev)
	}

	// An older process still running calls txn2 for its writes.
	rev, failed := oldTxn(false, "c", "c2", kv.Cond{Key: "c", Target: kv.ModRevision, Revision: 5})
	require.Equal(t, -1, failed)
	require.Equal(t, int64(8), rev)
	got, err = b.Get(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, at("c", "c2", 5, 8), got, "an older process's write lands in the current values")
	_, failed = oldTxn(false, "c", "c3", kv.Cond{Key: "c", Target: kv.ModRevision, Revision: 5})
	require.Equal(t, 0, failed, "its conds are checked against the current values")

	_, err = pool.Exec(ctx, fmt.Sprintf(layout1SQL, schema))
	require.Error(t, err, "an older pgstore's New refuses the migrated schema")
	_, err = pool.Exec(ctx, "UPDATE "+schema+".head SET rev = rev + 1")
	require.Error(t, err, "an older write that was waiting for the migration cannot take a revision")
	_, err = pgstore.New(ctx, pool, pgstore.WithSchema(schema))
	require.NoError(t, err, "New on a migrated schema")
	got, err = b.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, at("a", "a3", 1, 7), got)
}

// TestEveryLayoutGetsTheRevisionFillfactor checks that New leaves the
// revision table at fillfactor 10 (see the schema's doc) whatever layout
// it opens: a new schema, the log-only layout it migrates, and the layout
// of the current-value table before the fillfactor, on which a process of
// that version still writes through txn3 as it did.
func TestEveryLayoutGetsTheRevisionFillfactor(t *testing.T) {
	pool := newPool(t)
	ctx := t.Context()
	fillfactor := func(schema string) []string {
		t.Helper()
		var opts []string
		require.NoError(t, pool.QueryRow(ctx, `SELECT reloptions FROM pg_class WHERE oid = $1::regclass`, schema+".revision").Scan(&opts))
		return opts
	}
	want := []string{"fillfactor=10"}

	fresh := newBackend(t, pool)
	require.Equal(t, want, fillfactor(fresh.Schema()), "a new schema")

	logOnly := fmt.Sprintf("t%d", schemas.Add(1))
	_, err := pool.Exec(ctx, fmt.Sprintf(layout1SQL, logOnly))
	require.NoError(t, err)
	_, err = pgstore.New(ctx, pool, pgstore.WithSchema(logOnly))
	require.NoError(t, err)
	require.Equal(t, want, fillfactor(logOnly), "the log-only layout, migrated")

	// The layout before the fillfactor is this one without it.
	before := newBackend(t, pool)
	_, err = pool.Exec(ctx, `ALTER TABLE `+before.Schema()+`.revision RESET (fillfactor)`)
	require.NoError(t, err)
	rev, err := before.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("v1")})
	require.NoError(t, err)
	_, err = pgstore.New(ctx, pool, pgstore.WithSchema(before.Schema()))
	require.NoError(t, err)
	require.Equal(t, want, fillfactor(before.Schema()), "the layout before the fillfactor")
	// An update as that version sent it.
	var res []int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT `+before.Schema()+`.txn3($1, $2, 0, $3, NULL, NULL, NULL)`, []byte("k"), []byte("v2"), rev).Scan(&res))
	require.Equal(t, []int64{rev + 1, -1, 0}, res, "an older process's update")
	require.NoError(t, pool.QueryRow(ctx, `SELECT `+before.Schema()+`.txn3($1, $2, 0, $3, NULL, NULL, NULL)`, []byte("k"), []byte("v3"), rev).Scan(&res))
	require.Equal(t, []int64{0, 0, rev + 1}, res, "an older process's stale update")
	got, err := before.Get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, kv.KeyValue{Key: "k", Value: []byte("v2"), CreateRevision: rev, ModRevision: rev + 1}, got)
}

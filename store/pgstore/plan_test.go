package pgstore_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadsAreNotPlannedAsBigQueries checks that the planner prices a List
// and a watch read by what they read, on a schema just written that
// autovacuum has not analyzed yet. Both read the revision table's single
// row and join it with the keys they read: priced as the thousands of rows
// its pages could hold, a List of 100 keys cost 615,000 and a watch read
// 136,000, and PostgreSQL JIT-compiles a plan that costs more than
// jit_above_cost (100,000 by default) on every execution: such a List took
// 30 ms instead of 0.3 ms. Autovacuum analyzes the table within a minute
// or so, but a new schema, a server whose statistics a crash reset, or one
// whose autovacuum lags would pay that on every read meanwhile.
func TestReadsAreNotPlannedAsBigQueries(t *testing.T) {
	pool := newPool(t)
	be := newBackend(t, pool)
	ctx := t.Context()
	for range 4 {
		_, err := pool.Exec(ctx, `SELECT `+be.Schema()+`.txn3(convert_to(format('obj/%s/%s', i / 100, i % 100), 'UTF8'), '\x00', -1, 0, NULL, NULL, NULL)
			FROM generate_series(0, 999) i`)
		require.NoError(t, err)
	}
	var jitAbove float64
	require.NoError(t, pool.QueryRow(ctx, `SELECT current_setting('jit_above_cost')::float8`).Scan(&jitAbove))
	cost := func(query string, args ...any) float64 {
		t.Helper()
		var plan []struct {
			Plan struct {
				TotalCost float64 `json:"Total Cost"`
			}
		}
		var out []byte
		require.NoError(t, pool.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+query, args...).Scan(&out))
		require.NoError(t, json.Unmarshal(out, &plan))
		return plan[0].Plan.TotalCost
	}
	list, watch := be.ReadQueries()
	require.Less(t, cost(list, []byte("obj/3/"), []byte("obj/30"), 0, nil), jitAbove, "a List of 100 keys")
	require.Less(t, cost(watch, 0, []byte("obj/3/"), []byte("obj/30"), 256, 2048), jitAbove, "a watch read of 256 events")
}

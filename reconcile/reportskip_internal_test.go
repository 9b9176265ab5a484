package reconcile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// judgeLater asks whether a change is to the Loops' reports alone only
// when the section check found one changed, or when the ChangeFunc is the
// user's: a ChangeFunc of the user's may name a path under Stalled that
// the section check did not see change, and its verdict stands (the
// change is no write that counts: no hint, and not the Loop's own early
// write either); the Store's FieldChanges finds none there.
func TestJudgeAsksAboutReportsOnlyWhereTheyCanBeAll(t *testing.T) {
	st, err := store.New[appSpec, appStatus](memstore.New(), "App")
	require.NoError(t, err)
	c := cache.New[appSpec, appStatus](st)
	old := &app{Meta: store.Meta{Name: "a", UID: "u", Generation: 1, Revision: 1, LastWrite: store.LastWrite{Manager: "user"}}}
	new := &app{Meta: old.Meta, Status: appStatus{Phase: "ok"}}
	new.Meta.Revision, new.Meta.LastWrite.Manager = 2, "app" // hooksSink's reconciler, not reported: early
	reportOnly := func(_, _ *app, _ string) (owned, foreign []diff.Path) {
		return []diff.Path{stalledPath.Field("status")}, nil
	}
	h := &hooksSink{}
	user := FromStore(c, st, WithChanges(reportOnly)).(storeSource[appSpec, appStatus])
	require.Equal(t, judgement{}, user.judgeLater(h, old, new), "the user's ChangeFunc says only Stalled changed")
}

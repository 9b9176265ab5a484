package debugpage_test

// Black-box tests of the documented contract, written from the package
// documentation alone.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/debugpage"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
)

// Error texts are cut to MaxErrorBytes, mark included, and a cut never splits a
// character: a text of three-byte characters, which no cut at
// MaxErrorBytes lands between, comes back as whole characters.
func TestBlackbox49ErrorTextsAreCutBetweenCharacters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		long := strings.Repeat("日", debugpage.MaxErrorBytes) // 3 bytes each
		r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) {
			return reconcile.Result{}, reconcile.Terminal(errors.New(long))
		})
		l := newLoop(t, "apps", r, "k")
		page := debugpage.New()
		require.NoError(t, page.AddLoop(l))
		stop := run(t, l)
		synctest.Wait()
		rec := get(t, page, "/api/keys")
		require.True(t, utf8.Valid(rec.Body.Bytes()))
		keys := decode[[]debugpage.KeyView](t, rec)
		require.Len(t, keys, 1)
		// The mark counts within MaxErrorBytes (round 53: it used to add
		// its 9 bytes beyond it, and this test allowed that).
		require.LessOrEqual(t, len(keys[0].LastError), debugpage.MaxErrorBytes)
		text, cut := strings.CutSuffix(keys[0].LastError, " …(cut)")
		require.True(t, cut, "the text is marked cut")
		require.Greater(t, len(text), debugpage.MaxErrorBytes-len(" …(cut)")-utf8.UTFMax)
		require.True(t, utf8.ValidString(text), "whole characters only")
		require.NotContains(t, text, "\uFFFD", "whole characters only")
		require.True(t, strings.HasSuffix(text, "日"), "whole characters only")
		require.NoError(t, stop())
	})
}

// "the handler never changes anything (any method but GET and HEAD gets
// 405)": on every path, known or not, and HEAD is answered like GET.
func TestBlackbox49EveryPathIsReadOnly(t *testing.T) {
	page := debugpage.New()
	for _, path := range []string{"/", "/api/loops", "/api/keys?loop=x", "/api/caches", "/api/object", "/api/events", "/assets/app.js", "/nothing"} {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions, "BREW"} {
			rec := httptest.NewRecorder()
			page.ServeHTTP(rec, httptest.NewRequest(m, path, strings.NewReader("{}")))
			require.Equal(t, http.StatusMethodNotAllowed, rec.Code, "%s %s", m, path)
			require.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
		}
	}
	rec := httptest.NewRecorder()
	page.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/api/loops", nil))
	require.Equal(t, http.StatusOK, rec.Code)
}

// The JSON endpoints answer lists as JSON arrays, never null, when there
// is nothing to list: no Loops, no caches, a Loop filter matching none, no
// recorder (WithEvents not given).
func TestBlackbox49EmptyListsAreArrays(t *testing.T) {
	page := debugpage.New()
	for _, path := range []string{"/api/loops", "/api/keys", "/api/keys?loop=none&q=x", "/api/caches"} {
		rec := get(t, page, path)
		require.Equal(t, http.StatusOK, rec.Code, path)
		require.JSONEq(t, `[]`, rec.Body.String(), path)
	}
	ev := decode[map[string]any](t, get(t, page, "/api/events?kind=App&name=a"))
	require.Equal(t, []any{}, ev["events"])
}

// Kstatus follows kstatus' order, as documented.
func TestBlackbox49KstatusOrder(t *testing.T) {
	cond := func(typ string, s store.ConditionStatus, gen int64) store.Condition {
		return store.Condition{Type: typ, Status: s, ObservedGeneration: gen, Message: typ + " says"}
	}
	T, F, U := store.ConditionTrue, store.ConditionFalse, store.ConditionUnknown
	for _, c := range []struct {
		name     string
		gen      int64
		deleting bool
		conds    []store.Condition
		want     string
	}{
		{"deleting beats everything", 2, true, []store.Condition{cond("Ready", T, 2)}, debugpage.KstatusTerminating},
		{"an old observed generation", 3, false, []store.Condition{cond("Ready", T, 2)}, debugpage.KstatusInProgress},
		{"the highest observed generation counts", 3, false, []store.Condition{cond("Stalled", F, 1), cond("Ready", T, 3)}, debugpage.KstatusCurrent},
		{"no observed generation: not compared", 3, false, []store.Condition{cond("Ready", T, 0)}, debugpage.KstatusCurrent},
		{"Reconciling before Stalled", 1, false, []store.Condition{cond("Stalled", T, 1), cond("Reconciling", T, 1)}, debugpage.KstatusInProgress},
		{"Stalled before Ready", 1, false, []store.Condition{cond("Ready", T, 1), cond("Stalled", T, 1)}, debugpage.KstatusFailed},
		{"Stalled=False is not Failed", 1, false, []store.Condition{cond("Stalled", F, 1), cond("Ready", T, 1)}, debugpage.KstatusCurrent},
		{"Ready=False", 1, false, []store.Condition{cond("Ready", F, 1)}, debugpage.KstatusInProgress},
		{"Ready=Unknown", 1, false, []store.Condition{cond("Ready", U, 1)}, debugpage.KstatusInProgress},
		{"no Ready condition", 1, false, nil, debugpage.KstatusCurrent},
	} {
		got, msg := debugpage.Kstatus(c.gen, c.deleting, c.conds)
		require.Equal(t, c.want, got, c.name)
		require.NotEmpty(t, msg, "%s: message says why", c.name)
	}
}

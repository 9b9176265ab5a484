package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// bigError is an error of at least size bytes over lines lines (lines > 1),
// the last of which says so.
func bigError(size, lines int) error {
	line := strings.Repeat("x", size/(lines-1))
	var b strings.Builder
	for i := range lines - 1 {
		fmt.Fprintf(&b, "%d %s\n", i, line)
	}
	b.WriteString("the last line")
	return errors.New(b.String())
}

// requireBounded asserts what the Loop promises of every message it
// stores: one line of valid UTF-8, at most 256 bytes.
func requireBounded(t *testing.T, msg string) {
	t.Helper()
	require.LessOrEqual(t, len(msg), 256, "at most 256 bytes")
	require.True(t, utf8.ValidString(msg), "valid UTF-8")
	require.NotContains(t, msg, "\n")
	require.NotContains(t, msg, "\r")
}

// Every condition message the Loop stores is bounded, not only a panic's:
// a 10 KB error of 401 lines, and one over 1 MiB (which, stored whole,
// makes the write fail and the object is never marked Stalled). The
// message is one line of at most 256 bytes, cut with a marker; the whole
// error is in the log and in Inspect.
func TestStalledMessageIsBounded(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"10 KB over 401 lines", bigError(10<<10, 401)},
		{"over 1 MiB", bigError(kv.MaxValueSize, 2)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, "App", nil)
				defer e.stop()
				e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
				var log logBuffer
				r := Func[string](func(context.Context, string) (Result, error) { return Result{}, Blocked("Big", tt.err) })
				l := mustNew(t, r, FromStore(e.cache, e.st), append(fixedBackoff(), WithLogger(newLogger(&log)))...)
				stop := start(t, l)
				time.Sleep(time.Second)
				synctest.Wait()
				c, ok := conditions.Get(e.get(t, "a").Conditions, conditions.Stalled)
				// Before: 10 KB: the message was the error, whole (10,656 bytes, 401 lines);
				// over 1 MiB: no Stalled at all (the write failed).
				require.True(t, ok, "Stalled is stored")
				require.Equal(t, "Big", c.Reason)
				t.Logf("%d bytes, %d lines", len(c.Message), strings.Count(c.Message, "\n")+1)
				requireBounded(t, c.Message)
				require.True(t, strings.HasPrefix(c.Message, "test: 0 xxx"), c.Message)
				require.True(t, strings.HasSuffix(c.Message, "..."), "cut with a marker")
				info := l.Inspect("a")
				require.Equal(t, tt.err.Error(), errors.Unwrap(info.Err).Error(), "Inspect has the whole error")
				require.Contains(t, log.String(), "the last line", "the log has the whole error")
				require.NoError(t, stop())
			})
		})
	}
}

func TestConditionMessage(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
	}{
		{"short text is kept", "app: boom", "app: boom"},
		{"lines become one", "app: first\nsecond\r\n\tthird  ", "app: first second third"},
		{"controls are spaces", "a\x00b\x1bc", "a b c"},
		{"invalid UTF-8 is replaced", "app: \xff\xfe!", "app: \uFFFD\uFFFD!"},
		{"cut on a rune boundary", "app: x" + strings.Repeat("é", 200), "app: x" + strings.Repeat("é", 123) + "..."},
		{"no space before the marker", strings.Repeat("abcdefghij ", 100), strings.TrimSpace(strings.Repeat("abcdefghij ", 23)) + "..."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := conditionMessage(tt.in)
			require.Equal(t, tt.want, got)
			requireBounded(t, got)
		})
	}
	require.Len(t, conditionMessage(strings.Repeat("x", 256)), 256, "256 bytes fit")
	require.Equal(t, strings.Repeat("x", 253)+"...", conditionMessage(strings.Repeat("x", 257)))
	short := "app: boom"
	require.Zero(t, testing.AllocsPerRun(10, func() { _ = conditionMessage(short) }), "a plain line is not copied")
}

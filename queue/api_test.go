package queue_test

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/queue"
)

// The stamped Get and Done a Loop shares its clock reads through are
// plumbing, kept in internal/workqueue: a Queue's methods are the work
// queue's and nothing else.
func TestQueueHasNoStampedMethods(t *testing.T) {
	typ := reflect.TypeFor[*queue.Queue[string]]()
	var names []string
	for m := range typ.Methods() {
		names = append(names, m.Name)
	}
	for _, plumbing := range []string{"GetStamped", "DoneStamped", "Stamp"} {
		require.NotContains(t, names, plumbing)
	}
	require.ElementsMatch(t, []string{"Add", "AddAfter", "AddLow", "AddRateLimited", "All", "Counts", "Delayed", "Done",
		"Forget", "Get", "Len", "Name", "NumRequeues", "ShutDown", "ShutDownWithDrain", "State"}, names)
}

package reconciletest

import (
	"reflect"
	"testing"

	"github.com/steady-go/steady/reconcile"
)

// unlisted must forward every method of the cache source except Keys:
// the Loop finds warm-up, read-your-writes and any future hook by the
// methods a source has, so a method missing here would silently switch one
// off in every simulation.
func TestUnlistedForwardsEveryMethodButKeys(t *testing.T) {
	src := reflect.TypeFor[*reconcile.CacheSource[int, int]]()
	got := reflect.TypeFor[unlisted[int, int]]()
	for i := range src.NumMethod() {
		m := src.Method(i)
		if m.Name == "Keys" {
			if _, ok := got.MethodByName("Keys"); ok {
				t.Error("unlisted must not list keys")
			}
			continue
		}
		if _, ok := got.MethodByName(m.Name); !ok {
			t.Errorf("unlisted does not forward %s", m.Name)
		}
	}
}

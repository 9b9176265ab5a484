package watchopt

import (
	"context"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPrevIsWantedUnlessWithoutPrevMarkedTheContext(t *testing.T) {
	type otherKey struct{}
	ctx := context.Background()
	if !Prev(ctx) {
		t.Fatal("a plain context asks for previous states")
	}
	if !Prev(context.WithValue(ctx, otherKey{}, true)) {
		t.Fatal("another key's value does not turn previous states off")
	}
	marked := WithoutPrev(ctx)
	if Prev(marked) {
		t.Fatal("WithoutPrev turns previous states off")
	}
	derived, cancel := context.WithCancel(marked)
	defer cancel()
	if Prev(derived) {
		t.Fatal("a context derived from a marked one is marked too")
	}
}

package storeaccess

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type hooks = Hooks

type carrier struct{ hooks }

type wrapper struct{ *carrier }

// Of finds what a carrier was built with, also through a type that embeds
// one (a caller that must not see through a wrapper checks the type first);
// anything else carries nothing.
func TestOfReadsTheHooksACarrierWasBuiltWith(t *testing.T) {
	c := &carrier{NewHooks("lean")}
	if got := Of(c); got != "lean" {
		t.Fatalf("Of(carrier) = %v, want lean", got)
	}
	if got := Of(wrapper{c}); got != "lean" {
		t.Fatalf("Of(wrapper) = %v, want lean", got)
	}
	for _, x := range []any{nil, "x", carrier{}, &carrier{}, (*carrier)(nil)} { // a nil carrier: a nil *store.Store
		if got := Of(x); got != nil {
			t.Fatalf("Of(%#v) = %v, want nil", x, got)
		}
	}
}

package storetest_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
	"github.com/steady-go/steady/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemstore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) kv.Backend { return memstore.New() })
}

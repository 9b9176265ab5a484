package embedetcd_test

import (
	"net"
	"testing"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/examples/internal/embedetcd"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Process-wide goroutines that the embedded etcd server and gRPC
		// start once and never stop; not per-test leaks.
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
		goleak.IgnoreAnyFunction("go.etcd.io/etcd/pkg/v3/schedule.(*fifo).run"),
		goleak.IgnoreAnyFunction("github.com/golang/glog.(*fileSink).flushDaemon"),
	)
}

// The member Start returns accepts connections on the address it names.
func TestStartServesOnTheReturnedAddress(t *testing.T) {
	addr := embedetcd.Start(t, nil)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	c.Close()
}

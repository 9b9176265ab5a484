package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The default demo's first run downloads and compiles only what it runs:
// the etcd mode, with etcd's client, gRPC and zap, is the program
// fleet-etcd, the PostgreSQL mode, with pgx, the program fleet-pg, and
// neither this program nor the demo package imports them.
// (The demo's tests are in examples/fleet/internal/demo.)
func TestDefaultProgramCompilesNothingOfEtcd(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the imports with")
	}
	deps := func(pkg string) []string {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.Fields(string(out))
	}
	// Protobuf is not on the list: the Prometheus client behind -debug's
	// /metrics needs it (its exposition types are protobuf messages).
	heavy := []string{"go.etcd.io/etcd/", "google.golang.org/grpc", "go.uber.org/zap", "github.com/steady-go/steady/store/etcdstore",
		"github.com/jackc/pgx/", "github.com/steady-go/steady/store/pgstore"}
	isHeavy := func(p string) bool {
		for _, h := range heavy {
			if strings.HasPrefix(p, h) {
				return true
			}
		}
		return false
	}
	for _, p := range deps(".") {
		require.False(t, isHeavy(p), "examples/fleet imports %s", p)
	}
	// The check sees etcd where it is: fleet-etcd imports it.
	require.Contains(t, deps("./fleet-etcd"), "github.com/steady-go/steady/store/etcdstore")
	require.Contains(t, deps("./fleet-pg"), "github.com/steady-go/steady/store/pgstore")
}

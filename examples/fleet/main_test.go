package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The default demo's first run downloads and compiles only what it runs,
// so that it prints its first line soon: the etcd mode, with etcd's client,
// gRPC and zap, is the program fleet-etcd; the PostgreSQL mode, with pgx,
// the program fleet-pg; -data (bbolt) and -debug (net/http, Prometheus,
// protobuf) are in fleet-full; this program imports none of them.
// (The demo's tests are in examples/fleet/internal/demo.)
func TestDefaultProgramCompilesNothingHeavy(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the imports with")
	}
	deps := func(pkg string) []string {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.Fields(string(out))
	}
	heavy := []string{"go.etcd.io/", "google.golang.org/", "go.uber.org/zap", "github.com/prometheus/", "github.com/jackc/pgx/",
		"github.com/steady-go/steady/store/etcdstore", "github.com/steady-go/steady/store/boltstore",
		"github.com/steady-go/steady/store/pgstore", "github.com/steady-go/steady/metrics/prometheus"}
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
	// The check sees them where they are.
	require.Contains(t, deps("./fleet-etcd"), "github.com/steady-go/steady/store/etcdstore")
	full := deps("./fleet-full")
	require.Contains(t, full, "go.etcd.io/bbolt")
	require.Contains(t, full, "google.golang.org/protobuf/proto")
	require.Contains(t, full, "github.com/prometheus/client_golang/prometheus")
	require.Contains(t, deps("./fleet-pg"), "github.com/steady-go/steady/store/pgstore")
}

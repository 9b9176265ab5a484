package scripts

import (
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// builtTwice are the dependencies two of the repository's modules may
// build at different versions, and why.
var builtTwice = map[string]string{
	// tracing/otelsteady follows OpenTelemetry's newest release; etcd's
	// server (examples, store/etcdstore) runs with the one etcd v3.7.3
	// requires. Raising etcd's is an upgrade of what the etcd server runs
	// with, to make on purpose: until then otelsteady compiles 42 packages
	// (2.1 MB of source) of its own.
	"go.opentelemetry.io/otel":        "otelsteady is ahead of etcd's",
	"go.opentelemetry.io/otel/metric": "otelsteady is ahead of etcd's",
	"go.opentelemetry.io/otel/sdk":    "otelsteady is ahead of etcd's",
	"go.opentelemetry.io/otel/trace":  "otelsteady is ahead of etcd's",
	// reconcile/kstatuscheck checks against kstatus as cli-utils v0.37.2
	// has it, with the Kubernetes libraries of then.
	"k8s.io/utils": "kstatuscheck's Kubernetes libraries",
}

// Every module of the repository that scripts/test.sh tests builds one
// version of each dependency it shares with another. test.sh fills one
// build cache for all of them, and a package built against another
// version of one of its dependencies is compiled again, with every
// package above it: store/etcdstore's protobuf v1.36.11, beside the
// v1.36.12 of examples, compiled etcd's server and gRPC a second time
// with -race (175 packages, 7.3 MB of source). The exceptions, with
// their reasons, are in builtTwice.
func TestModulesBuildOneVersionOfEachDependency(t *testing.T) {
	if testing.Short() {
		t.Skip("lists every module's packages: go test, without -short")
	}
	goTool, err := exec.LookPath("go")
	require.NoError(t, err)
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	// versions[path][version] are the modules that build path at version.
	versions := map[string]map[string][]string{}
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && (d.Name() == "testdata" || rel == "bench" || strings.HasPrefix(d.Name(), ".")) && rel != "." {
			return filepath.SkipDir // bench: client-go's versions, measured against, never built with steady's modules
		}
		if d.Name() != "go.mod" {
			return nil
		}
		dir := filepath.Dir(path)
		cmd := exec.Command(goTool, "list", "-deps", "-test", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}", "./...")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off")
		out, err := cmd.Output()
		require.NoError(t, err, "go list in %s", dir)
		mod, _ := filepath.Rel(root, dir)
		for line := range strings.Lines(string(out)) {
			p, v, ok := strings.Cut(strings.TrimSpace(line), " ")
			if !ok || strings.HasPrefix(p, "github.com/steady-go/steady") {
				continue // the repository's own modules, by replace
			}
			if versions[p] == nil {
				versions[p] = map[string][]string{}
			}
			if !slices.Contains(versions[p][v], mod) {
				versions[p][v] = append(versions[p][v], mod)
			}
		}
		return nil
	}))
	require.Contains(t, versions, "github.com/stretchr/testify", "the modules' dependencies were listed")
	for _, p := range slices.Sorted(maps.Keys(versions)) {
		if len(versions[p]) > 1 && builtTwice[p] == "" {
			t.Errorf("%s is built at %d versions (version: modules): %v; require one version in every module (go get %s@VERSION in each), or say in builtTwice why not",
				p, len(versions[p]), versions[p], p)
		}
	}
}

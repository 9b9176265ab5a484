// Command release packs steady's modules, at one candidate version, into a
// file-based module proxy (a GOPROXY=file://DIR tree), as the Go module
// proxy would serve them once the repository is tagged: scripts/gogetcheck.sh
// uses it to prove, offline, that a dependent outside the repository can
// go get every module with no replace line. It lives in a module of its own
// so that the root module does not depend on golang.org/x/mod.
//
// Usage (from the repository root):
//
//	go run ./internal/release -version v0.1.0 -out DIR
//
// It packs the modules that Published lists. Each must require every other
// steady module at exactly -version (the release procedure,
// scripts/release.sh, sets that): a dependent ignores the replace lines the
// modules use inside the repository, so a require of any other version
// would not resolve. An error names the module and the require that does
// not match; nothing is then written.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

// Published are the modules a dependent uses, by directory from the
// repository root. The others (examples, bench, and the test harnesses
// internal/asuser, debugpage/browsertest, ownership/ssacheck and this one)
// are not released.
var Published = []string{".", "store/etcdstore", "store/boltstore", "store/pgstore", "metrics/prometheus", "tracing/otelsteady"}

// rootPath is the root module's path; every published module's path starts
// with it.
const rootPath = "github.com/steady-go/steady"

func main() {
	version := flag.String("version", "", "the candidate version, e.g. v0.1.0 (required)")
	out := flag.String("out", "", "the proxy directory to write (required)")
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	if err := run(*root, *version, *out, Published); err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
}

// run packs the modules in dirs (relative to root) at version into out.
func run(root, version, out string, dirs []string) error {
	if err := checkArgs(version, out); err != nil {
		return err
	}
	var mods []mod
	var problems []error
	for _, dir := range dirs {
		m, probs, err := readModule(root, dir, version)
		if err != nil {
			return err
		}
		mods, problems = append(mods, m), append(problems, probs...)
	}
	if err := errors.Join(problems...); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	for _, m := range mods {
		if err := pack(root, out, version, m, info); err != nil {
			return err
		}
		fmt.Printf("release: packed %s@%s\n", m.path, version)
	}
	return nil
}

// mod is one module to pack: its directory under the root, and its path.
type mod struct{ dir, path string }

// checkArgs refuses a version that is not a canonical v0 or v1 semantic
// version, and an empty out.
func checkArgs(version, out string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version || semver.Build(version) != "" {
		return fmt.Errorf("-version %q: want a canonical semantic version such as v0.1.0", version)
	}
	if semver.Major(version) != "v0" && semver.Major(version) != "v1" {
		return fmt.Errorf("-version %s: a major version beyond v1 needs a /vN module path first", version)
	}
	if out == "" {
		return errors.New("-out: want the proxy directory to write")
	}
	return nil
}

// readModule reads the go.mod of the module in dir: an error when it cannot
// be read or has the wrong path, and a problem for each requirement on a
// steady module at a version other than version.
func readModule(root, dir, version string) (mod, []error, error) {
	gomod := filepath.Join(root, dir, "go.mod")
	data, err := os.ReadFile(gomod)
	if err != nil {
		return mod{}, nil, err
	}
	f, err := modfile.Parse(gomod, data, nil)
	if err != nil {
		return mod{}, nil, err
	}
	want := rootPath
	if dir != "." {
		want = path.Join(rootPath, dir)
	}
	if f.Module == nil || f.Module.Mod.Path != want {
		return mod{}, nil, fmt.Errorf("%s: module path is not %s", gomod, want)
	}
	var problems []error
	for _, r := range f.Require {
		if (r.Mod.Path == rootPath || strings.HasPrefix(r.Mod.Path, rootPath+"/")) && r.Mod.Version != version {
			problems = append(problems, fmt.Errorf("%s requires %s %s, not %s: run scripts/release.sh %s first",
				gomod, r.Mod.Path, r.Mod.Version, version, version))
		}
	}
	return mod{dir, want}, problems, nil
}

// pack writes m at version into the proxy directory out: its zip, go.mod,
// info and version list.
func pack(root, out, version string, m mod, info []byte) error {
	v := module.Version{Path: m.path, Version: version}
	esc, err := module.EscapePath(m.path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	z, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		return err
	}
	// CreateFromDir leaves out nested modules (directories with a go.mod of
	// their own), vendor directories and VCS metadata, as the proxy does
	// for a tagged module.
	err = zip.CreateFromDir(z, v, filepath.Join(root, m.dir))
	if cerr := z.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", m.path, err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, m.dir, "go.mod"))
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{version + ".mod": gomod, version + ".info": info, "list": []byte(version + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

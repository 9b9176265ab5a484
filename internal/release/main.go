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
	if !semver.IsValid(version) || semver.Canonical(version) != version || semver.Build(version) != "" {
		return fmt.Errorf("-version %q: want a canonical semantic version such as v0.1.0", version)
	}
	if semver.Major(version) != "v0" && semver.Major(version) != "v1" {
		return fmt.Errorf("-version %s: a major version beyond v1 needs a /vN module path first", version)
	}
	if out == "" {
		return errors.New("-out: want the proxy directory to write")
	}
	type mod struct{ dir, path string }
	var mods []mod
	var problems []error
	for _, dir := range dirs {
		gomod := filepath.Join(root, dir, "go.mod")
		data, err := os.ReadFile(gomod)
		if err != nil {
			return err
		}
		f, err := modfile.Parse(gomod, data, nil)
		if err != nil {
			return err
		}
		want := rootPath
		if dir != "." {
			want = path.Join(rootPath, dir)
		}
		if f.Module == nil || f.Module.Mod.Path != want {
			return fmt.Errorf("%s: module path is not %s", gomod, want)
		}
		for _, r := range f.Require {
			if (r.Mod.Path == rootPath || strings.HasPrefix(r.Mod.Path, rootPath+"/")) && r.Mod.Version != version {
				problems = append(problems, fmt.Errorf("%s requires %s %s, not %s: run scripts/release.sh %s first",
					gomod, r.Mod.Path, r.Mod.Version, version, version))
			}
		}
		mods = append(mods, mod{dir, want})
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
		// CreateFromDir leaves out nested modules (directories with a
		// go.mod of their own), vendor directories and VCS metadata, as the
		// proxy does for a tagged module.
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
		fmt.Printf("release: packed %s@%s\n", m.path, version)
	}
	return nil
}

#!/usr/bin/env bash
# Prepares a release of every steady module at one version, as multi-module
# repositories do (OpenTelemetry-Go tags each module at one version):
#
#   1. bash scripts/release.sh v0.2.0
#      sets, in every nested module's go.mod, the require of each steady
#      module to v0.2.0 (a dependent ignores the replace lines the modules
#      use inside the repository, so that require is what it resolves);
#   2. bash scripts/gogetcheck.sh checks, offline, that a module outside
#      the repository can go get them all at that version, with no replace;
#   3. commit, then create and push the tags this script prints (one per
#      published module: v0.2.0, store/etcdstore/v0.2.0, ...).
#
# Usage: bash scripts/release.sh VERSION
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin" GOWORK=off
version=${1:-}
if ! [[ "$version" =~ ^v[01]\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "usage: bash scripts/release.sh VERSION (a semantic version such as v0.2.0; v2 and later need a /vN module path)" >&2
  exit 2
fi
cd "$root"
for mod in $(find . -name go.mod -not -path '*/testdata/*' -not -path './go.mod' | sort); do
  dir=$(dirname "$mod")
  reqs=$(cd "$dir" && go mod edit -json | awk -F'"' '/"Path": "github.com\/steady-go\/steady/ { print $4 }' | sort -u)
  self=$(cd "$dir" && go list -m)
  for p in $reqs; do
    [ "$p" = "$self" ] && continue
    (cd "$dir" && go mod edit -require="$p@$version")
  done
done
echo "release: every nested module requires the steady modules at $version."
echo "release: check with bash scripts/gogetcheck.sh, commit, then tag and push:"
for dir in $(sed -n 's/^var Published = \[\]string{\(.*\)}/\1/p' internal/release/main.go | tr -d '",'); do
  if [ "$dir" = . ]; then echo "  git tag $version"; else echo "  git tag $dir/$version"; fi
done
echo "  git push origin --tags"

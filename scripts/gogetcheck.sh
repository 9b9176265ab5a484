#!/usr/bin/env bash
# Proves, offline, that a dependent can go get steady's published modules
# (internal/release's Published: the root, store/etcdstore,
# store/boltstore, store/pgstore, metrics/prometheus, tracing/otelsteady) at one version
# with no replace line, as it will once the repository is tagged:
#
#   1. packs every published module at VERSION into a file-based module
#      proxy with golang.org/x/mod/zip (go run ./internal/release), which
#      refuses a module that requires another steady module at any other
#      version (scripts/release.sh VERSION sets them);
#   2. in a fresh module outside the repository, with an empty module cache
#      and GOPROXY set to that proxy and, for third-party modules, the
#      shared module cache's download directory (no network; their
#      checksums from the published modules' go.sum), runs
#      go get MODULE@VERSION for each, then builds and runs
#      scripts/testdata/consumer, a program that uses them all;
#   3. fails if the consumer's go.mod has a replace line, or the program
#      does not print its line;
#   4. does the same with the README's "A controller"
#      (examples/readme/first/main.go) as the main.go of another fresh
#      module that go gets the root alone.
#
# Usage: bash scripts/gogetcheck.sh [VERSION]
#   VERSION defaults to the version store/etcdstore's go.mod requires the
#   root at (the release in preparation).
# It compiles etcd's client, gRPC, Prometheus and OpenTelemetry into a
# build cache of its own (-trimpath, so a second run reuses it): minutes of
# CPU the first time. Not part of scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin" GOWORK=off
version=${1:-$(cd "$root/store/etcdstore" && go mod edit -json | awk -F'"' '/"Path": "github.com\/steady-go\/steady"/ { getline; print $4; exit }')}
shared_modcache=$(go env GOMODCACHE)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
start=$SECONDS

echo "== pack the published modules at $version"
(cd "$root/internal/release" && go run . -root "$root" -version "$version" -out "$tmp/proxy")

echo "== a fresh module outside the repository: go get each at $version"
mkdir "$tmp/consumer"
cp "$root/scripts/testdata/consumer/main.go" "$tmp/consumer/"
cd "$tmp/consumer"
export GOMODCACHE=$tmp/modcache GOFLAGS="-modcacherw -trimpath" \
  GOPROXY="file://$tmp/proxy,file://$shared_modcache/cache/download,off" \
  GONOSUMDB=github.com/steady-go/steady GOCACHE=${GOGETCHECK_CACHE:-$HOME/.cache/steady-gogetcheck}
go mod init example.com/consumer 2>&1
# The checksums of third-party modules come from the published modules'
# go.sum files (offline, there is no checksum database to ask); a module
# missing there fails the check. steady's own are not in any database yet
# (GONOSUMDB): go.sum records them from the packed zips.
for dir in $(sed -n 's/^var Published = \[\]string{\(.*\)}/\1/p' "$root/internal/release/main.go" | tr -d '",'); do
  cat "$root/$dir/go.sum"
done | sort -u >go.sum
go get github.com/steady-go/steady@"$version" github.com/steady-go/steady/store/etcdstore@"$version" \
  github.com/steady-go/steady/store/boltstore@"$version" github.com/steady-go/steady/store/pgstore@"$version" \
  github.com/steady-go/steady/metrics/prometheus@"$version" \
  github.com/steady-go/steady/tracing/otelsteady@"$version" 2>&1 | grep -v '^go: downloading' || true
# Not go mod tidy: it also wants the modules that the tests of third-party
# packages import (grpc's import OpenTelemetry's metric SDK), which are not
# in the shared module cache, and there is no network. go build records
# what the program needs.
if grep -q '^replace\|^\s*replace' go.mod; then
  echo "gogetcheck: the consumer's go.mod has a replace line"; cat go.mod; exit 1
fi
grep 'steady-go' go.mod

echo "== build and run the consumer"
go build -mod=mod -o consumer .
out=$(./consumer)
echo "$out"
case "$out" in
  "consumer: web converged on boltstore"*) ;;
  *) echo "gogetcheck: the consumer did not converge"; exit 1 ;;
esac
echo "== the README's \"A controller\", pasted as main.go into a fresh module that go gets the root"
mkdir "$tmp/readme"
cp "$root/examples/readme/first/main.go" "$tmp/readme/main.go"
cd "$tmp/readme"
go mod init example.com/readme >/dev/null 2>&1
cp "$root/go.sum" go.sum
go get github.com/steady-go/steady@"$version" 2>&1 | grep -v '^go: downloading' || true
out=$(go run -mod=mod .)
echo "$out"
if [ "$out" != "web: 3 of 3 replicas running" ]; then
  echo "gogetcheck: the README's controller did not print its line"; exit 1
fi
echo "gogetcheck: ok: every published module at $version is go-gettable with no replace, and the README's controller runs as pasted ($((SECONDS - start))s)"

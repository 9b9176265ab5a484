#!/usr/bin/env bash
# Fails when a tracked file is build output: over 1 MiB, or an executable
# binary (ELF, Mach-O, PE). A test binary once reached a module directory,
# where every module download would have carried it.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  size=$(stat -c %s "$f")
  if [ "$size" -gt 1048576 ]; then
    echo "tracked file over 1 MiB: $f ($size bytes)"; bad=1
  fi
  magic=$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')
  case "$magic" in
    7f454c46|cffaedfe|cefaedfe|feedface|feedfacf|4d5a*)
      echo "tracked binary: $f"; bad=1 ;;
  esac
done < <(git ls-files -z)
exit "$bad"

#!/bin/bash
# Counts exported identifiers (types, funcs, methods, consts, vars) per package, as go doc -all shows them.
for p in "$@"; do
  n=$(GOWORK=off go doc -all "$p" 2>/dev/null | awk '
    /^(func|type) / {c++}
    /^    [A-Z][A-Za-z0-9_]* .*=|^    [A-Z][A-Za-z0-9_]*$|^    [A-Z][A-Za-z0-9_]* [A-Za-z]/ && inblock {c++}
    /^(const|var) \(/ {inblock=1; next}
    /^\)/ {inblock=0}
    /^(const|var) [A-Z]/ {c++}
    END{print c}')
  echo "$p $n"
done

#!/bin/bash
# Counts exported identifiers (types, funcs, methods, consts, vars) per package,
# as `go doc -all` shows them: every "func" and "type" line, and every exported
# name declared by a const or var, alone or inside a "const (" / "var (" block.
for p in "$@"; do
  n=$(GOWORK=off go doc -all "$p" 2>/dev/null | awk '
    /^(func|type) / {c++; next}
    /^(const|var) \(/ {inblock=1; next}
    inblock && /^\)/ {inblock=0; next}
    inblock && /^\t[A-Za-z_]/ {
      line=$0; sub(/^\t/, "", line); sub(/[ \t]*(=|\/\/).*/, "", line)
      # "A, B T" or "A T" or "A": the names are before the first space not after a comma.
      gsub(/, */, ",", line); split(line, f, " "); m=split(f[1], names, ",")
      for (i=1;i<=m;i++) if (names[i] ~ /^[A-Z]/) c++
      next
    }
    /^(const|var) [A-Z]/ {
      line=$0; sub(/^(const|var) /, "", line); sub(/[ \t]*(=|\/\/).*/, "", line)
      gsub(/, */, ",", line); split(line, f, " "); m=split(f[1], names, ",")
      for (i=1;i<=m;i++) if (names[i] ~ /^[A-Z]/) c++
    }
    END{print c+0}')
  echo "$p $n"
done

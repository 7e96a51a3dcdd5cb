#!/usr/bin/env bash
# Every shell script of the project parses (bash -n): a script that only runs
# on a cluster or a lent machine must not first fail there on a typo.
set -u
top=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
fails=0 n=0
while IFS= read -r f; do
  n=$((n + 1))
  if ! out=$(bash -n "$f" 2>&1); then
    echo "FAIL: $f does not parse: $out"; fails=$((fails + 1))
  fi
done < <(cd "$top" && find scripts benchmarks tests .ci -name '*.sh' -o -path .ci/run | sed "s|^|$top/|" | sort)
[ "$n" -gt 10 ] || { echo "FAIL: check_scripts found only $n scripts under $top"; exit 1; }
echo "check_scripts: $n scripts, $fails that do not parse"
[ "$fails" = 0 ]

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

# The device session runs on a lent machine's scarce minutes: every part is
# checked before any runs, and a bad one is named, with nothing measured.
ds=$top/scripts/device-session.sh out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/bundle"
for bad in "emu:4x" "emu:4x2:0" "emu:4x2:2:1M" "apps:4" "apps:4x2:1M" "apps:4x2:8:8" "merge:$out/none:1:2" "np:" "gpu:1M" "gpu:1:2" "probe:16" "probe:1x16:1M" "probe:1x16:9:9" "bogus"; do
  msg=$(bash "$ds" "$out/o" --bundle "$out/bundle" emu:2x1 "$bad" 2>&1); rc=$?
  if [ "$rc" != 2 ] || [[ $msg != *"bad part '$bad'"* ]] || [ -e "$out/o/session.txt" ]; then
    echo "FAIL: device-session.sh with part '$bad': exit $rc, '$msg'"; fails=$((fails + 1))
  fi
done
for args in "--budget 0 gpu" "--budget 10s gpu" "--bundle $out/none gpu" "" "--bogus gpu"; do
  # shellcheck disable=SC2086  # the words are the arguments
  msg=$(bash "$ds" "$out/o" $args 2>&1); rc=$?
  if [ "$rc" != 2 ] || [ -z "$msg" ] || [ -e "$out/o/session.txt" ]; then
    echo "FAIL: device-session.sh $args: exit $rc, '$msg'"; fails=$((fails + 1))
  fi
done
echo "check_scripts: device-session.sh refuses bad parts and options before running any"

# A device call carries the working tree and the bundle, 64 MiB together:
# the kept results leave the bundle room only while their large CSVs stay
# gzipped (benchmarks/results/README.md; the scripts read NAME.gz as NAME).
if git -C "$top" rev-parse --git-dir > /dev/null 2>&1; then
  big=$(cd "$top" && git ls-files -z 'benchmarks/results/*.csv' | xargs -0 -r du -b 2> /dev/null | awk '$1 > 50000 {print $2}')
  if [ -n "$big" ]; then
    echo "FAIL: results CSVs above 50 kB not gzipped (gzip -9 -n FILE, then git add): $(echo $big)"; fails=$((fails + 1))
  else
    echo "check_scripts: results CSVs above 50 kB are kept gzipped"
  fi
fi
[ "$fails" = 0 ]

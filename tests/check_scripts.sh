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

# The main job refuses bad options before it builds or measures anything
# (--single-node: on few cores as root it would otherwise choose an emulated
# cluster, which --rps and --mtu need). It runs from a copy of the tree's
# layout around the script, where a check that let an option through would
# find no build script, and whose build/mpich-prefix names stand-in
# libraries below.
mj=$top/scripts/main-job.sh fake=$out/top
mkdir -p "$fake/scripts" "$fake/build" "$fake/spin/lib" "$fake/yield/lib"
ln -s "$mj" "$fake/scripts/main-job.sh"
ln -s "$top/scripts/cluster.sh" "$fake/scripts/cluster.sh"
n=0
printf '# no hosts\n\n' > "$out/hosts-empty"
printf 'h1:2\nh2:abc\n' > "$out/hosts-bad"
for args in "--emulate 4x" "--emulate 0x2" "--hostfile $out/none" "--hostfile $out/no/dir/hosts" \
  "--hostfile $out/hosts-empty" "--hostfile $out/hosts-bad" "--rate 100mbit" "--trace some" "--apps ddp,bogus" \
  "--app-rounds 0" "--app-compute 1.5" "--apps none --apps-only" "--rps" "--mtu 9000" "--np 0" \
  "--max 4" "--min 16 --max 8" "--max-time fast" "--bogus"; do
  n=$((n + 1))
  # shellcheck disable=SC2086  # the words are the arguments
  msg=$(bash "$fake/scripts/main-job.sh" --single-node --out "$out/mj$n" $args 2>&1); rc=$?
  if [ "$rc" != 2 ] || [[ $msg != main-job.sh:* ]] || [ -e "$out/mj$n" ]; then
    echo "FAIL: main-job.sh $args: exit $rc, '$msg'"; fails=$((fails + 1))
  fi
done
# What the emulated cluster would refuse, before the build (cluster.sh
# check; as root, where the cluster could be made at all).
if [ "$(id -u)" = 0 ]; then
  msg=$(bash "$fake/scripts/main-job.sh" --emulate 2x1 --rate 0bit --out "$out/mj-rate" 2>&1); rc=$?
  if [ "$rc" != 2 ] || [[ $msg != *"--rate 0bit: expected a tc rate"* ]] || [ -e "$out/mj-rate" ]; then
    echo "FAIL: main-job.sh --emulate 2x1 --rate 0bit: exit $rc, '$msg'"; fails=$((fails + 1))
  fi
fi
# With --no-build, ranks that share cores (or --progress-yield) need the
# MPICH build whose waiting ranks yield, the one whose libmpich imports
# sched_yield; build/mpich-prefix names whichever build ran last.
if command -v cc > /dev/null && command -v nm > /dev/null; then
  printf 'int gencoll_stand_in(void) { return 0; }\n' > "$out/spin.c"
  printf '#include <sched.h>\nint gencoll_stand_in(void) { return sched_yield(); }\n' > "$out/yield.c"
  cc -shared -fPIC -o "$fake/spin/lib/libmpich.so.12" "$out/spin.c" &&
    cc -shared -fPIC -o "$fake/yield/lib/libmpich.so.12" "$out/yield.c" ||
    { echo "FAIL: cannot build the stand-in libmpich"; fails=$((fails + 1)); }
  over=$(( $(nproc) + 1 ))
  guard() {  # guard PREFIX EXPECTED_RC EXPECTED_TEXT ARGS...
    local prefix=$1 want_rc=$2 want=$3 msg rc; shift 3
    echo "$fake/$prefix" > "$fake/build/mpich-prefix"
    msg=$(bash "$fake/scripts/main-job.sh" --no-build --out "$out/mj-guard" "$@" 2>&1); rc=$?
    if [ "$rc" != "$want_rc" ] || [[ $msg != *"$want"* ]]; then
      echo "FAIL: main-job.sh --no-build $* on the $prefix stand-in: exit $rc (expected $want_rc with '$want'), '$msg'"; fails=$((fails + 1))
    fi
  }
  guard spin 1 "MPICH without --progress-yield" --single-node --np "$over"
  guard spin 1 "MPICH without --progress-yield" --single-node --np 2 --progress-yield
  # Past the check: the next one asks for the applications' binary.
  guard yield 1 "no $fake/build/benchmarks/app_proxy.mpich" --single-node --np "$over"
  guard spin 1 "no $fake/build/benchmarks/app_proxy.mpich" --single-node --np 1
  echo "check_scripts: main-job.sh refuses bad options, and a spinning MPICH for ranks that share cores"
else
  echo "check_scripts: main-job.sh refuses bad options (no cc or nm: its MPICH check not run)"
fi

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

#!/usr/bin/env bash
# gencoll-bench switches configurations inside one run: every configuration of
# a sweep must really run (the gencoll debug line names its algorithm and k,
# MPICH's own leave no gencoll line), give correct results (-c) and land in the
# CSV, on the MPICH module (MPI_T) and through the Open MPI interposition
# library (gencoll_pmpi_select); bad options stop it with a message.
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ran=0

# count_lines FILE COLLS CONFIGS SIZES: header + one row per point.
expect_rows() {
  local rows
  rows=$(($(wc -l < "$1") - 1))
  [ "$rows" -eq "$2" ] || fail "$1: $rows rows, expected $2"
}

# -- the MPICH module: MPI_T control variables ------------------------------
prefix=$(cat "$builddir/mpich-prefix" 2>/dev/null || true)
bench="$builddir/benchmarks/gencoll-bench.mpich"
if [ -n "$prefix" ] && [ -x "$prefix/bin/mpiexec" ] && [ -x "$bench" ]; then
  ran=1
  out=$(timeout -k 5 120 "$prefix/bin/mpiexec" -n 3 -genv LD_LIBRARY_PATH "$prefix/lib" -genv MPIR_CVAR_GENCOLL_DEBUG 1 \
    "$bench" --coll all -m 4:1024 -i 2 -x 1 -c --sweep all --csv "$tmp/module.csv" </dev/null 2>&1) ||
    fail "module sweep failed: $out"
  echo "$out" | grep -q "gencoll via MPICH module" || fail "the module's variables were not found: $out"
  # Every gencoll configuration ran as itself (at p = 3 the radix candidates are 2 and 3).
  for want in "allgather .*algorithm=permuted_recursive_multiplying k=3" "allreduce .*algorithm=kring k=2" \
              "bcast .*algorithm=recursive_multiplying k=3" "reduce .*algorithm=knomial k=3" \
              "allgather count=1024 .*algorithm=kring k=3"; do
    echo "$out" | grep -q "^gencoll: $want" || fail "no call matching '$want' in the module sweep"
  done
  # p = 3, sizes 4..1024 (9; reductions 4..1024 too, whole floats), configurations per collective:
  # allgather 1 + 4 MPICH + 2x5 gencoll, allreduce 1 + 4 + 2x5, bcast 1 + 5 + 2x3, reduce 1 + 4 + 2x2.
  # reduce_scatter_block 1 + 5 MPICH + 2x4 gencoll; reduce_scatter 1 + 4 MPICH (not
  # noncommutative: MPICH asserts a power of two there) + 2x3 gencoll.
  expect_rows "$tmp/module.csv" $(( 9 * (15 + 15 + 12 + 9 + 14 + 11) ))
  grep -q "^,\"MPICH Version: 4.0.2\",3,1,host,reduce,mpich:reduce_scatter_gather,1024,2," "$tmp/module.csv" ||
    fail "no reduce_scatter_gather row in the CSV"
  # MPICH's own algorithms run without gencoll: a sweep of them leaves no debug line.
  out=$(timeout -k 5 60 "$prefix/bin/mpiexec" -n 3 -genv LD_LIBRARY_PATH "$prefix/lib" -genv MPIR_CVAR_GENCOLL_DEBUG 1 \
    "$bench" --coll allreduce -m 64 -i 2 -x 1 -c --sweep mpich </dev/null 2>&1) || fail "MPICH sweep failed: $out"
  ! echo "$out" | grep -q "^gencoll:" || fail "MPICH's own algorithms ran gencoll: $out"
fi

# -- Open MPI and the interposition library: gencoll_pmpi_select -------------
lib="$builddir/openmpi/.libs/libgencoll-pmpi.so"
bench="$builddir/benchmarks/gencoll-bench.openmpi"
if command -v mpiexec.openmpi >/dev/null && [ -x "$bench" ] && [ -f "$lib" ]; then
  ran=1
  have_ompi=1
  ompi() {
    timeout -k 5 120 mpiexec.openmpi --oversubscribe --allow-run-as-root --mca btl self,vader "$@" </dev/null 2>&1
  }
  out=$(ompi -n 4 -x GENCOLL_DEBUG=1 -x LD_PRELOAD="$lib" "$bench" --coll all -m 8:512 -i 2 -x 1 --rounds 2 -c \
    --sweep native,gencoll,ring --csv "$tmp/pmpi.csv") || fail "interposition sweep failed: $out"
  echo "$out" | grep -q "gencoll via interposition library" || fail "gencoll_pmpi_select not found: $out"
  for want in "allgather .*algorithm=ring k=4" "allreduce .*algorithm=permuted_recursive_multiplying k=4" \
              "bcast .*algorithm=kring k=2" "reduce .*algorithm=knomial k=3"; do
    echo "$out" | grep -q "^gencoll: $want" || fail "no call matching '$want' through the interposition library"
  done
  # p = 4: radices 2, 3, 4; sizes 8..512 (7); allgather 1 + 5x3 + ring, allreduce 1 + 5x3 + ring,
  # bcast 1 + 3x3 + ring, reduce 1 + 2x3 (ring left out: reduce has none), reduce_scatter_block
  # 1 + 4x3 + ring, reduce_scatter 1 + 3x3 + ring (no permuted variant: blocks differ in size).
  expect_rows "$tmp/pmpi.csv" $(( 7 * (17 + 17 + 11 + 7 + 14 + 11) ))
  # Without the library: native runs, gencoll configurations are refused by name.
  out=$(ompi -n 2 "$bench" -m 8 -i 2 -x 1 --sweep knomial:2) && fail "gencoll without the library was accepted"
  echo "$out" | grep -q "need LD_PRELOAD=libgencoll-pmpi.so" || fail "unclear message without the library: $out"
  out=$(ompi -n 2 "$bench" -m 8 -i 2 -x 1 --sweep mpich:ring --coll allgather) && fail "mpich:ring on Open MPI was accepted"
  echo "$out" | grep -q "this MPI is not MPICH 4.0.2" || fail "unclear message for mpich:ring on Open MPI: $out"
fi

# -- Open MPI with the gencoll coll component: MPI_T, a fresh communicator per
#    configuration; Open MPI's own algorithms through coll_tuned ----------------
if [ "${have_ompi:-0}" = 1 ] && [ -f "$builddir/ompi-component/component-path" ]; then
  path=$(cat "$builddir/ompi-component/component-path")
  out=$(ompi -n 3 --mca mca_base_component_path "$path" --mca coll_tuned_use_dynamic_rules 1 \
    --mca coll_gencoll_verbose 1 "$bench" --coll allreduce,bcast -m 8:64 -i 2 -x 1 -c \
    --sweep native,ompi:recursive_doubling,ompi:ring,recursive_multiplying:2,kring:3,ompi:binomial,knomial:2 \
    --csv "$tmp/component.csv") || fail "component sweep failed: $out"
  echo "$out" | grep -q "gencoll via Open MPI component" || fail "the component was not found: $out"
  for want in "allreduce count=2 bytes=8 p=3 root=0 algorithm=recursive_multiplying k=2" \
              "allreduce count=16 bytes=64 p=3 root=0 algorithm=kring k=3" \
              "bcast count=64 bytes=64 p=3 root=0 algorithm=knomial k=2"; do
    echo "$out" | grep -qxF "gencoll: $want" || fail "no component line 'gencoll: $want': $out"
  done
  # allreduce: native, 2 ompi, 3 gencoll; bcast: native, ompi:binomial, 3 gencoll (each collective keeps
  # the items it has).
  expect_rows "$tmp/component.csv" $(( 4 * (6 + 5) ))
  python3 "$srcdir/benchmarks/fixed_radix.py" "$tmp/component.csv" > "$tmp/ratio.md" ||
    fail "fixed_radix.py failed: $(cat "$tmp/ratio.md")"
  grep -q '^| geometric mean | [0-9.]* | [0-9.]* |$' "$tmp/ratio.md" || fail "fixed_radix.py: no allreduce pairs: $(cat "$tmp/ratio.md")"
  out=$(ompi -n 2 --mca mca_base_component_path "$path" "$bench" -m 8 -i 2 -x 1 --coll allreduce --sweep ompi:ring) &&
    fail "ompi:ring without dynamic rules was accepted"
  echo "$out" | grep -q "only with --mca coll_tuned_use_dynamic_rules 1" || fail "unclear message without dynamic rules: $out"
fi

# -- bad options (any MPI: the messages come before anything runs) ----------
if command -v mpiexec.openmpi >/dev/null && [ -x "$bench" ]; then
  for bad in "--sweep knomial:1|the radix must be an integer >= 2" "--sweep rign|configuration \"rign\": expected native" \
             "-m 8:4|expected MIN:MAX" "--coll scan|--coll scan: expected" "-d rocm|-d rocm: expected host or cuda" \
             "-i 0|-i 0: expected an integer >= 1" "--sweep mpich:ringg --coll allgather|MPICH's allgather algorithms are" \
             "--max-time 0|--max-time 0: expected a positive number of seconds" \
             "--max-time 1s|--max-time 1s: expected a positive number of seconds" \
             "--start now|--start now: expected synced or barrier" \
             "--idle -1|--idle -1: expected microseconds from 0 to 10000000"; do
    args=${bad%%|*} msg=${bad#*|}
    # shellcheck disable=SC2086
    out=$(ompi -n 2 "$bench" $args) && fail "gencoll-bench $args was accepted"
    echo "$out" | grep -qF -- "$msg" || fail "gencoll-bench $args: expected '$msg', got: $out"
  done
  # --max-time: a limit no call fits leaves the minimum of 3 iterations of
  # -i 50, and the CSV says so: exactly 3 after a barrier; with the synced
  # start at most twice that (a start that came late is run again, and a
  # machine too busy to start ranks together stops after twice the count, as
  # a loaded CI machine does with only 3 to time). Without --max-time all 50
  # run, late starts run again so as many count, and as many after a barrier.
  ompi -n 2 "$bench" -m 8 -i 50 -x 2 --max-time 1e-9 --start barrier --csv "$tmp/fewer.csv" > /dev/null ||
    fail "--max-time --start barrier run failed"
  [ "$(awk -F, 'NR == 2 { print $9 }' "$tmp/fewer.csv")" = 3 ] ||
    fail "--max-time 1e-9 --start barrier: expected 3 iterations in the CSV, got: $(tail -n 1 "$tmp/fewer.csv")"
  ompi -n 2 "$bench" -m 8 -i 50 -x 2 --max-time 1e-9 --csv "$tmp/fewer-synced.csv" > /dev/null || fail "--max-time run failed"
  n=$(awk -F, 'NR == 2 { print $9 }' "$tmp/fewer-synced.csv")
  [ "$n" -ge 1 ] && [ "$n" -le 6 ] ||
    fail "--max-time 1e-9: expected 1 to 6 iterations in the CSV, got: $(tail -n 1 "$tmp/fewer-synced.csv")"
  ompi -n 2 "$bench" -m 8 -i 50 -x 2 --csv "$tmp/all.csv" > /dev/null || fail "run without --max-time failed"
  [ "$(awk -F, 'NR == 2 { print $9 }' "$tmp/all.csv")" = 50 ] ||
    fail "without --max-time: expected 50 iterations in the CSV, got: $(tail -n 1 "$tmp/all.csv")"
  ompi -n 2 "$bench" -m 8 -i 50 -x 2 --start barrier --csv "$tmp/barrier.csv" > /dev/null || fail "--start barrier run failed"
  [ "$(awk -F, 'NR == 2 { print $9 }' "$tmp/barrier.csv")" = 50 ] ||
    fail "--start barrier: expected 50 iterations in the CSV, got: $(tail -n 1 "$tmp/barrier.csv")"
  # --idle: each iteration (warm-ups too) waits that long first, in both
  # timings, and the header says so: 6 calls take at least 6 x 300 ms, where
  # the whole launch takes about 0.5 s without (a lower bound, which a slow
  # machine cannot break).
  for mode in synced barrier; do
    t0=$(date +%s%N)
    out=$(ompi -n 2 "$bench" -m 8 -i 5 -x 1 --idle 300000 --start "$mode") || fail "--idle 300000 --start $mode failed: $out"
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    echo "$out" | grep -q "^# idle: links idle 300000 us before each iteration" || fail "--idle: no header line: $out"
    [ "$ms" -ge 1800 ] || fail "--idle 300000 --start $mode: 6 calls took $ms ms, expected at least 1800"
  done
  # --rounds: each round's median in the CSV's last column, and the one kept
  # is the lowest of them (six significant digits, as written).
  ompi -n 2 "$bench" -m 8:64 -i 5 -x 1 --rounds 3 --csv "$tmp/rounds.csv" > /dev/null || fail "--rounds 3 run failed"
  out=$(python3 - "$tmp/rounds.csv" <<'EOF'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    m = [float(x) for x in r["round_medians_us"].split(";")]
    if len(m) != 3 or float(r["median_us"]) != min(m):
        print("row %s: median_us %s, round_medians_us %s" % (r["bytes"], r["median_us"], r["round_medians_us"]))
EOF
) || fail "--rounds 3: could not read the CSV"
  [ -z "$out" ] || fail "--rounds 3: kept median is not the lowest of 3 rounds: $out"
  out=$(ompi -n 1 "$bench" --help) || fail "--help failed"
  echo "$out" | grep -q "^usage: gencoll-bench" || fail "--help printed no usage"
fi

[ "$ran" = 1 ] || { echo "SKIP: neither the MPICH module nor Open MPI with the interposition library"; exit 77; }
echo "PASS: gencoll-bench sweeps, validation, CSV and messages"

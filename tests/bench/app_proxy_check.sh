#!/usr/bin/env bash
# The application proxies (benchmarks/app_proxy.c) the main job runs with
# MPICH's default and the tuned file: each runs unchanged on the MPICH module
# with gencoll's algorithms switched in by CVARs (the debug lines name them)
# and through the interposition library on Open MPI, with correct results;
# a wrong result, which the proxy checks itself, stops it with exit 1 and
# the element; bad options with exit 2 and the usage. What ran is named in
# the PASS line.
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ran=
# Small enough for oversubscribed ranks: every app, 3 ranks, 2 steps.
apps=("ddp --bytes 65536 --bucket 16384 --every 1" "cg --rows 1000" "master --bytes 40000")
common=(--steps 2 --warmup 1 --rounds 1)

prefix=$(cat "$builddir/mpich-prefix" 2>/dev/null || true)
app="$builddir/benchmarks/app_proxy.mpich"
if [ -n "$prefix" ] && [ -x "$prefix/bin/mpiexec" ] && [ -x "$app" ]; then
  mpich() { timeout -k 5 120 "$prefix/bin/mpiexec" -n 3 -genv LD_LIBRARY_PATH "$prefix/lib" "$@" </dev/null 2>&1; }
  cvars=(-genv MPIR_CVAR_GENCOLL_DEBUG 1
    -genv MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_ALLGATHER_DEVICE_COLLECTIVE 0
    -genv MPIR_CVAR_BCAST_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE 0
    -genv MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM kring -genv MPIR_CVAR_ALLREDUCE_KRING_KVAL 3
    -genv MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM recursive_multiplying
    -genv MPIR_CVAR_ALLGATHER_RECURSIVE_MULTIPLYING_KVAL 3
    -genv MPIR_CVAR_BCAST_INTRA_ALGORITHM knomial -genv MPIR_CVAR_BCAST_KNOMIAL_KVAL 3
    -genv MPIR_CVAR_REDUCE_INTRA_ALGORITHM knomial -genv MPIR_CVAR_REDUCE_KNOMIAL_KVAL 2)
  for a in "${apps[@]}"; do
    read -r -a args <<< "$a"
    out=$(mpich "${cvars[@]}" "$app" "${args[@]}" "${common[@]}" --label cvars --csv "$tmp/apps.csv") ||
      fail "module, ${args[0]}: $out"
    echo "$out" | grep -q "^app_proxy ${args[0]} ranks 3 round 1: [0-9.]* us per step (cvars)$" ||
      fail "module, ${args[0]}: no time line: $out"
    case ${args[0]} in
      ddp) want=("allreduce count=4096 .*algorithm=kring k=3" "bcast count=16384 .*algorithm=knomial k=3") ;;
      cg) want=("allgather count=1000 .*algorithm=recursive_multiplying k=3" "allreduce count=1 .*algorithm=kring k=3") ;;
      master) want=("bcast count=10000 .*algorithm=knomial k=3" "reduce count=10000 .*algorithm=knomial k=2") ;;
    esac
    for w in "${want[@]}"; do
      echo "$out" | grep -q "^gencoll: $w" || fail "module, ${args[0]}: no call matching '$w': $out"
    done
  done
  [ "$(wc -l < "$tmp/apps.csv")" = 3 ] || fail "apps.csv: $(wc -l < "$tmp/apps.csv") rows, expected 3"
  grep -q "^cvars,cg,3,0,0,1000,0,2,1,[0-9.]*$" "$tmp/apps.csv" || fail "no cg row: $(cat "$tmp/apps.csv")"
  # The proxy's own check: a result changed behind the MPI's back on one
  # rank, in each app: exit 1, naming the element once, and no time rows.
  for c in "ddp --bytes 4096:gradient sum" "cg --rows 100:gathered vector" "master --bytes 4096:broadcast input"; do
    read -r -a args <<< "${c%%:*}"
    out=$(mpich -genv APP_PROXY_CORRUPT 1 "$app" "${args[@]}" "${common[@]}" --csv "$tmp/bad.csv"); rc=$?
    [ "$rc" = 1 ] || fail "${args[0]}: a corrupted result gave exit $rc, expected 1: $out"
    [ "$(echo "$out" | grep -c "^app_proxy: rank 1: wrong ${c#*:} at element 0: ")" = 1 ] ||
      fail "${args[0]}: not one wrong-result message naming rank 1's element 0: $out"
    [ ! -s "$tmp/bad.csv" ] || fail "${args[0]}: a corrupted run wrote time rows: $(cat "$tmp/bad.csv")"
  done
  for bad in "ddp --bytes 6" "cg --label a,b" "master --every 2" "ddp --every 4294967296"; do
    read -r -a args <<< "$bad"
    out=$(mpich "$app" "${args[@]}" "${common[@]}"); rc=$?
    [ "$rc" = 2 ] || fail "'$bad' gave exit $rc, expected 2 (usage): $out"
    echo "$out" | grep -q "^usage: app_proxy ddp" || fail "no usage for '$bad': $out"
  done
  # The report's section (benchmarks/analyze.py --apps): a job under each
  # label, their ratio; a malformed row named by its line.
  for label in default tuned; do
    mpich "$app" ddp --bytes 65536 --bucket 16384 "${common[@]}" --label "$label" --csv "$tmp/two.csv" > /dev/null ||
      fail "ddp ($label) failed"
  done
  out=$(python3 "$srcdir/benchmarks/analyze.py" --apps "$tmp/two.csv" --out "$tmp/an" 2>&1) || fail "analyze.py --apps: $out"
  echo "$out" | grep -q "^| ddp | 3 | 65536 B in 16384 B buckets, 0 us compute | [0-9.]* | [0-9.]* | [0-9.]*x | 1 |$" ||
    fail "analyze.py --apps: no ddp row: $out"
  grep -q "^- applications: tuned file vs MPICH default, geometric mean" "$tmp/an/apps.md" || fail "no apps.md summary"
  echo "default,ddp,3" >> "$tmp/two.csv"
  out=$(python3 "$srcdir/benchmarks/analyze.py" --apps "$tmp/two.csv" --out "$tmp/an" 2>&1) && fail "a short row passed: $out"
  echo "$out" | grep -q "two.csv, line 3: 3 fields; expected label,app," || fail "unclear message for a short row: $out"
  ran="the MPICH module"
fi

lib="$builddir/openmpi/.libs/libgencoll-pmpi.so"
app="$builddir/benchmarks/app_proxy.openmpi"
if command -v mpiexec.openmpi >/dev/null && [ -x "$app" ] && [ -f "$lib" ]; then
  ompi() { timeout -k 5 120 mpiexec.openmpi --oversubscribe --allow-run-as-root --mca btl self,vader -n 3 "$@" </dev/null 2>&1; }
  for a in "${apps[@]}"; do
    read -r -a args <<< "$a"
    out=$(ompi -x GENCOLL_DEBUG=1 -x GENCOLL_ALLREDUCE_INTRA_ALGORITHM=knomial -x GENCOLL_ALLREDUCE_KNOMIAL_KVAL=3 \
      -x GENCOLL_ALLGATHER_INTRA_ALGORITHM=kring -x GENCOLL_BCAST_INTRA_ALGORITHM=knomial \
      -x GENCOLL_REDUCE_INTRA_ALGORITHM=knomial -x LD_PRELOAD="$lib" \
      "$app" "${args[@]}" "${common[@]}") || fail "interposition, ${args[0]}: $out"
    echo "$out" | grep -q "^app_proxy ${args[0]} ranks 3 round 1: " || fail "interposition, ${args[0]}: no time line: $out"
    case ${args[0]} in
      ddp) want="allreduce .*algorithm=knomial k=3" ;;
      cg) want="allgather .*algorithm=kring k=2" ;;
      master) want="reduce .*algorithm=knomial k=2" ;;
    esac
    echo "$out" | grep -q "^gencoll: $want" || fail "interposition, ${args[0]}: no call matching '$want': $out"
  done
  out=$(ompi -x APP_PROXY_CORRUPT=1 -x LD_PRELOAD="$lib" "$app" master --bytes 4096 "${common[@]}"); rc=$?
  [ "$rc" = 1 ] || fail "interposition: a corrupted result gave exit $rc, expected 1: $out"
  echo "$out" | grep -q "^app_proxy: rank 1: wrong broadcast input at element 0: " ||
    fail "interposition: no wrong-result message: $out"
  ran="${ran:+$ran and }Open MPI's interposition library"
fi
[ -n "$ran" ] || { echo "SKIP: no MPICH module build or Open MPI interposition library"; exit 77; }
echo "PASS: app_proxy, every app on $ran"

#!/usr/bin/env bash
# Fuzzes every reader of user input (tests/fuzz/fuzz_inputs.cpp) with
# libFuzzer under AddressSanitizer and UBSan: selection files and the calls
# they answer, machine profiles, GENCOLL_* variables, byte counts. Builds the
# target with clang++ (once per change of its sources), seeds it with a valid
# input of each kind (the shipped selection file and profile, a variable set,
# a byte count) and runs FUZZ_RUNS mutations (default 100000, about 20 s; make
# check-full runs 2000000). A crash, leak, sanitizer report or timeout fails
# the test and leaves the input in the build directory. Skipped (77) without
# clang++ and its libFuzzer runtime.
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
runs=${FUZZ_RUNS:-100000}
cxx=$(command -v clang++ || command -v clang++-14 || true)
[ -n "$cxx" ] || { echo "SKIP: no clang++ (Debian's clang) for libFuzzer"; exit 77; }
out="$builddir/tests/fuzz"
mkdir -p "$out"
bin="$out/fuzz_inputs"
sources=("$srcdir/tests/fuzz/fuzz_inputs.cpp" "$srcdir/src/runtime/csel_file.cpp" "$srcdir/src/runtime/mpich_algorithms.cpp"
         "$srcdir/src/runtime/config.cpp"
         "$srcdir/selection/machine.cpp" "$srcdir/selection/machine_json.cpp" "$srcdir/selection/profiles.cpp" "$srcdir"/src/core/*.cpp "$srcdir"/coll/*.cpp)
stale=0
[ -x "$bin" ] || stale=1
for f in "${sources[@]}" "$srcdir"/src/*/*.hpp "$srcdir"/coll/*.hpp "$srcdir"/selection/*.hpp; do
  [ "$f" -nt "$bin" ] && stale=1
done
if [ $stale = 1 ]; then
  echo "building $bin with $cxx"
  if ! "$cxx" -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
       -I"$srcdir" "${sources[@]}" -o "$bin" > "$out/build.log" 2>&1; then
    if grep -q "libclang_rt.fuzzer\|fsanitize=fuzzer" "$out/build.log"; then
      echo "SKIP: $cxx has no libFuzzer runtime (Debian's libclang-rt-dev)"; exit 77
    fi
    cat "$out/build.log"; echo "FAIL: cannot build the fuzz target"; exit 1
  fi
fi
corpus="$out/corpus"
rm -rf "$corpus"; mkdir -p "$corpus"
{ printf '\000'; cat "$srcdir/json-configs/small-synthetic.json"; } > "$corpus/selection"
{ printf '\001'; cat "$srcdir/selection/profiles/small-synthetic.json"; } > "$corpus/profile"
printf '\002GENCOLL_ALLREDUCE_INTRA_ALGORITHM=kring\nGENCOLL_ALLREDUCE_KRING_KVAL=4\nGENCOLL_WAIT_POLICY=yield\nGENCOLL_GPU_SCRATCH_KEEP=64M\nGENCOLL_COUNT_LIMIT=3\nGENCOLL_DEBUG=1\n' > "$corpus/variables"
printf '\00364M' > "$corpus/bytes"
cd "$out" || exit 1
echo "fuzzing with $runs runs"
if ! "$bin" -runs="$runs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$corpus" \
     > "$out/fuzz.log" 2>&1; then
  tail -40 "$out/fuzz.log"
  echo "FAIL: the fuzzer found an input a reader mishandles (saved in $out: crash-*, leak-*, timeout-*)"
  exit 1
fi
grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$out/fuzz.log"
echo "PASS: $runs fuzzed inputs, every reader refused or accepted them cleanly"

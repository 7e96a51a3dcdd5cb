#!/usr/bin/env bash
# The MPI-free core from many threads at once under ThreadSanitizer
# (tests/threads/threads_check.cpp: 13 threads, 3 communicators, every
# collective, algorithm, radix and count, a shared schedule cache and the C
# entry point). Builds it with clang++ (or g++) -fsanitize=thread once per
# change of its sources and runs THREADS_ROUNDS rounds (default 3; make
# check-full runs 30). A data race, a wrong result or an undelivered message
# fails it. Skipped (77) where no compiler here can build or run TSan.
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
rounds=${THREADS_ROUNDS:-3}
out="$builddir/tests/threads"
mkdir -p "$out"
bin="$out/threads_check"
sources=("$srcdir/tests/threads/threads_check.cpp" "$srcdir"/coll/*.cpp "$srcdir"/src/core/*.cpp
         "$srcdir/src/exec/executor.cpp" "$srcdir/src/exec/program.cpp" "$srcdir/src/cabi/bridge.cpp"
         "$srcdir/src/runtime/csel_file.cpp" "$srcdir/src/runtime/mpich_algorithms.cpp")
stale=0
[ -x "$bin" ] || stale=1
for f in "${sources[@]}" "$srcdir"/src/*/*.hpp "$srcdir"/src/cabi/*.h "$srcdir"/coll/*.hpp "$srcdir"/tests/unit/c_transport.hpp; do
  [ "$f" -nt "$bin" ] && stale=1
done
if [ $stale = 1 ]; then
  built=0
  for cxx in clang++ g++; do
    command -v "$cxx" >/dev/null || continue
    echo "building $bin with $cxx -fsanitize=thread"
    if "$cxx" -std=c++17 -O1 -g -fsanitize=thread -pthread -I"$srcdir" "${sources[@]}" -o "$bin" \
         > "$out/build.log" 2>&1; then built=1; break; fi
  done
  if [ $built = 0 ]; then
    if grep -qi "tsan\|sanitize=thread" "$out/build.log" 2>/dev/null; then
      echo "SKIP: no ThreadSanitizer runtime here: $(grep -i -m1 'tsan\|sanitize' "$out/build.log")"; exit 77
    fi
    cat "$out/build.log" 2>/dev/null; echo "FAIL: cannot build the threads check"; exit 1
  fi
fi
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
"$bin" "$rounds" > "$out/run.log" 2>&1
rc=$?
cat "$out/run.log" | tail -40
case $rc in
  0) echo "PASS: $(tail -n 1 "$out/run.log") under ThreadSanitizer, $rounds rounds, no race" ;;
  66) echo "FAIL: ThreadSanitizer found a data race (above)"; exit 1 ;;
  *) if grep -q "unexpected memory mapping\|FATAL: ThreadSanitizer" "$out/run.log"; then
       echo "SKIP: ThreadSanitizer cannot run on this kernel's memory layout"; exit 77
     fi
     echo "FAIL: threads_check exited with $rc"; exit 1 ;;
esac

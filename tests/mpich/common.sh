# Shared by the MPICH-module tests: finds the MPICH built by
# scripts/build-mpich.sh (GENCOLL_MPICH_PREFIX, else the prefix recorded in the
# build directory) and skips (exit 77) when there is none.
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
prefix=${GENCOLL_MPICH_PREFIX:-$(cat "$builddir/mpich-prefix" 2>/dev/null || true)}
if [ -z "$prefix" ] || [ ! -x "$prefix/bin/mpiexec" ]; then
  echo "SKIP: no MPICH with the gencoll module (run scripts/build-mpich.sh)"
  exit 77
fi
mpiexec="$prefix/bin/mpiexec"
fail() { echo "FAIL: $*"; exit 1; }
# Test programs are built with Debian's mpicc.mpich: the module's libmpich.so.12
# must run them unchanged. debian_program NAME builds tests/mpich/NAME.c into
# the build directory (once) and sets $program to its path, or fails the test.
debian_program() {
  program="$builddir/tests/mpich/$1"
  mkdir -p "$(dirname "$program")"
  [ "$program" -nt "$srcdir/tests/mpich/$1.c" ] || mpicc.mpich -O1 -o "$program" "$srcdir/tests/mpich/$1.c" ||
    fail "cannot build $1 with mpicc.mpich"
}
# Runs NP ranks of the given program on the module's libmpich; extra arguments
# before the program are mpiexec options (e.g. -genv NAME VALUE).
run_module() {
  local np=$1; shift
  timeout -k 5 120 "$mpiexec" -n "$np" -genv LD_LIBRARY_PATH "$prefix/lib" "$@" </dev/null
}

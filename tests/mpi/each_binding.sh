# Sourced by the tests that run one MPI program through all four bindings
# (the interposition library on MPICH and on Open MPI, the MPICH module, the
# Open MPI component). Needs builddir and srcdir.
#
# each_binding PROGRAM "CFLAGS" RUN: builds tests/mpi/PROGRAM.c with each
# MPI's mpicc into $builddir/tests/mpi/PROGRAM.<mpi> (path in $bin) and calls
# RUN with that binding's run_matrix.sh arguments, for every binding built.
# Returns RUN's failure, or 77 when no binding is built.
each_binding() {
  local prog=$1 cflags=$2 run=$3 mpi prefix ran=0
  local -a flags
  read -r -a flags <<< "$cflags"
  build_one() {
    bin="$builddir/tests/mpi/$prog.$1"
    [ "$bin" -nt "$srcdir/tests/mpi/$prog.c" ] ||
      "mpicc.$1" -o "$bin" "$srcdir/tests/mpi/$prog.c" "${flags[@]}" ||
      { echo "FAIL: cannot build $prog.$1"; return 1; }
  }
  for mpi in mpich openmpi; do
    command -v "mpicc.$mpi" >/dev/null && [ -f "$builddir/$mpi/.libs/libgencoll-pmpi.so" ] || continue
    build_one "$mpi" || return 1
    echo "== $mpi, the interposition library"
    "$run" --mpi "$mpi" --lib "$builddir/$mpi/.libs/libgencoll-pmpi.so" || return 1
    ran=1
  done
  prefix=$(cat "$builddir/mpich-prefix" 2>/dev/null || true)
  if [ -n "$prefix" ] && [ -x "$prefix/bin/mpiexec" ] && command -v mpicc.mpich >/dev/null; then
    build_one mpich || return 1
    echo "== the MPICH module"
    "$run" --mpi gencoll-mpich --mpich-prefix "$prefix" --lib none || return 1
  fi
  if [ -f "$builddir/ompi-component/component-path" ] && command -v mpicc.openmpi >/dev/null; then
    build_one openmpi || return 1
    echo "== the Open MPI component"
    "$run" --mpi gencoll-openmpi --component-path "$(cat "$builddir/ompi-component/component-path")" --lib none ||
      return 1
  fi
  [ "$ran" = 1 ] || return 77
}

# each_binding_or_exit PROGRAM "CFLAGS" RUN: each_binding, leaving the test
# with its verdict unless every built binding passed: 77 (skipped) when none
# is built, 1 on a failure.
each_binding_or_exit() {
  each_binding "$@"
  case $? in
    0) ;;
    77) echo "SKIP: no MPI binding built"; exit 77 ;;
    *) exit 1 ;;
  esac
}

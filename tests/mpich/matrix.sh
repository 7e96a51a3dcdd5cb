#!/usr/bin/env bash
# The integration matrix (tests/mpi/run_matrix.sh) through the MPICH-internal
# transport: coll_check and root_check, built with Debian's mpicc.mpich, on the
# module's libmpich with MPIR_CVAR selection. GENCOLL_MATRIX_FLAGS adds options.
set -u
. "$(dirname "$0")/common.sh"
eval "set -- ${GENCOLL_MATRIX_FLAGS:-}"
exec "$srcdir/tests/mpi/run_matrix.sh" --mpi gencoll-mpich --mpich-prefix "$prefix" --lib none \
  --bin "$builddir/tests/mpi/checks.mpich" \
  --procs "1 2 3 4 5 7 8" --ks "2 3 p+1" "$@"

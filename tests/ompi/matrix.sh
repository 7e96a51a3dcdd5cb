#!/usr/bin/env bash
# The integration matrix (tests/mpi/run_matrix.sh) through the Open MPI coll
# component: coll_check and root_check, built with Debian's mpicc.openmpi, on
# Debian's Open MPI with the component selected by MCA parameters.
# GENCOLL_MATRIX_FLAGS adds options (make check-full: more p and k).
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
path_file="$builddir/ompi-component/component-path"
[ -f "$path_file" ] || { echo "SKIP: no Open MPI component built"; exit 77; }
eval "set -- ${GENCOLL_MATRIX_FLAGS:-}"
exec "$srcdir/tests/mpi/run_matrix.sh" --mpi gencoll-openmpi --component-path "$(cat "$path_file")" --lib none \
  --bin "$builddir/tests/mpi/checks.openmpi" \
  --procs "1 2 3 4 5 7 8" --ks "3 p+1" "$@"

#!/usr/bin/env bash
# tests/mpi/selection_file.sh's file and expectations through the Open MPI coll
# component (coll_gencoll_selection_file) instead of the interposition library.
exec "${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/mpi/selection_file.sh" component

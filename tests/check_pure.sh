#!/bin/sh
# The generators must stay pure: no MPI, CUDA or environment access may be
# linked into the schedule objects.
lib=.libs/libgencoll-coll.a
[ -f "$lib" ] || lib=$(find . -name 'libgencoll-coll.a' | head -n 1)
[ -n "$lib" ] && [ -f "$lib" ] || { echo "check_pure: libgencoll-coll.a not found"; exit 1; }
bad=$(nm -u "$lib" | grep -E ' (P?MPI_|MPIR_|MPIC_|cuda|getenv|secure_getenv)' || true)
if [ -n "$bad" ]; then
  echo "check_pure: generator objects reference forbidden symbols:"; echo "$bad"; exit 1
fi
echo "check_pure: $(nm -u "$lib" | wc -l) undefined symbols in $lib, none from MPI/CUDA/environment"

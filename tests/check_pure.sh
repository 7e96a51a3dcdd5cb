#!/bin/sh
# The generators must stay pure: no MPI, CUDA or environment access may be
# linked into the schedule objects.
lib=.libs/libgencoll-coll.a
[ -f "$lib" ] || lib=$(find . -name 'libgencoll-coll.a' | head -n 1)
[ -n "$lib" ] && [ -f "$lib" ] || { echo "check_pure: libgencoll-coll.a not found"; exit 1; }
# nm's own failure must not read as "nothing forbidden"
undefined=$(nm -u "$lib") || { echo "check_pure: nm -u $lib failed"; exit 1; }
n=$(printf '%s\n' "$undefined" | grep -c .)
# the generators call the C++ runtime at least (operator new): none at all means nm read nothing
[ "$n" -gt 0 ] || { echo "check_pure: nm -u $lib listed no undefined symbols"; exit 1; }
bad=$(printf '%s\n' "$undefined" | grep -E ' (P?MPI_|MPIR_|MPIC_|cuda|getenv|secure_getenv)')
if [ -n "$bad" ]; then
  echo "check_pure: generator objects reference forbidden symbols:"; echo "$bad"; exit 1
fi
echo "check_pure: $n undefined symbols in $lib, none from MPI/CUDA/environment"

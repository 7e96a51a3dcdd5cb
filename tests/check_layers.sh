#!/bin/sh
# The layering of the sources: every quoted include names a file by its path
# from the top of the tree (one style), and reaches only into its own layer or
# the layers below it. The core depends on nothing; no layer but the tests and
# benchmarks reaches into a binding; the checker is linked into no binding.
top=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 1

# folder: the folders its includes may name (besides itself)
allowed() {
  case $1 in
    src/core) echo "" ;;
    coll) echo "src/core" ;;
    gpu) echo "src/core" ;;
    src/exec) echo "src/core coll gpu" ;;
    src/check) echo "src/core coll" ;;
    src/runtime) echo "src/core coll src/exec gpu" ;;
    # src/cabi: its header-only C helpers (gencoll_array_span), shared with
    # the glues compiled inside MPICH's and Open MPI's trees
    src/pmpi) echo "src/core coll gpu src/exec src/runtime src/cabi" ;;
    src/cabi) echo "src/core coll src/exec src/runtime" ;;
    # the glue's C ABI, and the table its registration is generated from
    src/mpich) echo "src/cabi coll src/core" ;;
    src/ompi) echo "src/cabi" ;;
    selection) echo "src/core coll src/runtime" ;;
    profiler) echo "src/core coll selection" ;;
    *) echo "ANY" ;;
  esac
}

status=0
for f in $(find src coll gpu selection profiler -path src/mpich/overlay -prune -o \
             \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' \) -print | sort); do
  dir=$(dirname "$f")
  ok=$(allowed "$dir")
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
    if [ ! -f "$inc" ]; then
      echo "check_layers: $f includes \"$inc\": not a path from the top of the tree"; status=1; continue
    fi
    idir=$(dirname "$inc")
    [ "$idir" = "$dir" ] && continue
    case " $ok " in *" $idir "*|" ANY ") continue ;; esac
    echo "check_layers: $f (layer $dir) includes $inc; $dir may include only: ${ok:-nothing outside itself}"
    status=1
  done
done

# The checker in a binding would ship test code to users.
build=${builddir:-.}
for so in "$build"/mpich/.libs/libgencoll-pmpi.so "$build"/openmpi/.libs/libgencoll-pmpi.so "$build"/.libs/libgencoll-mpich.so \
          "$build"/ompi-component/.libs/mca_coll_gencoll.so; do
  [ -f "$so" ] || continue
  if nm -C --defined-only "$so" | grep -q 'gencoll::check_allreduce'; then
    echo "check_layers: $so contains the checker"; status=1
  fi
done
[ $status -eq 0 ] && echo "check_layers: includes follow the layers"
exit $status

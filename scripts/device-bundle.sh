#!/usr/bin/env bash
# Packs what the GPU machine (16 cores, one GPU, no package registry, no
# autotools, no MPI) needs to run scripts/gpu-run.sh --bundle without building:
#
#   DIR/build/   gencoll-loggp, gencoll-tune, gencoll-bench.mpich, the GPU test
#                and benchmark, device_check.mpich (tests/mpi/device_check.c),
#                libgencoll-cuda and the interposition library,
#                at the paths main-job.sh and gpu-run.sh use (debug info stripped)
#   DIR/mpich/   MPICH 4.0.2 with the gencoll module (bin/ and lib/), built
#                without the progress yield (there every rank has its own
#                core) unless --progress-yield; mpich/BUILD says which
#   DIR/mpich-yield/lib/  the libraries of the build with the progress yield,
#                for main-job.sh --progress-yield (an emulated cluster whose
#                kernel needs the cores of waiting ranks); absent with
#                --progress-yield, where mpich/ is that build
#   DIR/bin/     ip and tc (iproute2), which scripts/cluster.sh needs for an
#                emulated cluster on that machine's cores
#   DIR/lib/     the shared libraries those need that a bare image may lack
#                (UCX and its transport modules, hwloc, numa, udev, libbpf,
#                libmnl, ...), found with ldd; the C and C++ runtimes are taken
#                from the machine
#   DIR/env.sh   the environment that makes them find each other
#
# The device tool carries at most 64 MiB with the working tree; the bundle is
# about 30. DIR (default .device) is added to .git/info/exclude so that it
# travels only when named in `carry`.
#
# usage: device-bundle.sh [--out DIR] [--progress-yield]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/.device yield=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --progress-yield) yield=(--progress-yield); shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "device-bundle.sh: unknown option $1 (expected --out DIR, --progress-yield)" >&2; exit 2 ;;
  esac
done
log() { echo "device-bundle: $*" >&2; }
# Replaced whole, so only what is a bundle already (or nothing) is replaced:
# a mistyped --out must not remove someone's directory.
# (.gencoll-bundle marks one from its start, so a run that failed halfway
# is replaced too.)
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ] && [ ! -f "$out/.gencoll-bundle" ] && [ ! -f "$out/env.sh" ]; then
  echo "device-bundle.sh: --out $out exists and is not a bundle (no .gencoll-bundle or env.sh): give an empty or new directory" >&2
  exit 2
fi
build=$top/build

# The MPICH the local build runs on (its tests, main-job --no-build) stays
# the one it was: the bundle's builds are for the device.
was=$(cat "$build/mpich-prefix" 2>/dev/null || true)
log "building gencoll, its GPU test and benchmark, and MPICH (cached)"
bash "$top/scripts/build.sh" > /dev/null
grep -q '^NVCC = ..*' "$build/Makefile" ||
  { echo "device-bundle.sh: $build was configured without CUDA (nvcc not found); the GPU parts need it" >&2; exit 1; }
make -C "$build" -j"$(nproc)" libgencoll-cuda.la tests/gpu/gpu_check benchmarks/gpu_bench benchmarks/nic_share.mpich > /dev/null
bash "$top/scripts/build-mpich.sh" "${yield[@]}" --gencoll-build "$build" > /dev/null
prefix=$(cat "$build/mpich-prefix")  # where build-mpich.sh put it
[ -x "$prefix/bin/mpiexec" ] || { echo "device-bundle.sh: no MPICH at $prefix" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/build" "$out/lib" "$out/mpich"
: > "$out/.gencoll-bundle"
# A libtool-built program is either the binary itself or a wrapper script with
# the binary in .libs/; take the binary.
real() {
  local f=$1
  if file -b "$f" | grep -q ELF; then echo "$f"; else echo "$(dirname "$f")/.libs/$(basename "$f")"; fi
}
put() {  # FILE DEST (relative to $out)
  mkdir -p "$(dirname "$out/$2")"
  cp -L "$1" "$out/$2"
  strip --strip-debug "$out/$2" 2>/dev/null || true
}
# At the paths main-job.sh and gpu-run.sh (a build tree's .libs/) look in.
for p in profiler/gencoll-loggp selection/gencoll-tune selection/gencoll-sim benchmarks/gencoll-bench.mpich \
  benchmarks/nic_share.mpich benchmarks/app_proxy.mpich; do
  put "$(real "$build/$p")" "build/$p"
done
put "$(real "$build/tests/gpu/gpu_check")" "build/tests/gpu/.libs/gpu_check"
put "$(real "$build/benchmarks/gpu_bench")" "build/benchmarks/.libs/gpu_bench"
put "$build/.libs/libgencoll-cuda.so.0" "build/.libs/libgencoll-cuda.so.0"
put "$build/mpich/.libs/libgencoll-pmpi.so" "build/mpich/.libs/libgencoll-pmpi.so"
# The interposition library's check on device buffers (tests/mpi/device_check.c),
# built here against the bundle's MPICH: there it runs on the real
# libgencoll-cuda, here only on a look-alike.
mkdir -p "$out/build/tests/mpi"
"$prefix/bin/mpicc" -O1 -Wall -Wextra -o "$out/build/tests/mpi/device_check.mpich" "$top/tests/mpi/device_check.c" -ldl

for t in ip tc; do put "$(command -v "$t" || echo "/usr/sbin/$t")" "bin/$t"; done

# MPICH without its documentation and static archives.
cp -a "$prefix/bin" "$out/mpich/"
echo "MPICH 4.0.2 with the gencoll module from $prefix, ${yield[*]:-without --progress-yield}" > "$out/mpich/BUILD"
mkdir -p "$out/mpich/lib"
for f in "$prefix"/lib/*.so*; do cp -a "$f" "$out/mpich/lib/"; done
for f in "$out"/mpich/lib/*.so.*.*; do [ -L "$f" ] || strip --strip-debug "$f" 2>/dev/null || true; done
if [ ${#yield[@]} = 0 ]; then
  log "adding the progress-yield build's libraries (cached after the first run)"
  bash "$top/scripts/build-mpich.sh" --progress-yield --gencoll-build "$build" > /dev/null
  yprefix=$(cat "$build/mpich-prefix")
  mkdir -p "$out/mpich-yield/lib"
  for f in "$yprefix"/lib/*.so*; do cp -a "$f" "$out/mpich-yield/lib/"; done
  for f in "$out"/mpich-yield/lib/*.so.*.*; do [ -L "$f" ] || strip --strip-debug "$f" 2>/dev/null || true; done
  echo "MPICH 4.0.2 with the gencoll module from $yprefix, --progress-yield" > "$out/mpich-yield/BUILD"
fi
if [ -n "$was" ] && [ -x "$was/bin/mpiexec" ]; then echo "$was" > "$build/mpich-prefix"
else echo "$prefix" > "$build/mpich-prefix"; fi

# Third-party libraries: whatever ldd resolves outside the bundle, except the
# C and C++ runtimes (a newer one on the machine serves older binaries).
ucx=$(dirname "$(ldconfig -p | awk '/libucs.so.0 / { print $NF; exit }')")/ucx
mkdir -p "$out/lib/ucx"
[ -d "$ucx" ] && for f in "$ucx"/*.so.0; do cp -L "$f" "$out/lib/ucx/"; done
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libstdc\+\+\.so|libgcc_s\.so)'
elfs=$(find "$out/build" "$out/bin" "$out/mpich" "$out/lib/ucx" $([ -d "$out/mpich-yield" ] && echo "$out/mpich-yield") -type f -exec sh -c 'file -b "$1" | grep -q ELF' _ {} \; -print)
for e in $elfs; do
  LD_LIBRARY_PATH=$out/mpich/lib ldd "$e" 2>/dev/null | awk '$3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r name path; do
  [[ $name =~ $skip ]] && continue
  case $path in "$out"/*) continue ;; esac
  [ -e "$out/lib/$name" ] || cp -L "$path" "$out/lib/$name"
done

# What the results' machine.txt names: the device machine's copy of the tree
# can carry an older history than its files.
source "$top/scripts/machine-info.sh"
gencoll_commit "$top" > "$out/COMMIT"

cat > "$out/env.sh" <<'EOF'
# Sourced by main-job.sh and gpu-run.sh with --bundle: the bundle's libraries
# first, UCX's transport modules from the bundle.
bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH=$bundle/mpich/lib:$bundle/build/.libs:$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export UCX_MODULE_DIR=$bundle/lib/ucx
export PATH=$bundle/mpich/bin:$PATH:$bundle/bin
EOF

exclude=$(git -C "$top" rev-parse --git-path info/exclude 2>/dev/null || true)
rel=${out#"$top"/}
if [ -n "$exclude" ] && [ "$rel" != "$out" ] && ! grep -qx "/$rel/" "$exclude" 2>/dev/null; then
  mkdir -p "$(dirname "$exclude")"
  echo "/$rel/" >> "$exclude"
fi
size=$(du -sm "$out" | cut -f1)
log "bundle in $out: ${size} MiB (MPICH: $prefix)"
# The device tool carries the tracked files and the bundle, 64 MiB together.
tree=$(git -C "$top" ls-files -z 2>/dev/null | (cd "$top" && du --apparent-size -b --files0-from=- -c 2>/dev/null) | tail -n 1 | cut -f1)
total=$(( (${tree:-0} + $(du --apparent-size -sb "$out" | cut -f1)) >> 20 ))
[ "$total" -lt 62 ] || log "warning: the tree and the bundle come to ${total} of the 64 MiB a device call carries; without --progress-yield runs, rm -rf $out/mpich-yield saves about 5 MiB"

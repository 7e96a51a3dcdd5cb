#!/usr/bin/env bash
# Builds MPICH 4.0.2 with the gencoll module and installs it into a prefix.
#
#   1. source: Debian's source package (apt-get source mpich, see
#      fetch-mpich-source.sh), or --source DIR|TARBALL;
#   2. adds gencoll the upstream way: src/mpich/mpich-4.0.2.patch (algorithm
#      registry, CVARs, csel containers, Makefile.mk, selection-file errors, the
#      progress-yield option, test-suite registration), the fixes of MPICH
#      itself in src/mpich/mpich-4.0.2-*.patch (UCX finalize across hosts) and
#      the glue files in src/mpich/overlay;
#   3. regenerates MPICH's generated files (autogen.sh: gen_coll.py,
#      extractcvars, automake), configures ch4:ucx with Debian's UCX and hwloc,
#      libmpich.so.12 as Debian names it, and links libgencoll-mpich, which this
#      repository builds (the core is never copied into MPICH);
#   4. make install into the prefix, and configures MPICH's own test suite.
#
# The build is cached under a key of its inputs' content (source, patch, glue,
# options, this script): unchanged inputs skip straight to step 5, which always
# refreshes libgencoll-mpich in the prefix (its ABI is part of the key).
#
# usage: build-mpich.sh [--source DIR|TARBALL] [--gencoll-build DIR] [--cache DIR]
#                       [--progress-yield] [--jobs N]
#   --progress-yield  ch4's progress wait calls sched_yield() (for more ranks
#                     than cores; off by default; the tests use it)
# Prints the prefix on its last line and writes it to GENCOLL_BUILD/mpich-prefix.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
source_arg=""
gencoll_build="$repo/build"
cache="${GENCOLL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gencoll}"
yield=no
jobs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --source) source_arg=$(realpath "$2"); shift 2 ;;
    --gencoll-build) gencoll_build=$(realpath "$2"); shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --progress-yield) yield=yes; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-mpich.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

corelib=$(readlink -f "$gencoll_build/.libs/libgencoll-mpich.so" 2>/dev/null || true)
[ -f "$corelib" ] || { echo "build-mpich.sh: no libgencoll-mpich in $gencoll_build/.libs; run scripts/build.sh first" >&2; exit 1; }

mkdir -p "$cache"
log() { echo "build-mpich: $*" >&2; }

# ---- 1. the source, and what identifies it
if [ -z "$source_arg" ]; then
  src_root="$cache/debian-source"
  if ! ls -d "$src_root"/mpich-*/ >/dev/null 2>&1; then
    log "fetching MPICH from Debian's source package"
    "$repo/scripts/fetch-mpich-source.sh" "$src_root" >/dev/null
  fi
  pristine=$(ls -d "$src_root"/mpich-*/ | head -n1)
  source_id=$(cat "$src_root"/*.dsc | sha256sum)
elif [ -d "$source_arg" ]; then
  pristine=$source_arg
  source_id=$(cd "$pristine" && find . -type f ! -path './.git/*' -print0 | sort -z | xargs -0 sha256sum | sha256sum)
elif [ -f "$source_arg" ]; then
  src_root="$cache/tarball-$(sha256sum "$source_arg" | cut -c1-12)"
  if ! ls -d "$src_root"/mpich-*/ >/dev/null 2>&1; then
    mkdir -p "$src_root" && tar -xf "$source_arg" -C "$src_root"
  fi
  pristine=$(ls -d "$src_root"/mpich-*/ | head -n1)
  source_id=$(sha256sum < "$source_arg")
else
  echo "build-mpich.sh: --source '$source_arg' is neither a directory nor a file" >&2; exit 2
fi
version=$(sed -n 's/^MPICH_VERSION_m4=//p;s/^m4_define(\[MPICH_VERSION_m4\],\[\(.*\)\])dnl/\1/p' "$pristine/maint/version.m4" | head -n1)
[ "$version" = "4.0.2" ] || log "warning: MPICH '$version' is not 4.0.2; the patch may not apply"

configure_flags=(--with-device=ch4:ucx --with-ucx=/usr --with-hwloc-prefix=/usr
  --with-datatype-engine=dataloop --with-pm=hydra
  --disable-fortran --disable-cxx --disable-romio --enable-shared --disable-static
  --enable-g=none --enable-fast=O2)
cppflags="-I$repo/src/cabi"
[ "$yield" = yes ] && cppflags="$cppflags -DMPIDI_CH4_PROGRESS_SCHED_YIELD"

patches=("$repo/src/mpich/mpich-4.0.2.patch" "$repo"/src/mpich/mpich-4.0.2-*.patch)
key=$( { echo "$source_id"; cat "${patches[@]}" "$repo/src/cabi/gencoll_mpich.h" "$0";
         (cd "$repo/src/mpich/overlay" && find . -type f | sort | xargs cat);
         echo "${configure_flags[*]} $cppflags"; } | sha256sum | cut -c1-16)
work="$cache/mpich-$version-$key"
prefix="$work/prefix"

install_core() {
  # The real file (libgencoll-mpich.so.MAJOR.x.y), its soname link and the
  # development link; libmpich's RUNPATH points here.
  local real soname
  real=$(basename "$corelib")
  soname=$(echo "$real" | sed 's/^\(libgencoll-mpich\.so\.[0-9]*\).*/\1/')
  mkdir -p "$prefix/lib"
  rm -f "$prefix/lib/$real" "$prefix/lib/$soname" "$prefix/lib/libgencoll-mpich.so"
  cp "$corelib" "$prefix/lib/$real"
  [ "$soname" = "$real" ] || ln -s "$real" "$prefix/lib/$soname"
  ln -s "$real" "$prefix/lib/libgencoll-mpich.so"
}

if [ -f "$work/.complete" ]; then
  log "inputs unchanged ($key): reusing $prefix"
else
  start=$(date +%s)
  rm -rf "$work"
  mkdir -p "$work"
  log "copying the source into $work/src"
  cp -a "$pristine" "$work/src"
  cd "$work/src"
  for p in "${patches[@]}"; do patch -p1 --quiet < "$p"; done
  cp -r "$repo/src/mpich/overlay/." .
  log "regenerating MPICH's generated files (autogen.sh)"
  ./autogen.sh -quick > "$work/autogen.log" 2>&1 || { tail -30 "$work/autogen.log" >&2; exit 1; }
  install_core
  mkdir -p "$work/build"
  cd "$work/build"
  log "configuring (ch4:ucx, hwloc, MPILIBNAME=mpich)"
  "$work/src/configure" --prefix="$prefix" "${configure_flags[@]}" \
    MPILIBNAME=mpich CPPFLAGS="$cppflags" \
    LDFLAGS="-L$prefix/lib -Wl,-rpath,$prefix/lib" LIBS="-lgencoll-mpich" \
    > "$work/configure.log" 2>&1 || { tail -30 "$work/configure.log" >&2; exit 1; }
  log "building with $jobs jobs"
  make -j"$jobs" > "$work/make.log" 2>&1 || { grep -B5 -A5 -m5 'error' "$work/make.log" >&2 || tail -30 "$work/make.log" >&2; exit 1; }
  make install > "$work/install.log" 2>&1 || { tail -30 "$work/install.log" >&2; exit 1; }
  touch "$work/.complete"
  log "built in $(( $(date +%s) - start )) s"
  # Builds that never completed are of no use to anyone.
  for d in "$cache"/mpich-*/; do
    [ -f "$d/.complete" ] || [ "${d%/}" = "$work" ] || rm -rf "$d"
  done
fi

install_core
mkdir -p "$gencoll_build"
echo "$prefix" > "$gencoll_build/mpich-prefix"
echo "$prefix"

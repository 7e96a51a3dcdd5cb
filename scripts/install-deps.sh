#!/usr/bin/env bash
# Installs every Debian package gencoll needs. Idempotent; skips apt when all are present.
set -euo pipefail

packages=(
  build-essential autoconf automake libtool pkg-config
  mpich libmpich-dev
  openmpi-bin libopenmpi-dev
  catch2 nlohmann-json3-dev libhwloc-dev hwloc
  # the MPICH module: MPICH's source package, its autotools regeneration
  # (python3, perl), ch4:ucx with Debian's UCX, MPICH's test-suite driver
  dpkg-dev patch xz-utils python3 perl libucx-dev
  # gencoll-tune draws its plots with gnuplot
  gnuplot-nox
  # tests/fuzz: libFuzzer, ASan and UBSan come with Debian's clang
  clang
  # tests/ompi/debian_app.sh: an application from Debian's archive, built
  # against Debian's Open MPI, run unchanged with the coll component
  hpcc
  # tests/valgrind: the MPI matrix under memcheck
  valgrind
  # scripts/cluster.sh: namespaces, veths, qdiscs (ip, tc; unshare, nsenter, taskset)
  iproute2 util-linux
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

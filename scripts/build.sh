#!/usr/bin/env bash
# Installs the Debian packages gencoll needs, then configures and builds it in
# build/ (out of tree). Re-running only rebuilds what changed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/scripts/install-deps.sh"
cd "$top"
[ -x configure ] && [ configure -nt configure.ac ] && [ Makefile.in -nt Makefile.am ] || ./autogen.sh >/dev/null
mkdir -p build
cd build
[ -f Makefile ] && [ Makefile -nt ../Makefile.in ] || ../configure --prefix="$top/build/install" ${GENCOLL_CONFIGURE_FLAGS:-} >/dev/null
make -j"$(nproc)"

#!/usr/bin/env bash
# The main job: set everything up, then measure gencoll's algorithms against the
# MPI's own on this machine (see benchmarks/compare.sh for options).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/scripts/build.sh"
exec bash "$top/benchmarks/compare.sh" "$@"

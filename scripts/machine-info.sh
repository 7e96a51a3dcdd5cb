# The lines of a results directory's machine.txt that every measuring script
# writes alike (sourced by scripts/main-job.sh, benchmarks/emu_probe.sh and
# benchmarks/fixed_radix.sh, which add their own: command, ranks, network, MPI;
# device-bundle.sh and device-session.sh take gencoll_commit from it).

machine_date() { echo "date: $(date -u '+%F %T UTC')"; }

# Host, CPU, memory and GPUs of the machine the script runs on.
machine_platform() {
  echo "host: $(uname -n), $(uname -sr)"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
  echo "memory: $(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
  if command -v nvidia-smi > /dev/null; then echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader | paste -sd,)"; fi
}

# machine_gencoll TOP [BUNDLE]: the commit of the gencoll tree TOP (marked
# where it has changes), the commit BUNDLE's binaries were built at (a device
# machine's copy of the tree may carry an older history than its files), and
# the transport and gencoll settings in the environment.
# gencoll_commit TOP: the commit of the tree TOP, marked where it has changes.
gencoll_commit() {
  echo "$(git -C "$1" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$1" diff --quiet HEAD 2>/dev/null || echo ' (modified)')"
}

machine_gencoll() {
  echo "gencoll: $(gencoll_commit "$1")"
  if [ -n "${2:-}" ] && [ -f "$2/COMMIT" ]; then echo "bundle: built at gencoll $(cat "$2/COMMIT")"; fi
  # The launcher passes this environment to every rank: transport settings
  # such as UCX_RNDV_THRESH change what is measured.
  env | grep -E '^(UCX|MPIR_CVAR|GENCOLL)_' | sort | sed 's/^/environment: /' || true
}

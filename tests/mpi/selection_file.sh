#!/usr/bin/env bash
# GENCOLL_SELECTION_FILE drives the Open MPI interposition library as MPICH's
# csel drives the MPICH module (tests/mpich/json_select.sh, same file and
# expectations): every size of a sweep runs the algorithm and k the file names,
# a leaf without k= takes the radix variable, a leaf naming one of MPICH's own
# algorithms runs the MPI's own (and says so), and a bad file stops MPI_Init
# with a message naming the file and the key.
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fail() { echo "FAIL: $*"; exit 1; }
. "$srcdir/tests/tune/choices.sh"
if ! command -v mpicc.openmpi >/dev/null || ! command -v mpiexec.openmpi >/dev/null; then
  echo "SKIP: mpicc.openmpi or mpiexec.openmpi not found"
  exit 77
fi
# With "component" as the first argument, the same file and expectations
# drive the Open MPI coll component (coll_gencoll_selection_file) instead.
mode=${1:-library}
if [ "$mode" = component ]; then
  [ -f "$builddir/ompi-component/component-path" ] || { echo "SKIP: no Open MPI component built"; exit 77; }
  component_path=$(cat "$builddir/ompi-component/component-path")
else
  lib="$builddir/openmpi/.libs/libgencoll-pmpi.so"
  [ -f "$lib" ] || fail "$lib not built"
fi
# The options that load gencoll with FILE and its debug lines, then NAME VALUE
# pairs of GENCOLL_* radix variables (the component's names are derived).
gencoll_env() {
  local file=$1; shift
  if [ "$mode" = component ]; then
    env=(-x OMPI_MCA_mca_base_component_path="$component_path" -x OMPI_MCA_coll_gencoll_selection_file="$file"
         -x OMPI_MCA_coll_gencoll_verbose=1)
    while [ $# -gt 0 ]; do
      env+=(-x "OMPI_MCA_coll_gencoll_$(echo "${1#GENCOLL_}" | tr '[:upper:]' '[:lower:]')=$2"); shift 2
    done
  else
    env=(-x LD_PRELOAD="$lib" -x GENCOLL_SELECTION_FILE="$file" -x GENCOLL_DEBUG=1)
    while [ $# -gt 0 ]; do env+=(-x "$1=$2"); shift 2; done
  fi
}
bin="$builddir/tests/mpi/size_sweep.openmpi"
src="$srcdir/tests/mpich/size_sweep.c"
mkdir -p "$(dirname "$bin")"
[ "$bin" -nt "$src" ] || mpicc.openmpi -O1 -o "$bin" "$src" || fail "cannot build size_sweep with mpicc.openmpi"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# FILE [NAME VALUE]...: size_sweep on 5 ranks under the library with that file.
run() {
  local env
  gencoll_env "$@"
  timeout -k 5 120 mpiexec.openmpi --oversubscribe --allow-run-as-root --mca btl self,vader -n 5 "${env[@]}" \
    "$bin" </dev/null 2>&1
}

# json_select.sh's file (tests/data/select-handwritten.json).
out=$(run "$srcdir/tests/data/select-handwritten.json" GENCOLL_ALLREDUCE_KNOMIAL_KVAL 6) || fail "size_sweep failed under the selection file: $out"
echo "$out" | grep -q "^size_sweep: p=5 ok" || fail "wrong results: $out"

check_handwritten "$out"

# Leaves naming MPICH's own algorithms, and sizes reaching no leaf (past the
# last sibling, a condition that may end a run: comm_type=), go to the MPI.
cat > "$tmp/native.json" <<'EOF'
{"collective=allreduce": {"avg_msg_size<=256": {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}},
                          "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {"k=3": {}}}},
 "collective=bcast": {"avg_msg_size<=256": {"algorithm=MPIR_Bcast_intra_knomial": {}},
                      "comm_type=inter": {"algorithm=MPIR_Bcast_inter_remote_send_local_bcast": {}}}}
EOF
out=$(run "$tmp/native.json") || fail "size_sweep failed under native.json: $out"
echo "$out" | grep -q "^size_sweep: p=5 ok" || fail "wrong results: $out"
for line in "allreduce count=64 bytes=256 p=5 root=0 algorithm=native (MPIR_Allreduce_intra_recursive_doubling)" \
            "allreduce count=512 bytes=2048 p=5 root=0 algorithm=kring k=3" \
            "bcast count=64 bytes=256 p=5 root=4 algorithm=knomial k=2" \
            "bcast count=512 bytes=2048 p=5 root=4 algorithm=native (no leaf of the selection file)" \
            "allgather count=1 bytes=4 p=5 root=0 algorithm=native (no leaf of the selection file)"; do
  echo "$out" | grep -qxF "gencoll: $line" || fail "no debug line 'gencoll: $line' in: $out"
done

# The tuner's file for a small synthetic machine (4 ranks): every call runs what
# the file names (tests/tune/select.py walks it as csel does).
"$builddir/selection/gencoll-tune" --profile "$srcdir/selection/profiles/small-synthetic.json" --comm-sizes 4 \
  --max-size 256K --no-plot --out "$tmp" --name tuned >/dev/null || fail "gencoll-tune failed"
gencoll_env "$tmp/tuned.json"
out=$(timeout -k 5 120 mpiexec.openmpi --oversubscribe --allow-run-as-root --mca btl self,vader -n 4 \
  "${env[@]}" "$bin" </dev/null 2>&1) ||
  fail "size_sweep failed under the tuned file: $out"
echo "$out" | grep -q "^size_sweep: p=4 ok" || fail "wrong results under the tuned file: $out"
check_tuned "$tmp/tuned.json" 4 "$out"

# The same question again, and one thing changed at a time (type, count,
# communicator, root; a communicator of another size on a freed one's
# handle): each call says what the file names for it, repeated calls too.
cat > "$tmp/repeat.json" <<'EOF'
{"collective=allreduce": {"comm_size<=3": {"algorithm=MPIR_Allreduce_intra_knomial": {"k=2": {}}},
                          "comm_size=any": {"avg_msg_size<=16": {"algorithm=MPIR_Allreduce_intra_recursive_multiplying": {"k=3": {}}},
                                            "avg_msg_size<=128": {"algorithm=MPIR_Allreduce_intra_kring": {"k=2": {}}},
                                            "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}}}},
 "collective=bcast": {"avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_knomial": {"k=3": {}}}}}
EOF
rbin="$builddir/tests/mpi/select_repeat.openmpi"
[ "$rbin" -nt "$srcdir/tests/mpi/select_repeat.c" ] || mpicc.openmpi -O1 -o "$rbin" "$srcdir/tests/mpi/select_repeat.c" ||
  fail "cannot build select_repeat with mpicc.openmpi"
gencoll_env "$tmp/repeat.json"
out=$(timeout -k 5 120 mpiexec.openmpi --oversubscribe --allow-run-as-root --mca btl self,vader -n 5 "${env[@]}" \
  "$rbin" </dev/null 2>&1) || fail "select_repeat failed under the selection file: $out"
echo "$out" | grep -q "^select_repeat: p=5 ok" || fail "wrong results: $out"
r5="allreduce count=4 bytes=16 p=5 root=0 algorithm=recursive_multiplying k=3"
own="allreduce count=64 bytes=256 p=5 root=0 algorithm=native (MPIR_Allreduce_intra_recursive_doubling)"
r3="allreduce count=4 bytes=16 p=3 root=0 algorithm=knomial k=2"
r4="allreduce count=4 bytes=16 p=4 root=0 algorithm=recursive_multiplying k=3"
expected=$(printf 'gencoll: %s\n' "$r5" "$r5" "$r5" "allreduce count=4 bytes=32 p=5 root=0 algorithm=kring k=2" "$r5" \
  "$own" "$own" "$r3" "$r3" "$r4" "$r4" \
  "bcast count=4 bytes=16 p=5 root=2 algorithm=knomial k=3" "bcast count=4 bytes=16 p=5 root=3 algorithm=knomial k=3")
# Rank 0's lines, in order: it is rank 0 of the world and of both first
# halves (the other halves' rank 0 print p=2 and p=1); the last allreduce
# (count=1) gathers the errors.
got=$(echo "$out" | grep -E '^gencoll: (allreduce|bcast) .* p=[345] ' | grep -v ' count=1 ')
[ "$got" = "$expected" ] || fail "the debug lines of repeated calls differ; expected:
$expected
got:
$got
all output: $out"

# A bad file stops the job at MPI_Init, naming the file and the key.
echo '{"collective=allreduce": {"avg_msg_sise<=64": {"algorithm=MPIR_Allreduce_intra_kring": {}}}}' > "$tmp/bad.json"
out=$(run "$tmp/bad.json") && fail "a bad selection file did not stop the job: $out"
origin="GENCOLL_SELECTION_FILE=$tmp/bad.json"
[ "$mode" = component ] && origin="coll_gencoll_selection_file: selection file $tmp/bad.json"
echo "$out" | grep -qF "$origin: key \"avg_msg_sise<=64\": unknown key" ||
  fail "no message naming the file and the key: $out"
echo "PASS ($mode): the selection file chose the algorithm and k of every call (25 calls), the MPI's own where it names it; the tuner's file drove all 25 calls; 13 repeated and varied calls each ran what the file names"

# Shared by the selection-file tests of the MPICH module (tests/mpich/) and of
# the interposition library (tests/mpi/selection_file.sh): reading the per-call
# debug lines and comparing them with what a file selects. Needs srcdir and a
# fail function.

# debug_calls P OUTPUT: "collective bytes algorithm k" of each gencoll call at p = P.
debug_calls() {
  echo "$2" | sed -n "s/^gencoll: \([a-z]*\) count=[0-9]* bytes=\([0-9]*\) p=$1 root=[0-9]* algorithm=\([a-z_]*\) k=\([0-9]*\)\$/\1 \2 \3 \4/p"
}

# The choices of the hand-written file of json_select.sh and selection_file.sh
# at p = 5 with MPIR_CVAR/GENCOLL_ALLREDUCE_KNOMIAL_KVAL=6 (k clamped to p).
expected_handwritten() {
  local coll=$1 b=$2
  case $coll in
    allreduce) if [ "$b" -le 64 ]; then echo "recursive_multiplying 4"; elif [ "$b" -le 4096 ]; then echo "knomial 5"; else echo "kring 3"; fi ;;
    allgather) if [ "$b" -le 256 ]; then echo "permuted_recursive_multiplying 3"; else echo "kring 2"; fi ;;
    bcast) if [ "$b" -le 1024 ]; then echo "knomial 5"; else echo "recursive_multiplying 3"; fi ;;
    reduce) echo "knomial 3" ;;
  esac
}

# check_handwritten OUTPUT: every call of a size_sweep run at p = 5 ran what the
# hand-written file names; 25 calls (6 sizes x 4 collectives and a final
# 1-element allreduce). Prints the calls.
check_handwritten() {
  local n=0 coll bytes alg k want
  while read -r coll bytes alg k; do
    want=$(expected_handwritten "$coll" "$bytes")
    [ "$alg $k" = "$want" ] || fail "$coll of $bytes bytes ran '$alg k=$k', the file names '$want'"
    printf '  %-9s %7s bytes: %s k=%s\n' "$coll" "$bytes" "$alg" "$k"
    n=$((n + 1))
  done < <(debug_calls 5 "$1")
  [ $n -eq 25 ] || fail "expected 25 gencoll calls in the debug output, saw $n: $1"
}

# check_tuned FILE P OUTPUT: every call of a size_sweep run at p = P ran what
# FILE (written by gencoll-tune) selects, as tests/tune/select.py walks it.
check_tuned() {
  local file=$1 p=$2 n=0 coll bytes alg k want Coll
  while read -r coll bytes alg k; do
    want=$(python3 "$srcdir/tests/tune/select.py" "$file" "$coll" "$p" "$bytes") || fail "select.py failed"
    Coll="$(echo "${coll:0:1}" | tr a-z A-Z)${coll:1}"
    [ "MPIR_${Coll}_intra_$alg $k" = "$want" ] || fail "$coll of $bytes bytes ran $alg k=$k; the file names $want"
    n=$((n + 1))
  done < <(debug_calls "$p" "$3")
  [ $n -eq 25 ] || fail "expected 25 gencoll calls in the debug output, saw $n: $3"
}

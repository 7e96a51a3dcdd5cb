#!/usr/bin/env bash
# run_matrix.sh - run coll_check under every (algorithm, p, k) combination.
#
# Usage:
#   run_matrix.sh --mpi mpich|openmpi --lib /path/libgencoll-pmpi.so|none \
#                 --bin /path/coll_check [--quick] [options]
#   run_matrix.sh --mpi gencoll-mpich --mpich-prefix DIR --lib none \
#                 --bin /path/coll_check [options]
#   run_matrix.sh --mpi gencoll-openmpi --component-path PATH --lib none \
#                 --bin /path/coll_check [options]
#
# Options:
#   --mpi M         mpich (mpiexec.mpich), openmpi (mpiexec.openmpi), or
#                   gencoll-mpich: MPICH built with the gencoll module
#                   (scripts/build-mpich.sh) running binaries built with Debian's
#                   mpicc.mpich unchanged; algorithms are selected with
#                   MPIR_CVAR_<COLL>_INTRA_ALGORITHM / MPIR_CVAR_<COLL>_<ALG>_KVAL
#                   and MPIR_CVAR_<COLL>_DEVICE_COLLECTIVE=0 (the fixed-radix
#                   baselines are MPICH's own there and are skipped)
#                   gencoll-openmpi: Debian's Open MPI loading the gencoll coll
#                   component (mca_coll_gencoll.so); algorithms are selected with
#                   OMPI_MCA_coll_gencoll_<coll>_algorithm / _<alg>_kval (the
#                   baselines are Open MPI's own there and are skipped)
#   --mpich-prefix DIR  install prefix of that MPICH (gencoll-mpich only)
#   --component-path PATH  mca_base_component_path value that finds the
#                   component (gencoll-openmpi only: build/ompi-component/component-path)
#   --lib PATH      interposition library to LD_PRELOAD into the ranks;
#                   "none" runs without it (exercises the MPI's own collectives)
#   --bin PATH      coll_check built with the matching mpicc (mpicc.mpich /
#                   mpicc.openmpi), or root_check, rsb_check, or checks (the
#                   three in one launch, asked with --only for those a run
#                   needs); repeatable
#   --programs "LIST"  of checks' three, run only these (default: all)
#   --quick         p in {1,2,3,4,7,8} instead of {1..9,12,16}
#   --procs "LIST"  explicit list of process counts (overrides --quick)
#   --algs "LIST"   explicit list of algorithms (default: all six + native)
#   --jobs N        run N mpiexec invocations at once (default 1)
#   --timeout S     per-run time limit in seconds (default 120)
#   --args "ARGS"   extra arguments for coll_check (it always gets -q)
#   --mpiexec-args "ARGS"  extra arguments for mpiexec
#   --env NAME=VALUE  one more variable for the ranks (repeatable), e.g.
#                   GENCOLL_COUNT_LIMIT=3 to take the large-count paths
#   --cluster R     run across the hosts of the emulated cluster that is up
#                   (scripts/cluster.sh, id $GENCOLL_CLUSTER_ID), R ranks per
#                   host; Open MPI then also gets its TCP BTL
#   --ks "LIST"     radix values per p; tokens may be numbers, p or p+1
#                   (default "2 3 p p+1"; k > p behaves as k = p)
#   --native-max-p N  run the MPI's own algorithms only for p <= N (MPICH's
#                   spinning waits make large oversubscribed native runs slow)
#   --logdir DIR    keep every run's output in DIR (default: a temp dir that is
#                   removed at the end; failing runs' output tails are printed)
#
# For each algorithm of coll/algorithm_table.cpp (default: all, as
# gencoll-sim --list-algorithms prints them) with a radix (each with k in
# {2, 3, p, p+1}, deduped, k >= 2), with a fixed radix (once per p, no KVAL
# variables) and native (once per p), the ranks get
#   GENCOLL_ALLGATHER_INTRA_ALGORITHM=<alg>  GENCOLL_ALLREDUCE_INTRA_ALGORITHM=<alg>
#   GENCOLL_ALLGATHER_<ALG>_KVAL=<k>         GENCOLL_ALLREDUCE_<ALG>_KVAL=<k>
#   GENCOLL_WAIT_POLICY=yield                LD_PRELOAD=<lib>
# Prints one line per run and "run_matrix: <passed>/<total> runs passed";
# exits 1 if any run failed (nonzero exit, timeout, or no clean summary line).

set -u

usage() {
    sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0" >&2
    exit 2
}

MPI=""
LIB=""
BIN=""
BINS=()
EXTRA_ENV=()
QUICK=0
PROCS=""
ALGS=""
JOBS=1
TIMEOUT=120
BIN_ARGS=""
PROGRAMS="coll_check root_check rsb_check"
MPIEXEC_ARGS=""
LOGDIR=""
KS="2 3 p p+1"
NATIVE_MAX_P=1000000
MPICH_PREFIX=""
COMPONENT_PATH=""
CLUSTER=""

while [ $# -gt 0 ]; do
    case "$1" in
    --mpi) MPI="${2:-}"; shift 2 ;;
    --lib) LIB="${2:-}"; shift 2 ;;
    --bin) BIN="${2:-}"; BINS+=("${2:-}"); shift 2 ;;
    --quick) QUICK=1; shift ;;
    --procs) PROCS="${2:-}"; shift 2 ;;
    --algs) ALGS="${2:-}"; shift 2 ;;
    --jobs|-j) JOBS="${2:-}"; shift 2 ;;
    --timeout) TIMEOUT="${2:-}"; shift 2 ;;
    --args) BIN_ARGS="${2:-}"; shift 2 ;;
    --programs) PROGRAMS="${2:-}"; shift 2 ;;
    --mpiexec-args) MPIEXEC_ARGS="${2:-}"; shift 2 ;;
    --logdir) LOGDIR="${2:-}"; shift 2 ;;
    --ks) KS="${2:-}"; shift 2 ;;
    --native-max-p) NATIVE_MAX_P="${2:-}"; shift 2 ;;
    --mpich-prefix) MPICH_PREFIX="${2:-}"; shift 2 ;;
    --component-path) COMPONENT_PATH="${2:-}"; shift 2 ;;
    --cluster) CLUSTER="${2:-}"; shift 2 ;;
    --env) EXTRA_ENV+=("${2:-}"); shift 2 ;;
    -h|--help) usage ;;
    *) echo "run_matrix: unknown argument: $1" >&2; usage ;;
    esac
done

# What the algorithm table (coll/algorithm_table.cpp) says, as gencoll-sim
# lists it: every algorithm (the default), those without a radix, those the
# MPICH module registers, and each collective's.
SIM="${builddir:-$(cd "$(dirname "$0")/../.." && pwd)/build}/selection/gencoll-sim"
table() { "$SIM" --list-algorithms "$@" 2>/dev/null | tr '\n' ' '; }
TABLE_ALL=$(table)
[ -n "$TABLE_ALL" ] || { echo "run_matrix: cannot list the algorithms with $SIM (build first)" >&2; exit 2; }
TABLE_FIXED=$(table fixed)
TABLE_MODULE=$(table module)
declare -A TABLE_COLL
for coll in allgather allreduce bcast reduce reduce_scatter_block reduce_scatter; do TABLE_COLL[$coll]=$(table $coll); done
# An empty list would make every row skip its programs and pass having run nothing.
for t in "fixed:$TABLE_FIXED" "module:$TABLE_MODULE"; do
    [ -n "${t#*:}" ] || { echo "run_matrix: $SIM --list-algorithms ${t%%:*} listed nothing" >&2; exit 2; }
done
for coll in "${!TABLE_COLL[@]}"; do
    [ -n "${TABLE_COLL[$coll]}" ] || { echo "run_matrix: $SIM --list-algorithms $coll listed nothing" >&2; exit 2; }
done
listed() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }
ALGS_GIVEN=$ALGS
[ -n "$ALGS" ] || ALGS="${TABLE_ALL}native"
if [ -z "$MPI" ] || [ -z "$LIB" ] || [ -z "$BIN" ]; then usage; fi

case "$MPI" in
mpich)
    MPIEXEC=mpiexec.mpich
    MPILIB_RE='libmpich'
    ;;
openmpi)
    MPIEXEC=mpiexec.openmpi
    MPILIB_RE='libmpi\.so'
    ;;
gencoll-mpich)
    [ -x "$MPICH_PREFIX/bin/mpiexec" ] || { echo "run_matrix: --mpich-prefix has no bin/mpiexec: '$MPICH_PREFIX'" >&2; exit 2; }
    MPIEXEC="$MPICH_PREFIX/bin/mpiexec"
    MPILIB_RE='libmpich'
    ;;
gencoll-openmpi)
    [ -n "$COMPONENT_PATH" ] || { echo "run_matrix: gencoll-openmpi needs --component-path" >&2; exit 2; }
    MPIEXEC=mpiexec.openmpi
    MPILIB_RE='libmpi\.so'
    ;;
*) echo "run_matrix: --mpi must be mpich, openmpi, gencoll-mpich or gencoll-openmpi" >&2; exit 2 ;;
esac
# Inside an MPI (the MPICH module, the Open MPI component) the fixed-radix
# baselines are the MPI's own algorithms, and only the algorithms the module
# registers can be named.
if [ "$MPI" = gencoll-mpich ] || [ "$MPI" = gencoll-openmpi ]; then
    kept=""
    for alg in $ALGS; do
        if [ "$alg" = native ] || { listed "$TABLE_MODULE" "$alg" && ! listed "$TABLE_FIXED" "$alg"; }; then
            kept="$kept $alg"
        elif [ -n "$ALGS_GIVEN" ]; then
            # named on purpose: dropping it would pass without testing it
            echo "run_matrix: --algs $alg: $MPI serves only the module's variable-radix algorithms ($TABLE_MODULE) and native" >&2
            exit 2
        fi
    done
    ALGS=$kept
fi
command -v "$MPIEXEC" >/dev/null || { echo "run_matrix: $MPIEXEC not found" >&2; exit 2; }
for i in "${!BINS[@]}"; do
    BIN=${BINS[$i]}
    [ -x "$BIN" ] || { echo "run_matrix: binary not executable: $BIN" >&2; exit 2; }
    BINS[$i]="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
    # a test program built against the other MPI fails in confusing ways: check
    if command -v ldd >/dev/null && ! ldd "$BIN" 2>/dev/null | grep -q "$MPILIB_RE"; then
        echo "run_matrix: $BIN does not link $MPILIB_RE; build it with mpicc.$MPI" >&2
        exit 2
    fi
done
if [ "$LIB" != none ]; then
    [ -f "$LIB" ] || { echo "run_matrix: library not found: $LIB" >&2; exit 2; }
    LIB="$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")"
fi
case "$JOBS" in ''|*[!0-9]*|0) echo "run_matrix: bad --jobs" >&2; exit 2 ;; esac
BTL=self,vader
if [ -n "$CLUSTER" ]; then
    case "$CLUSTER" in ''|*[!0-9]*|0) echo "run_matrix: --cluster R: R must be a positive integer" >&2; exit 2 ;; esac
    if [ "$MPI" = openmpi ] || [ "$MPI" = gencoll-openmpi ]; then
        CLUSTER_ARGS=$(bash "$(dirname "$0")/../../scripts/cluster.sh" mpirun-args "$CLUSTER") || exit 2
        BTL=self,vader,tcp
    else
        CLUSTER_ARGS=$(bash "$(dirname "$0")/../../scripts/cluster.sh" mpiexec-args "$CLUSTER") || exit 2
    fi
    MPIEXEC_ARGS="$CLUSTER_ARGS $MPIEXEC_ARGS"
fi

if [ -z "$PROCS" ]; then
    if [ "$QUICK" = 1 ]; then PROCS="1 2 3 4 7 8"; else PROCS="1 2 3 4 5 6 7 8 9 12 16"; fi
fi

if [ -n "$LOGDIR" ]; then
    mkdir -p "$LOGDIR" || exit 2
    KEEP_LOGS=1
else
    LOGDIR="$(mktemp -d /tmp/run_matrix.XXXXXX)" || exit 2
    KEEP_LOGS=0
fi
RESULTS="$LOGDIR/results.txt"
: >"$RESULTS"

# shellcheck disable=SC2317  # invoked via trap
cleanup() {
    # stop runs still in flight (only our own children)
    local pid
    for pid in $(jobs -p); do kill "$pid" 2>/dev/null; done
    if [ "$KEEP_LOGS" = 0 ]; then rm -rf "$LOGDIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# k values for p from $KS (tokens: numbers, p, p+1), k >= 2, deduplicated
kvals() {
    local p=$1 k t out=" "
    for t in $KS; do
        case "$t" in p) k=$p ;; p+1) k=$((p + 1)) ;; *) k=$t ;; esac
        [ "$k" -ge 2 ] || continue
        case "$out" in *" $k "*) continue ;; esac
        out="$out$k "
    done
    out="${out# }"
    echo "${out% }"
}

upper() { echo "$1" | tr '[:lower:]' '[:upper:]'; }
# The variable that selects COLL's algorithm, and the one with ALG's radix,
# in the binding under test's own names.
alg_var() {
    case "$MPI" in
    gencoll-mpich) echo "MPIR_CVAR_$(upper "$1")_INTRA_ALGORITHM" ;;
    gencoll-openmpi) echo "OMPI_MCA_coll_gencoll_$1_algorithm" ;;
    *) echo "GENCOLL_$(upper "$1")_INTRA_ALGORITHM" ;;
    esac
}
kval_var() {
    case "$MPI" in
    gencoll-mpich) echo "MPIR_CVAR_$(upper "$1")_$(upper "$2")_KVAL" ;;
    gencoll-openmpi) echo "OMPI_MCA_coll_gencoll_$1_$2_kval" ;;
    *) echo "GENCOLL_$(upper "$1")_$(upper "$2")_KVAL" ;;
    esac
}

# The collectives each test program checks (its bookkeeping calls aside);
# "all" for a program this script does not know.
tested_by() {
    case "$1" in
    coll_check) echo "allgather allreduce" ;;
    root_check) echo "bcast reduce" ;;
    rsb_check) echo "reduce_scatter_block reduce_scatter" ;;
    *) echo all ;;
    esac
}
# serves_any ALG "COLLS UNDER TEST" "COLLS OF THE PROGRAM"
serves_any() {
    local c
    [ "$3" = all ] && return 0
    for c in $3; do
        listed "$2" "$c" && listed "${TABLE_COLL[$c]}" "$1" && return 0
    done
    return 1
}

# run_one ALG P K   (K = "-" for algorithms without a radix)
run_one() {
    local alg=$1 p=$2 k=$3
    local log t0 t1 secs rc status
    log="$LOGDIR/$MPI.$alg.p$p.k$k.log"
    # Each collective gets the algorithm where gencoll has it (the table says
    # where), else stays with the MPI's own, except reduce, which runs gencoll's
    # k-nomial at k = 2 rather than wait on the MPI's own (MPICH's spins).
    # MPICH's waits spin, so gencoll yields there.
    local -a envs=()
    local coll native_reduce=1 colls="allgather allreduce bcast reduce reduce_scatter_block reduce_scatter"
    case "$MPI" in
    gencoll-mpich)
        colls="allgather allreduce bcast reduce reduce_scatter_block reduce_scatter"  # what the module serves
        envs+=("LD_LIBRARY_PATH=$MPICH_PREFIX/lib")
        for coll in $colls; do envs+=("MPIR_CVAR_$(upper "$coll")_DEVICE_COLLECTIVE=0"); done
        ;;
    gencoll-openmpi)
        colls="allgather allreduce bcast reduce reduce_scatter_block reduce_scatter"  # what the component serves
        envs+=("OMPI_MCA_mca_base_component_path=$COMPONENT_PATH")
        ;;
    esac
    for coll in $colls; do
        [ "$alg" = native ] && continue
        if ! listed "${TABLE_COLL[$coll]}" "$alg"; then
            if [ "$coll" = reduce ]; then
                envs+=("$(alg_var reduce)=knomial" "$(kval_var reduce knomial)=2")
                native_reduce=0
            fi
            continue
        fi
        [ "$coll" = reduce ] && native_reduce=0
        envs+=("$(alg_var "$coll")=$alg")
        [ "$k" != - ] && envs+=("$(kval_var "$coll" "$alg")=$k")
    done
    if [ "$MPI" = mpich ]; then envs+=("GENCOLL_WAIT_POLICY=yield"); fi
    envs+=("${EXTRA_ENV[@]}")
    [ "$LIB" != none ] && envs+=("LD_PRELOAD=$LIB")

    local -a cmd
    local e
    if [ "$MPI" != openmpi ] && [ "$MPI" != gencoll-openmpi ]; then
        # -genv: the variables reach the ranks only (not mpiexec/hydra itself)
        cmd=("$MPIEXEC" -n "$p")
        for e in "${envs[@]}"; do cmd+=(-genv "${e%%=*}" "${e#*=}"); done
    else
        # shellcheck disable=SC2054  # "self,vader" is one argument
        cmd=("$MPIEXEC" --oversubscribe --allow-run-as-root --mca btl "$BTL" -n "$p")
        for e in "${envs[@]}"; do cmd+=(-x "$e"); done
    fi
    {
        echo "# ${envs[*]}"
        echo "# ${cmd[*]}"
    } >"$log"
    t0=$(date +%s.%N)
    status=PASS
    rc=0
    local bin name extra names n launched=0
    for bin in "${BINS[@]}"; do
        name=$(basename "$bin")
        name=${name%%.*}
        # checks: coll_check, root_check and rsb_check in one launch
        # (tests/mpi/checks_main.c), asked for those the run needs.
        if [ "$name" = checks ]; then names=$PROGRAMS; else names=$name; fi
        local run_names=()
        for n in $names; do
            # A program whose collectives the algorithm does not serve would only
            # rerun the MPI's own (the native row's job): skip it.
            if [ "$alg" != native ] && ! serves_any "$alg" "$colls" "$(tested_by "$n")"; then continue; fi
            run_names+=("$n")
        done
        [ ${#run_names[@]} -gt 0 ] || continue
        launched=$((launched + 1))
        extra=""
        if [ "$name" = checks ]; then
            extra="--only $(IFS=,; echo "${run_names[*]}")"
        fi
        # Debian's MPICH crashes in its own in-place MPI_Reduce at a non-zero root
        case " ${run_names[*]} " in
        *" root_check "*) [ "$native_reduce" = 1 ] && extra="$extra --skip-native-inplace-bug" ;;
        esac
        # timeout signals its whole process group (mpiexec, proxies, ranks);
        # KILL follows 10 s after TERM
        # shellcheck disable=SC2086,SC2206
        timeout -k 10 "$TIMEOUT" "${cmd[@]}" $MPIEXEC_ARGS "$bin" -q $extra $BIN_ARGS </dev/null >>"$log" 2>&1
        rc=$?
        [ $rc -eq 0 ] || { status=FAIL; break; }
        for n in "${run_names[@]}"; do
            grep -q "^$n: p=$p [0-9]* cases, 0 failures\$" "$log" || { status=FAIL; break 2; }
        done
    done
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    local why=""
    # an algorithm none of whose collectives the programs check: counted, not passed
    if [ $status = PASS ] && [ $launched -eq 0 ]; then status=SKIP why=" (checks none of its collectives)"; fi
    if [ $status = FAIL ]; then
        if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then why=" (timeout ${TIMEOUT}s)"; else why=" (rc=$rc)"; fi
    fi
    printf '%s %-7s %-30s p=%-2s k=%-2s %6ss%s\n' "$status" "$MPI" "$alg" "$p" "$k" "$secs" "$why"
    if [ $status = FAIL ]; then
        # the first failure lines and the tail of the output
        { grep -m 8 -E '^(coll|root|rsb)_check:? FAIL' "$log"; tail -n 12 "$log"; } | awk '!seen[$0]++' |
            sed 's/^/    | /'
    fi
    echo "$status $alg $p $k $secs" >>"$RESULTS"
}

RUNS=()
for p in $PROCS; do
    for alg in $ALGS; do
        if [ "$alg" = native ]; then
            [ "$p" -le "$NATIVE_MAX_P" ] && RUNS+=("$alg $p -")
        elif listed "$TABLE_FIXED" "$alg"; then
            RUNS+=("$alg $p -")
        else
            for k in $(kvals "$p"); do RUNS+=("$alg $p $k"); done
        fi
    done
done

echo "run_matrix: mpi=$MPI lib=$LIB bins=${BINS[*]} runs=${#RUNS[@]} jobs=$JOBS timeout=${TIMEOUT}s"
T0=$(date +%s)
running=0
for r in "${RUNS[@]}"; do
    # shellcheck disable=SC2086
    if [ "$JOBS" -le 1 ]; then
        run_one $r
    else
        if [ $running -ge "$JOBS" ]; then
            wait -n
            running=$((running - 1))
        fi
        run_one $r &
        running=$((running + 1))
    fi
done
wait

total=$(wc -l <"$RESULTS")
passed=$(grep -c '^PASS ' "$RESULTS")
skipped=$(grep -c '^SKIP ' "$RESULTS")
T1=$(date +%s)
skipnote=""
[ "$skipped" -eq 0 ] || skipnote=", $skipped checked none of their collectives"
echo "run_matrix: $passed/$total runs passed$skipnote ($MPI, $((T1 - T0)) s)"
[ "$KEEP_LOGS" = 1 ] && echo "run_matrix: logs in $LOGDIR"
if [ "$total" -eq "${#RUNS[@]}" ] && [ $((passed + skipped)) -eq "$total" ]; then
    [ "$passed" -gt 0 ] && exit 0
    echo "run_matrix: no run checked anything" >&2
fi
exit 1

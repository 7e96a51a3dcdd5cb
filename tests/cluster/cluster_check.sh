#!/usr/bin/env bash
# Both MPIs across the hosts of an emulated cluster (scripts/cluster.sh, id
# 201 so that a user's cluster of id 0 is left alone): 2 hosts x 2 ranks,
# NICs at 1 Gbit/s.
#
#   0. binding: through cluster.sh's binder every rank runs on one core of
#      its own host, and ranks of different hosts never share a core (the
#      launchers' own -bind-to put every host's rank r on core r);
#   1. transports, measured on the NICs: a message between hosts crosses them
#      whole, one within a host does not touch them (shared memory), for the
#      MPICH module (hydra, UCX) and for Open MPI (plm_rsh_agent, TCP BTL);
#   2. the integration matrix across hosts (p = 2, 3, 4; k = 2, 3): the MPICH
#      module through its CVARs and Open MPI through the interposition library;
#   3. the debug lines name the algorithm and radix that ran, also under
#      MPICH's node-aware composition (smp) chosen by a selection file;
#   4. gencoll-loggp finds two levels (node and network) and measures the
#      NIC's sharing (node_radix);
#   5. nic_share runs across hosts, no faster than the links allow;
#   6. the README's first command in small (main-job.sh --emulate 2x1 up to
#      16 KiB): profile, tune, measure, the three applications with MPICH's
#      default and the tuned file, and report, ranks bound by the binder
#      (and --apps-only: no sweeps);
#      continued to 64 KiB in a second sitting (--merge), and 16-32 KiB
#      measured again as a gap filled between the two.
# Skipped (77) where namespaces cannot be made (not root, no CAP_SYS_ADMIN).
set -u
# make check restricts UCX to shared memory (Makefile.am); these ranks cross hosts.
unset UCX_TLS
top=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
b=${builddir:-$top/build}
skip() { echo "SKIP: cluster_check: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root for network namespaces and qdiscs"
unshare --net --uts --ipc --mount --pid --fork true 2>/dev/null || skip "namespaces cannot be made here"
command -v tc >/dev/null || skip "no tc (iproute2)"
# The kernel must have veth, htb, bfifo and u32 (containers may lack them): probe with a
# throwaway namespace before blaming cluster.sh.
probe=gcprobe$$
probe_err=$( { ip netns add "$probe" && ip link add "${probe}v" type veth peer name eth0 netns "$probe" &&
  tc qdisc replace dev "${probe}v" root handle 1: htb default 2 &&
  tc class add dev "${probe}v" parent 1: classid 1:2 htb rate 1gbit quantum 9000 &&
  tc qdisc add dev "${probe}v" parent 1:2 bfifo limit 1mb &&
  tc filter add dev "${probe}v" parent 1: protocol ip prio 1 u32 match ip dst 198.18.0.1/32 flowid 1:2 &&
  ip link set "${probe}v" gso_max_segs 1 &&
  { ip -d link show "${probe}v" | grep -q 'gso_max_segs 1 ' || echo "gso_max_segs is not applied to a veth"; }; } 2>&1 ) ||
  probe_err=${probe_err:-failed}
ip link del "${probe}v" 2>/dev/null; ip netns del "$probe" 2>/dev/null
[ -z "$probe_err" ] || skip "the kernel cannot make a shaped veth here: $probe_err"
export GENCOLL_CLUSTER_ID=201
cluster() { bash "$top/scripts/cluster.sh" "$@"; }
fails=0
# Each line with the seconds since the start: where the test's minutes go.
started=$(date +%s)
pass() { echo "PASS: $* [$(( $(date +%s) - started )) s]"; }
fail() { echo "FAIL: $* [$(( $(date +%s) - started )) s]"; fails=$((fails + 1)); }
tmp=$(mktemp -d)
trap 'cluster down >/dev/null 2>&1; rm -rf "$tmp"' EXIT
cluster up 2 --rate 1gbit || { echo "FAIL: cluster.sh up 2"; exit 1; }
cluster status

prefix=
[ -f "$b/mpich-prefix" ] && prefix=$(cat "$b/mpich-prefix")
[ -n "$prefix" ] && [ -x "$prefix/bin/mpiexec" ] || prefix=
# Launchers as arrays: timeout runs programs, not shell functions.
# Each launcher's arguments apart from the read, which would take a failing
# cluster.sh's empty output for no arguments.
args=$(cluster mpiexec-args 2)
read -r -a hydra <<< "$prefix/bin/mpiexec $args -genv LD_LIBRARY_PATH $prefix/lib"
args=$(cluster mpirun-args 2)
read -r -a ompi <<< "mpiexec.openmpi --allow-run-as-root $args --mca btl self,vader,tcp"
sent() { cluster nic-bytes | awk '{ s += $2 } END { print s }'; }
# Bytes and packets node0's NIC sent (the bridge's side of its veth receives
# them): one packet is one frame unless segmentation offload is on.
frames() { echo "$(cat /sys/class/net/gc${GENCOLL_CLUSTER_ID}v0/statistics/rx_bytes) $(cat /sys/class/net/gc${GENCOLL_CLUSTER_ID}v0/statistics/rx_packets)"; }
mtu=$(cat /sys/class/net/gc${GENCOLL_CLUSTER_ID}v0/mtu)

# 0. Binding: each rank on one core of its host, no core shared between hosts.
binder=$(cluster binder)
host_cores=$(cluster status | awk '$1 ~ /^node/ { print $1, $7 }')
binding() {  # NAME LAUNCH...
  local name=$1; shift
  # Fewer cores than hosts: every host on every core, nothing bound.
  case $host_cores in *" all"*) echo "skipped: $name: the hosts share every core here, nothing is bound"; return ;; esac
  if ! timeout 60 "$@" -n 4 "$binder" sh -c 'echo "bound $(hostname) $(taskset -pc $$ | sed "s/.*: //")"' \
      > "$tmp/b.out" 2>&1 || [ "$(grep -c '^bound ' "$tmp/b.out")" != 4 ]; then
    fail "$name: the binder did not run 4 ranks"; sed 's/^/    | /' "$tmp/b.out" | tail -n 8; return
  fi
  local verdict
  verdict=$(grep '^bound ' "$tmp/b.out" | awk -v hc="$host_cores" '
    BEGIN { n = split(hc, w, /[ \n]/)
            for (i = 1; i < n; i += 2) {  # a host and its cores: a list of cores and ranges
              list[w[i]] = w[i + 1]; m = split(w[i + 1], part, ",")
              for (j = 1; j <= m; j++) { if (split(part[j], r, "-") < 2) r[2] = r[1]; for (c = r[1]; c <= r[2]; c++) mine[w[i], c] = 1 } } }
    { if ($3 !~ /^[0-9]+$/ || !(($2, $3 + 0) in mine)) { print "rank on " $2 " bound to " $3 ", outside its cores " list[$2]; bad = 1 }
      if (($3 in owner) && owner[$3] != $2) { print "core " $3 " shared by " owner[$3] " and " $2; bad = 1 }
      owner[$3] = $2 }
    END { if (!bad) print "ok" }')
  [ "$verdict" = ok ] && pass "$name: every rank bound to one core of its own host ($(grep '^bound ' "$tmp/b.out" | sort | awk '{printf "%s%s:%s", sep, $2, $3; sep=" "}'))" ||
    fail "$name: $verdict"
}
[ -n "$prefix" ] && binding "MPICH module (hydra)" "${hydra[@]}"
command -v mpiexec.openmpi >/dev/null && binding "Open MPI (mpirun)" "${ompi[@]}"

# 1. Which way the bytes went.
bytes=20000000
transports() {  # NAME BIN LAUNCH...
  local name=$1 bin=$2; shift 2
  local a b0 b1 moved fb0 fp0 fb1 fp1
  for a in "0 1 same" "0 2 other"; do
    read -r x y where <<< "$a"
    b0=$(sent); read -r fb0 fp0 <<< "$(frames)"
    if ! timeout 120 "$@" -n 4 "$bin" "$x" "$y" "$bytes" > "$tmp/pt.out" 2>&1 || ! grep -q ', ok$' "$tmp/pt.out"; then
      fail "$name: pair_traffic $x -> $y did not run"; sed 's/^/    | /' "$tmp/pt.out" | tail -n 8; continue
    fi
    b1=$(sent); moved=$((b1 - b0)); read -r fb1 fp1 <<< "$(frames)"
    grep -h pair_traffic "$tmp/pt.out"
    if [ "$where" = other ]; then
      [ "$moved" -ge "$bytes" ] && pass "$name: ranks on different hosts: $moved bytes crossed the NICs for $bytes sent" ||
        fail "$name: ranks on different hosts: only $moved bytes crossed the NICs for $bytes sent (shared memory between hosts?)"
      # node0 sent the message: its packets average close to a full frame,
      # MTU + 14 bytes (Ethernet header) at most; more is segmentation
      # offload, which the shaper let past the rate.
      local per=none
      [ $((fp1 - fp0)) -gt 0 ] && per=$(( (fb1 - fb0) / (fp1 - fp0) ))
      [ "$per" != none ] && [ "$per" -le $((mtu + 14)) ] &&
        pass "$name: node0's NIC sent $per bytes per packet on average (MTU $mtu): one frame per packet" ||
        fail "$name: node0's NIC sent $per bytes per packet on average, above the MTU $mtu (or none): segmentation offload is on, so messages pass the shaper at the veth's speed"
    else
      [ "$moved" -lt $((bytes / 20)) ] && pass "$name: ranks on one host: $moved bytes on the NICs for $bytes sent (shared memory)" ||
        fail "$name: ranks on one host: $moved bytes crossed the NICs for $bytes sent (no shared memory within a host?)"
    fi
  done
}
if [ -n "$prefix" ]; then
  transports "MPICH module" "$b/tests/cluster/pair_traffic.mpich" "${hydra[@]}"
else
  echo "SKIP: no MPICH module prefix in $b/mpich-prefix (scripts/build-mpich.sh): MPICH parts not run"
fi
command -v mpiexec.openmpi >/dev/null && transports "Open MPI" "$b/tests/cluster/pair_traffic.openmpi" "${ompi[@]}"

# 2. The matrix across hosts: gencoll's algorithms and the MPI's own (the
# fixed-radix baselines are the same schedules at one k: the local matrix
# runs them). Open MPI's runs start slowly across hosts (about 4.6 s each of
# the 151 s its 33 runs took with the baselines).
matrix() {
  if "$top/tests/mpi/run_matrix.sh" "$@" --cluster 2 --procs "2 3 4" --ks "2 3" --timeout 180 > "$tmp/m.out" 2>&1; then
    pass "matrix across hosts ($2): $(grep -o '[0-9]*/[0-9]* runs passed' "$tmp/m.out")"
  else
    fail "matrix across hosts ($2)"; grep -v '^PASS' "$tmp/m.out" | head -n 30
  fi
}
[ -n "$prefix" ] && matrix --mpi gencoll-mpich --mpich-prefix "$prefix" --lib none \
  --bin "$b/tests/mpi/checks.mpich" --programs "coll_check root_check" \
  --algs "knomial recursive_multiplying permuted_recursive_multiplying kring native"
command -v mpiexec.openmpi >/dev/null && matrix --mpi openmpi --lib "$b/openmpi/.libs/libgencoll-pmpi.so" \
  --bin "$b/tests/mpi/checks.openmpi" --programs "coll_check root_check" \
  --algs "knomial recursive_multiplying permuted_recursive_multiplying kring native"

# 3. The debug lines show what ran (4 ranks on 2 hosts, k-ring k=2 allreduce).
debug_line() {  # NAME PATTERN LAUNCH...
  local name=$1 pat=$2; shift 2
  if timeout 120 "$@" > "$tmp/d.out" 2>&1 && grep -Eq "$pat" "$tmp/d.out"; then
    pass "$name: debug line: $(grep -Em1 "$pat" "$tmp/d.out")"
  else
    fail "$name: no debug line matching '$pat'"; tail -n 8 "$tmp/d.out" | sed 's/^/    | /'
  fi
}
if [ -n "$prefix" ]; then
  debug_line "MPICH module" 'allreduce.*p=4.*kring.*k=2' "${hydra[@]}" -n 4 -genv MPIR_CVAR_GENCOLL_DEBUG 1 \
    -genv MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM kring \
    -genv MPIR_CVAR_ALLREDUCE_KRING_KVAL 2 "$b/tests/mpi/coll_check.mpich" -q
fi
if command -v mpiexec.openmpi >/dev/null; then
  debug_line "Open MPI" 'allreduce.*p=4.*kring.*k=2' "${ompi[@]}" -n 4 -x LD_PRELOAD="$b/openmpi/.libs/libgencoll-pmpi.so" \
    -x GENCOLL_DEBUG=1 -x GENCOLL_ALLREDUCE_INTRA_ALGORITHM=kring -x GENCOLL_ALLREDUCE_KRING_KVAL=2 \
    "$b/tests/mpi/coll_check.openmpi" -q
fi

# 3b. MPICH's node-aware composition (smp) from a selection file, both MPIs,
# 2 hosts x 2 ranks: MPICH runs its MPIR_Allreduce_intra_smp and asks the
# file again on its node_roots communicator (gencoll's k-ring among the 2
# leaders); the interposition library and the Open MPI component run the
# same as one gencoll schedule.
# Every root of reduce and bcast through it (root_check).
smp_file=$top/tests/data/smp-select.json
if [ -n "$prefix" ]; then
  debug_line "MPICH module, smp" 'allreduce.*p=2 root=0 algorithm=kring k=2' "${hydra[@]}" -n 4 \
    -genv MPIR_CVAR_GENCOLL_DEBUG 1 -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$smp_file" \
    -genv MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE 0 \
    -genv MPIR_CVAR_BCAST_DEVICE_COLLECTIVE 0 "$b/tests/mpi/coll_check.mpich" -q
  debug_line "MPICH module, smp roots" 'reduce.*p=2 root=1 algorithm=knomial' "${hydra[@]}" -n 4 \
    -genv MPIR_CVAR_GENCOLL_DEBUG 1 -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$smp_file" \
    -genv MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_BCAST_DEVICE_COLLECTIVE 0 \
    "$b/tests/mpi/root_check.mpich" -q
fi
if command -v mpiexec.openmpi >/dev/null; then
  debug_line "Open MPI, smp" 'allreduce.*p=4 root=0 algorithm=smp\+kring k=2' "${ompi[@]}" -n 4 \
    -x LD_PRELOAD="$b/openmpi/.libs/libgencoll-pmpi.so" -x GENCOLL_DEBUG=1 -x GENCOLL_SELECTION_FILE="$smp_file" \
    "$b/tests/mpi/coll_check.openmpi" -q
  debug_line "Open MPI, smp roots" 'reduce.*p=4 root=3 algorithm=smp\+knomial k=2' "${ompi[@]}" -n 4 \
    -x LD_PRELOAD="$b/openmpi/.libs/libgencoll-pmpi.so" -x GENCOLL_DEBUG=1 -x GENCOLL_SELECTION_FILE="$smp_file" \
    "$b/tests/mpi/root_check.openmpi" -q
  if [ -f "$b/ompi-component/component-path" ]; then
    for bin in coll_check root_check; do
      debug_line "Open MPI component, smp ($bin)" 'p=4 root=[0-9] algorithm=smp\+(kring|knomial) k=2' "${ompi[@]}" -n 4 \
        -x OMPI_MCA_mca_base_component_path="$(cat "$b/ompi-component/component-path")" \
        -x OMPI_MCA_coll_gencoll_selection_file="$smp_file" -x OMPI_MCA_coll_gencoll_verbose=1 \
        "$b/tests/mpi/$bin.openmpi" -q
    done
  fi
fi

# 4. The profiler sees the network.
if [ -n "$prefix" ]; then
  if timeout 300 "${hydra[@]}" -n 4 "$b/profiler/gencoll-loggp" --quick --out "$tmp/profile.json" > "$tmp/p.out" 2>&1; then
    # The exchange efficiency: two ranks a host, so measured (its source says
    # so), and within (0, 1] (1 where it is absent).
    levels=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["contention"]
e=c.get("exchange_efficiency", 1)
print(" ".join(l["name"] for l in d["levels"]), c["node_radix"], e if 0 < e <= 1 and "exchange_efficiency T(1)/(T(2) min(1, node_radix/2))" in c["source"] else "bad",
      " ".join(l.get("progress", "none") for l in d["levels"]))' "$tmp/profile.json")
    read -r -a f <<< "$levels"
    # progress: measured between the hosts (each rank on a core of its own);
    # not within one, whose two ranks share its one core here
    if [ "${#f[@]}" = 6 ] && [ "${f[2]}" -ge 1 ] && [ "${f[3]}" != bad ] && [ "${f[4]}" = none ] && [ "${f[5]}" != none ]; then
      pass "gencoll-loggp across 2 hosts: levels ${f[0]} and ${f[1]}, node_radix ${f[2]}, exchange_efficiency ${f[3]}, progress ${f[4]} and ${f[5]}, rendezvous above $(grep -o '"rendezvous_above": [0-9]*' "$tmp/profile.json" | tail -n 1 | grep -o '[0-9]*$') B"
    else
      fail "gencoll-loggp across 2 hosts: expected two levels, a measured node_radix, exchange efficiency and progress, got '$levels'"
    fi
  else
    fail "gencoll-loggp across 2 hosts"; tail -n 12 "$tmp/p.out" | sed 's/^/    | /'
  fi
fi

# 5. nic_share pairs: an exchange between two hosts cannot beat the shaped
# link (262144 B each way at 1 Gbit/s: 2.1 ms, less one 18 kB burst: 1.95 ms;
# unshaped veths take about a tenth of that).
if [ -n "$prefix" ]; then
  args=$(cluster mpiexec-args 1)
  read -r -a hydra1 <<< "$prefix/bin/mpiexec $args -genv LD_LIBRARY_PATH $prefix/lib"
  if timeout 120 "${hydra1[@]}" -n 2 "$b/benchmarks/nic_share.mpich" pairs 262144 3 1 > "$tmp/n.out" 2>&1 &&
     us=$(awk '/^one pair alone:/ { print int($4) }' "$tmp/n.out") && [ -n "$us" ]; then
    [ "$us" -ge 1800 ] && pass "nic_share pairs across 2 hosts: one exchange of 256 KiB each way in $us us (link: 2097 us)" ||
      fail "nic_share pairs across 2 hosts: $us us, faster than the 1 Gbit/s link allows (not shaped?)"
  else
    fail "nic_share pairs did not run"; tail -n 8 "$tmp/n.out" | sed 's/^/    | /'
  fi
fi

# 6. The main job end to end, small (it brings up its own cluster of this id,
# replacing the one above). It reads the build in $top/build.
if [ -n "$prefix" ] && [ "$(cd "$b" && pwd -P)" = "$(cd "$top/build" 2>/dev/null && pwd -P)" ]; then
  if timeout 300 bash "$top/scripts/main-job.sh" --no-build --emulate 2x1 --rate 1gbit --max 16384 --iters 5 \
      --max-time 0.02 --rounds 1 --app-rounds 1 --out "$tmp/mj" > "$tmp/mj.out" 2>&1 &&
     grep -q '^- tuned file vs MPICH default' "$tmp/mj/report.md" &&
     grep -q '^- applications: tuned file vs MPICH default' "$tmp/mj/report.md" &&
     [ "$(grep -c '^default,' "$tmp/mj/apps.csv")" = 3 ] && [ "$(grep -c '^tuned,' "$tmp/mj/apps.csv")" = 3 ] &&
     grep -q 'bound to cores of their own host' "$tmp/mj/machine.txt" &&
     grep -q '^timing: synced (clock offsets to rank 0 up to [0-9.]* us' "$tmp/mj/machine.txt" &&
     grep -q 'TCP retransmitted [0-9]' "$tmp/mj/network.txt"; then
    pass "main-job.sh --emulate 2x1: $(grep -m1 '^- tuned file vs MPICH default' "$tmp/mj/report.md"); three applications run with each"
    # Profile, tune and the applications only: no sweep, apps.md.
    if timeout 300 bash "$top/scripts/main-job.sh" --no-build --emulate 2x1 --rate 1gbit --max 16384 --apps-only \
        --apps cg --app-rounds 1 --out "$tmp/ao" > "$tmp/ao.out" 2>&1 && [ ! -f "$tmp/ao/sweep.csv" ] &&
       grep -q '^| cg | 2 | 256 rows a rank, 1000 us compute | ' "$tmp/ao/apps.md"; then
      pass "main-job.sh --apps-only: profiled, tuned, cg under each selection, no sweep"
    else
      fail "main-job.sh --apps-only"; tail -n 12 "$tmp/ao.out" | sed 's/^/    | /'
    fi
    # Continued to larger sizes in a second sitting: the first run's profile
    # and its measurements below --min, each size measured once.
    rows() { awk -F, -v b="$2" 'NR > 1 && $6 == "allreduce" && $8 == b' "$1" | wc -l; }
    same_rows() {  # SIZE...: as many allreduce rows in mj3 as in mj2 at each
      local b
      for b in "$@"; do [ "$(rows "$tmp/mj3/sweep.csv" "$b")" = "$(rows "$tmp/mj2/sweep.csv" "$b")" ] || return 1; done
    }
    if timeout 300 bash "$top/scripts/main-job.sh" --no-build --emulate 2x1 --rate 1gbit --min 32768 --max 65536 \
        --iters 5 --max-time 0.02 --rounds 1 --apps none --merge "$tmp/mj" --out "$tmp/mj2" > "$tmp/mj2.out" 2>&1 &&
       [ ! -f "$tmp/mj2/profile.log" ] && cmp -s "$tmp/mj/profile.json" "$tmp/mj2/profile.json" &&
       [ "$(rows "$tmp/mj2/sweep.csv" 16384)" = "$(rows "$tmp/mj/sweep.csv" 16384)" ] &&
       [ "$(rows "$tmp/mj2/sweep.csv" 16384)" -gt 0 ] && [ "$(rows "$tmp/mj2/sweep.csv" 65536)" -gt 0 ] &&
       grep -q '^| 8 |' "$tmp/mj2/report.md" && grep -q '^| 65536 |' "$tmp/mj2/report.md"; then
      pass "main-job.sh --merge: 8 B to 16 KiB from the first run, 32-64 KiB measured, one report"
      # --trace (default 4): the configurations farthest from the model at
      # the network-bound sizes (if any here) traced and set beside it.
      n=$(tail -n +2 "$tmp/mj2/model-misses.csv" 2>/dev/null | wc -l)
      if [ ! -f "$tmp/mj2/model-misses.csv" ]; then
        fail "main-job.sh --emulate wrote no model-misses.csv"
      elif [ "$n" -eq 0 ]; then
        pass "main-job.sh --trace: no network-bound sizes at 32-64 KiB here, nothing to trace"
      elif [ "$(grep -l "calls used: measured [0-9.]* us, model" "$tmp"/mj2/trace/*/compare.txt 2>/dev/null | wc -l)" = \
             "$(( n < 4 ? n : 4 ))" ] && ls "$tmp"/mj2/trace/*/traces.tar.gz > /dev/null 2>&1; then
        pass "main-job.sh --trace: the $(( n < 4 ? n : 4 )) worst-predicted configurations traced beside the model"
      else
        fail "main-job.sh --trace: $(cat "$tmp"/mj2/trace/*/compare.txt 2>&1 | head -n 5)"
      fi
      # A gap filled: sizes on both sides kept, the middle measured once,
      # and the tuned file reaching the kept 64 KiB; from a copy whose CSVs
      # are gzipped, as benchmarks/results keeps them.
      cp -r "$tmp/mj2" "$tmp/mj2z"
      for f in sweep.csv tuned-run.csv profile-raw.csv; do [ ! -f "$tmp/mj2z/$f" ] || gzip -n "$tmp/mj2z/$f"; done
      if timeout 300 bash "$top/scripts/main-job.sh" --no-build --emulate 2x1 --rate 1gbit --min 16384 --max 32768 \
          --iters 5 --max-time 0.02 --rounds 1 --apps none --merge "$tmp/mj2z" --out "$tmp/mj3" > "$tmp/mj3.out" 2>&1 &&
         same_rows 8 16384 32768 65536 &&
         awk -F, '$1 == "allreduce" && $3 == 65536 { f = 1 } END { exit !f }' "$tmp/mj3/tuned-picks.csv" &&
         grep -q '^| 8 |' "$tmp/mj3/report.md" && grep -q '^| 65536 |' "$tmp/mj3/report.md"; then
        pass "main-job.sh --merge filling 16-32 KiB from gzipped CSVs: 8 B-8 KiB and 64 KiB kept, tuned to 64 KiB, one report"
      else
        fail "main-job.sh --merge filling a gap"; tail -n 12 "$tmp/mj3.out" | sed 's/^/    | /'
      fi
    else
      fail "main-job.sh --merge"; tail -n 12 "$tmp/mj2.out" | sed 's/^/    | /'
    fi
    if out=$(bash "$top/scripts/main-job.sh" --no-build --emulate 2x1 --min 32768 --max 65536 --merge "$tmp/mj" \
        --out "$tmp/mj" 2>&1); then
      fail "main-job.sh --merge DIR --out DIR ran"
    else
      case $out in *"give another --out"*) pass "main-job.sh --merge DIR --out DIR: refused, naming why" ;;
        *) fail "main-job.sh --merge DIR --out DIR: $out" ;; esac
    fi
  else
    fail "main-job.sh --emulate 2x1"; tail -n 12 "$tmp/mj.out" | sed 's/^/    | /'
  fi
else
  echo "SKIP: main-job.sh reads $top/build, not $b: not run"
fi

# 7. --rps steers a host's receive processing to its last core, and refuses
# a host with no core to spare, naming why (1 host of every core here).
if out=$(cluster up 2 --cpus 1 --rps 2>&1); then
  fail "cluster.sh up --cpus 1 --rps succeeded with no core to spare"
else
  case $out in *"at least 2 cores"*) pass "cluster.sh --rps with one core a host: refused, naming the cores" ;;
    *) fail "cluster.sh --rps with one core a host: $out" ;; esac
fi
# The cores an rps_cpus mask names: comma-separated 32-bit words, the
# lowest last, as many as the kernel's possible CPUs (not those allowed here).
mask_cores() {
  local -a w
  IFS=, read -r -a w <<< "$1"
  local n=${#w[@]} i bit v out=
  for ((i = 0; i < n; i++)); do
    v=$(( 16#${w[n - 1 - i]} ))
    for ((bit = 0; bit < 32; bit++)); do (( v >> bit & 1 )) && out+=${out:+,}$(( i * 32 + bit )); done
  done
  echo "$out"
}
# The cores this test may use, in order (cluster.sh gives them out by index).
mapfile -t allowed < <(cluster cpus)
cores=${#allowed[@]}
if [ "$cores" -ge 2 ] && cluster up 1 --rps > /dev/null 2>&1; then
  last=${allowed[cores - 1]}
  got=$(cluster exec node0 cat /sys/class/net/eth0/queues/rx-0/rps_cpus)
  [ "$(mask_cores "$got")" = "$last" ] && pass "cluster.sh --rps: node0's NIC processed on core $last (mask $got)" ||
    fail "cluster.sh --rps: node0's rps_cpus is $got (cores $(mask_cores "$got")), expected core $last"
  cluster down > /dev/null 2>&1
fi

# 8. Without --rps each host's receive processing is on one core, its first
# (checked on the host's side of its NIC): spread over the cores that send,
# a flow's packets arrive out of order and TCP retransmits them.
if [ "$cores" -ge 2 ] && cluster up 2 --cpus 1 > /dev/null 2>&1; then
  ok=1
  for i in 0 1; do
    host=$(cluster exec node$i cat /sys/class/net/eth0/queues/rx-0/rps_cpus)
    [ "$(mask_cores "$host")" = "${allowed[i]}" ] ||
      { ok=0; fail "cluster.sh up: node$i's eth0 rps_cpus is $host, expected core ${allowed[i]}"; }
  done
  [ "$ok" = 0 ] || pass "cluster.sh up: each host's receive processing on its first core (cores ${allowed[0]}, ${allowed[1]})"
  cluster down > /dev/null 2>&1
fi

# 9. A failing `up` removes what it made: tc fails on its fifth call here
# (shaping the first host, inside a function, where an ERR trap did not
# reach and the bridge and first host stayed). And what `up` would refuse,
# `check` refuses before anything is made.
mkdir -p "$tmp/faketc"
cat > "$tmp/faketc/tc" <<EOF_TC
#!/bin/sh
n=\$(( \$(cat "$tmp/faketc/calls" 2>/dev/null || echo 0) + 1 ))
echo \$n > "$tmp/faketc/calls"
[ \$n -lt 5 ] || { echo "tc: injected failure" >&2; exit 1; }
exec $(command -v tc) "\$@"
EOF_TC
chmod +x "$tmp/faketc/tc"
if out=$(PATH=$tmp/faketc:$PATH cluster up 2 2>&1); then
  fail "cluster.sh up with a failing tc succeeded"
elif ip link show "gcbr$GENCOLL_CLUSTER_ID" > /dev/null 2>&1 || ip netns list | grep -q "^gc$GENCOLL_CLUSTER_ID-node" ||
     [ -e "/run/gencoll-cluster-$GENCOLL_CLUSTER_ID" ]; then
  fail "cluster.sh up with a failing tc left its bridge, hosts or state behind: $(ip netns list | tr '\n' ' ')"
else
  case $out in *"injected failure"*"cleaning up"*) pass "cluster.sh up with a failing tc: failed, cleaned up, said so" ;;
    *) fail "cluster.sh up with a failing tc: $out" ;; esac
fi
refused() {  # WANT ARGS...: cluster.sh ARGS fails naming WANT
  local want=$1 out; shift
  if out=$("$@" 2>&1); then fail "accepted: ${*: -4}"
  else case $out in *"$want"*) pass "refused: ${*: -4} (${out#cluster.sh: })" ;; *) fail "for ${*: -4}: $out" ;; esac; fi
}
refused "expected a tc rate of at least 8kbit" cluster check 2 --rate 0bit
refused "expected a tc rate" cluster check 2 --rate 1.gbit
refused "--burst 18 kb: expected a tc size" cluster check 2 --burst "18 kb"
refused "--limit lots: expected a tc size" cluster check 2 --limit lots
refused "expected an integer from 0 to 255" env GENCOLL_CLUSTER_ID=007 bash "$top/scripts/cluster.sh" status
refused "no cluster is up" env GENCOLL_CLUSTER_ID=202 bash "$top/scripts/cluster.sh" mpiexec-args 2
refused "ranks per host must be a positive integer" env GENCOLL_CLUSTER_ID=202 bash "$top/scripts/cluster.sh" mpirun-args ../x
cluster check 2 --rate 100mbit --burst 18kb --limit 1mb && pass "cluster.sh check 2 --rate 100mbit: accepted" ||
  fail "cluster.sh check 2 --rate 100mbit refused"

echo "cluster_check: $fails failure(s)"
[ "$fails" = 0 ]

#!/usr/bin/env bash
# An emulated cluster on one machine: N hosts, each a set of Linux namespaces
# (network, hostname, IPC, mount with its own /dev/shm, PID with its own /proc),
# whose only connection is a shaped NIC: a veth pair into one bridge, rate-
# limited in both directions (htb on the host's side limits what it sends, htb
# on the bridge's side what it receives, each with one queue per peer host),
# one frame per packet as a NIC puts them on the wire (no segmentation
# offload, which let whole 64 KB messages past the rate).
# Ranks on one host share memory; ranks
# on different hosts can only use the network, as on a real cluster.
#
# usage: cluster.sh up N [--rate R] [--burst B] [--limit L] [--mtu M] [--cpus C]
#        cluster.sh check N [options]        what `up N [options]` would refuse, making nothing
#        cluster.sh down
#        cluster.sh status
#        cluster.sh exec HOST CMD...         run CMD on HOST (node0, 198.18.0.1, ...)
#        cluster.sh hostfile [R]             one line per host, R slots each (default 1)
#        cluster.sh mpiexec-args [R]         hydra's options for R ranks per host
#        cluster.sh mpirun-args [R]          Open MPI's options for R ranks per host
#        cluster.sh binder                   the program that binds a rank to one core
#                                            of its host (put it before the rank's program)
#        cluster.sh nic-bytes                bytes each host's NIC sent and received
#        cluster.sh cpus                     the cores hosts are given, in order, one a line
#        cluster.sh agent [-opts] HOST CMD   what the launchers call in place of ssh
#
#   --rate R   each NIC's rate in each direction, tc syntax (default 1gbit)
#   --burst B  token-bucket depth (default 2 MTUs: after an idle link the
#              first frame of a message leaves at once, the rest are paced at
#              the rate; tc syntax, e.g. 18kb)
#   --limit L  bytes a NIC queues before dropping (default 8mb: switch-like
#              buffers, so that TCP backs off without losses)
#   --mtu M    MTU of the NICs (default 9000, jumbo frames as in HPC Ethernet,
#              down to 72 Mbit/s; 1500 below, where a 9000-byte frame would
#              take over a millisecond of the link: at 10 Mbit/s 8 x 1's
#              allgathers spread 1.20x with 9000, 1.04x with 1500). Frames are
#              the emulator's work, done by the machine's cores: four hosts
#              each sending a message to the next at once took 1.10x one
#              message at 100 Mbit/s with 1500 on two cores (1.00x with 9000)
#              and 1.17-1.26x at 1 Gbit/s with 1500 on the H200 machine's 16
#              (1.01x with 9000); `up` says so from 15,000 frames a second
#              per core (hosts x rate / 8 MTU / cores)
#   --cpus C   cores of each host: host i runs on the i-th C of the cores this
#              process may use (cores i*C .. i*C+C-1 on a whole machine), so that
#              hosts do not share cores and binding within a host works as on
#              a real node (default: cores / N when there are at least N
#              cores, else 0: every host on every core)
#   --rps      the kernel's receive processing of each host's NIC (veth,
#              bridge, qdiscs and TCP run in softirqs) on the host's last
#              core, which the binder leaves free when the host runs fewer
#              ranks than it has cores: what a real NIC does in hardware then
#              no longer competes with ranks spinning in their progress loop
#              (needs --cpus of at least 2). Without it, on the host's first
#              core: always on one core, so that a flow's packets stay in
#              order as on a real NIC
#
# Binding: the launchers' own binding (hydra's -bind-to core, Open MPI's
# --bind-to core) does not see a host's cores: their hwloc reads the whole
# machine, so local rank r of every host is bound to core r and the hosts'
# ranks share the first cores (measured: 2 hosts of one rank, each on its own
# core by taskset, both bound to core 0 by hydra; an 8-byte round trip took
# 8 ms instead of 30 us). Launch without it, and put the program `binder`
# prints before the rank's program:
#   mpiexec $(cluster.sh mpiexec-args 2) -n 8 $(cluster.sh binder) ./app
# It binds local rank r to the r-th core of its host (modulo the host's cores).
#
# Host i is nodeI (hostname and /etc/hosts entry inside the cluster) at
# 198.18.C.(i+1); the launching node (where mpiexec runs) is 198.18.C.254 on
# the bridge gcbrC, where C is $GENCOLL_CLUSTER_ID (0..255, default 0), so that
# clusters of different ids (a test's beside a user's) coexist. Addresses come
# only from 198.18.0.0/15, the range RFC 2544 reserves for benchmarking
# network devices; no host has a route out. Needs root (namespaces and
# qdiscs); `up` on a running cluster replaces it, `down` removes everything
# `up` made, and a failing `up` cleans up after itself. State lives in
# /run/gencoll-cluster-C.
set -euo pipefail
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
id=${GENCOLL_CLUSTER_ID:-0}
die() { echo "cluster.sh: $*" >&2; exit 1; }
# No leading zeros: the id names the bridge and the state directory, and
# 007 and 7 would be two names for one address range.
[[ $id =~ ^(0|[1-9][0-9]{0,2})$ ]] && [ "$id" -le 255 ] || die "GENCOLL_CLUSTER_ID=$id: expected an integer from 0 to 255"
state=/run/gencoll-cluster-$id
bridge=gcbr$id net=198.18.$id head=198.18.$id.254 nsprefix=gc$id-node vprefix=gc${id}v
# The header above, to its last comment line.
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$self"; }

need_root() {
  [ "$(id -u)" = 0 ] || die "needs root: it creates network, UTS, IPC, mount and PID namespaces and qdiscs (run as root, or in a container with CAP_SYS_ADMIN and CAP_NET_ADMIN)"
  local t
  for t in ip tc unshare nsenter setsid; do
    command -v "$t" >/dev/null || die "needs '$t' (Debian: iproute2, util-linux)"
  done
}

# The cores this process may run on (a container's or cgroup's cpuset need
# not start at 0 nor be contiguous), in order; hosts get them by index.
allowed_cpus() {
  local list part a b
  list=$(awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status)
  [ -n "$list" ] || list=0-$(( $(nproc) - 1 ))
  for part in ${list//,/ }; do
    if [[ $part =~ ^([0-9]+)-([0-9]+)$ ]]; then
      for ((a = BASH_REMATCH[1], b = BASH_REMATCH[2]; a <= b; a++)); do echo "$a"; done
    else echo "$part"; fi
  done
}

nhosts() { [ -f "$state/hosts" ] && wc -l < "$state/hosts" || echo 0; }

# HOST as a name or an address -> its line in $state/hosts: "name addr pid cpus".
host_line() {
  [ -f "$state/hosts" ] || die "no cluster is up (cluster.sh up N)"
  local line
  line=$(awk -v h="$1" '$1 == h || $2 == h' "$state/hosts")
  [ -n "$line" ] || die "no host '$1' in the cluster (hosts: $(awk '{print $1}' "$state/hosts" | paste -sd' '))"
  echo "$line"
}

enter() {  # LINE CMD...: CMD in every namespace of the host of LINE, on its cores
  local name addr pid cpus
  read -r name addr pid cpus <<< "$1"; shift
  if [ -n "$cpus" ] && [ "$cpus" != all ]; then
    exec taskset -c "$cpus" nsenter -t "$pid" --net --uts --ipc --mount --pid -- "$@"
  fi
  exec nsenter -t "$pid" --net --uts --ipc --mount --pid -- "$@"
}

down() {
  local n i pid
  if [ -f "$state/hosts" ]; then
    while read -r _ _ pid _; do
      [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
    done < "$state/hosts"
  fi
  # Everything that matches our names, also what a half-finished `up` left.
  for n in $(ip netns list 2>/dev/null | awk -v p="$nsprefix" 'index($1, p) == 1 && substr($1, length(p) + 1) ~ /^[0-9]+$/ {print $1}'); do
    # Whatever still runs in the host (a holder of an earlier state dir, ranks).
    for pid in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    ip netns del "$n" 2>/dev/null || true
  done
  for i in $(ip -o link show 2>/dev/null | awk -F': ' '{sub(/@.*/, "", $2); print $2}' | grep -E "^$vprefix[0-9]+\$" || true); do
    ip link del "$i" 2>/dev/null || true
  done
  ip link del "$bridge" 2>/dev/null || true
  rm -rf "$state"
}

# rps_mask CORE: the rps_cpus mask of one core (comma-separated 32-bit words).
rps_mask() {
  local core=$1 words=() w
  for ((w = 0; w <= core / 32; w++)); do
    if [ "$w" = $(( core / 32 )) ]; then words=("$(printf %x $(( 1 << (core % 32) )))" "${words[@]}")
    else words=(00000000 "${words[@]}"); fi
  done
  local IFS=,
  echo "${words[*]}"
}

# rate_bits R: a tc rate (1gbit, 100mbit, 125mbps: bytes) in bits a second.
rate_bits() {
  awk -v r="$1" 'BEGIN {
    match(r, /^[0-9.]+/); n = substr(r, 1, RLENGTH) + 0; u = substr(r, RLENGTH + 1)
    m = 1; p = substr(u, 1, 1)
    if (p == "k") m = 1e3; else if (p == "m") m = 1e6; else if (p == "g") m = 1e9; else if (p == "t") m = 1e12
    if (u ~ /bps$/) m *= 8
    printf "%.0f", n * m }'
}

# shape_nic PREFIX DEV dst|src N SELF: DEV's egress limited to $rate, with one
# queue per peer host (and one for the launching node) served round robin one
# MTU at a time. A real NIC arbitrates between its queue pairs packet by
# packet, so a handshake or an ACK to one peer never waits behind megabytes
# queued for another; one FIFO (a bare tbf) made every exchange that sends
# and receives at once wait for the queue to drain at each step (measured:
# ring and Rabenseifner allreduces at 1.6-2x the links' time, trees at 1.0x).
shape_nic() {
  local -a pre
  read -r -a pre <<< "$1"
  local dev=$2 key=$3 n=$4 me=$5 j id
  "${pre[@]}" tc qdisc replace dev "$dev" root handle 1: htb default ff
  "${pre[@]}" tc class add dev "$dev" parent 1: classid 1:100 htb rate "$rate" ceil "$rate" burst "$burst" cburst "$burst" quantum "$mtu"
  # Every class borrows all it sends from the parent: equal quanta give equal
  # shares. Class ff takes what is not IP to a known address (ARP).
  for j in $(seq 1 "$n") 254 default; do
    [ "$j" = "$me" ] && continue
    id=ff; [ "$j" = default ] || id=$(printf %x "$j")
    "${pre[@]}" tc class add dev "$dev" parent 1:100 classid "1:$id" htb rate 8kbit ceil "$rate" \
      burst "$burst" cburst "$burst" quantum "$mtu"
    "${pre[@]}" tc qdisc add dev "$dev" parent "1:$id" bfifo limit "$limit"
    [ "$j" = default ] || "${pre[@]}" tc filter add dev "$dev" parent 1: protocol ip prio 1 \
      u32 match ip "$key" "$net.$j/32" flowid "1:$id"
  done
}

# up_args N [options]: the settings of `up` (and `check`) in the globals n,
# rate, burst, limit, mtu, cpus, rps, bits, cores and cpu_ids, every one
# checked before anything is made.
up_args() {
  n=${1:-} rate=1gbit burst= limit=8mb mtu= cpus= rps=0
  [[ $n =~ ^[1-9][0-9]*$ ]] && [ "$n" -le 253 ] || die "up N: N must be an integer from 1 to 253 (got '${n}')"
  shift
  while [ $# -gt 0 ]; do
    case $1 in
      --rate) rate=${2:?--rate needs a value}; shift 2 ;;
      --burst) burst=${2:?--burst needs a value}; shift 2 ;;
      --limit) limit=${2:?--limit needs a value}; shift 2 ;;
      --mtu) mtu=${2:?--mtu needs a value}; shift 2 ;;
      --cpus) cpus=${2:?--cpus needs a value}; shift 2 ;;
      --rps) rps=1; shift ;;
      *) die "up: unknown option '$1' (expected --rate R, --burst B, --limit L, --mtu M, --cpus C, --rps)" ;;
    esac
  done
  [[ $rate =~ ^[0-9]+(\.[0-9]+)?[kmgt]?(bit|bps)$ ]] && [ "$(rate_bits "$rate")" -ge 8000 ] ||
    die "--rate $rate: expected a tc rate of at least 8kbit such as 1gbit, 100mbit, 10gbit (or bytes: 125mbps)"
  bits=$(rate_bits "$rate")
  # tc's sizes: bytes, or with a unit (k, kb, m, mb, g, gb; kbit, mbit, gbit).
  local size='^[1-9][0-9]*([kmg]?b|[kmg]|[kmg]?bit)?$'
  [ -z "$burst" ] || [[ $burst =~ $size ]] || die "--burst $burst: expected a tc size such as 3000b, 18kb, 64k"
  [[ $limit =~ $size ]] || die "--limit $limit: expected a tc size such as 8mb, 512kb"
  [ -n "$mtu" ] || mtu=$(awk -v b="$bits" 'BEGIN { print (b >= 72e6 ? 9000 : 1500) }')
  [[ $mtu =~ ^[0-9]+$ ]] && [ "$mtu" -ge 1280 ] && [ "$mtu" -le 65000 ] || die "--mtu $mtu: expected an integer from 1280 to 65000"
  local fpc
  mapfile -t cpu_ids < <(allowed_cpus)
  cores=${#cpu_ids[@]}
  fpc=$(awk -v n="$n" -v b="$bits" -v m="$mtu" -v c="$cores" 'BEGIN { printf "%d", n * b / (8 * m) / c }')
  [ "$fpc" -lt 15000 ] || echo "cluster.sh: $n NICs at $rate with MTU $mtu carry up to $fpc frames a second each way" \
    "per core here; from about 15,000 the emulator's cores, not the links, set the pace (docs/measurements.md," \
    "'Frames are the emulator's work'); a larger --mtu carries fewer" >&2
  burst=${burst:-$(( 2 * mtu ))b}
  [ -n "$cpus" ] || cpus=$(( cores >= n ? cores / n : 0 ))
  [[ $cpus =~ ^[0-9]+$ ]] && [ $(( cpus * n )) -le "$cores" ] ||
    die "--cpus $cpus: $n hosts x $cpus cores exceed the $cores cores here (0: every host on every core)"
  [ "$cpus" = 0 ] || command -v taskset >/dev/null || die "--cpus needs taskset (util-linux)"
  if [ "$rps" = 1 ]; then
    [ "$cpus" -ge 2 ] || die "--rps: each host needs at least 2 cores (--cpus $cpus), one of them left to the NIC"
    [ -e /sys/class/net/lo/queues/rx-0/rps_cpus ] || die "--rps: this kernel has no receive packet steering (CONFIG_RPS)"
  fi
}

up() {
  local n rate burst limit mtu cpus rps bits cores
  local -a cpu_ids
  up_args "$@"
  need_root
  down
  # Whatever stops `up` before the end (a failing command under set -e, a
  # die, a signal) removes what it made. An ERR trap would not do: functions
  # do not inherit it, and a failing tc in shape_nic left the bridge.
  trap 'echo "cluster.sh: up failed; cleaning up" >&2; down' EXIT
  trap 'exit 130' INT TERM
  mkdir -p "$state"
  ip link add "$bridge" type bridge
  ip link set "$bridge" mtu "$mtu"
  ip addr add "$head/24" dev "$bridge"
  ip link set "$bridge" up
  { echo "127.0.0.1 localhost"; echo "$head head"
    for ((i = 0; i < n; i++)); do echo "$net.$((i + 1)) node$i"; done; } > "$state/etc-hosts"
  : > "$state/hosts"
  for ((i = 0; i < n; i++)); do
    local ns=$nsprefix$i v=$vprefix$i addr=$net.$((i + 1))
    ip netns add "$ns"
    ip link add "$v" mtu "$mtu" type veth peer name eth0 mtu "$mtu" netns "$ns"
    # One frame per packet on both ends (no segmentation offload): htb sends
    # a packet while its bucket is not empty and charges it afterwards, so a
    # 64 KB offload packet left at once, at the veth's speed, and the next
    # message paid for it. Measured on 2 hosts x 1 rank at 1 Gbit/s
    # (2026-11-26): MPICH's allreduce of 16 KiB, timed after a barrier, took
    # 22 us where its link time is 131 (the barrier paid the rest); with one
    # frame per packet 77 us (the first frame rides the bucket), 1 MiB 3-7 %
    # slower (more packets through this machine's stack;
    # benchmarks/results/2026-11-26-emu2x1-1gbit-fixed-radix-no-offload).
    ip link set "$v" gso_max_segs 1
    ip -n "$ns" link set eth0 gso_max_segs 1
    # A kernel that takes the setting and ignores it would pass offload
    # packets again: read it back.
    [ "$(ip -d link show "$v" | grep -o 'gso_max_segs [0-9]*')" = "gso_max_segs 1" ] &&
      [ "$(ip -n "$ns" -d link show eth0 | grep -o 'gso_max_segs [0-9]*')" = "gso_max_segs 1" ] ||
      die "this kernel does not limit $v to one frame per packet (ip link set ... gso_max_segs 1): its shaper would let offload packets past the rate"
    ip link set "$v" master "$bridge"
    ip link set "$v" up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    # Send rate on the host's side (one queue per destination), receive
    # rate on the bridge's side (one queue per source).
    shape_nic "ip netns exec $ns" eth0 dst "$n" "$((i + 1))"
    shape_nic "" "$v" src "$n" "$((i + 1))"
    # What host i sends enters the bridge through $v, what it receives
    # arrives on its eth0: each is processed on one core. Left to itself,
    # a veth queues a packet on whichever core sent it or ran the shaper's
    # timer, the cores' backlogs run in parallel and packets of one flow
    # arrive out of order, which TCP takes for loss (fast retransmissions
    # with no drop, 2026-11-27); a real NIC keeps a flow in order. The
    # host's first core, or with --rps its last (left free of ranks); with
    # hosts on every core, core i modulo the cores.
    if [ -e "/sys/class/net/$v/queues/rx-0/rps_cpus" ]; then
      local core mask
      if [ "$cpus" = 0 ]; then core=${cpu_ids[i % cores]}
      elif [ "$rps" = 1 ]; then core=${cpu_ids[i * cpus + cpus - 1]}
      else core=${cpu_ids[i * cpus]}; fi
      mask=$(rps_mask "$core")
      echo "$mask" > "/sys/class/net/$v/queues/rx-0/rps_cpus"
      ip netns exec "$ns" sh -c "echo $mask > /sys/class/net/eth0/queues/rx-0/rps_cpus"
    fi
    # The holder keeps the host's other namespaces alive; setsid so that it
    # outlives this script. /proc and /dev/shm of its own: UCX finds peers'
    # shared memory through /proc/PID/fd and /dev/shm, which must not reach
    # across hosts.
    setsid ip netns exec "$ns" unshare --uts --ipc --mount --pid --fork --mount-proc --propagation private \
      sh -c "hostname node$i && mount -t tmpfs -o mode=1777 tmpfs /dev/shm && mount --bind '$state/etc-hosts' /etc/hosts && touch '$state/ready$i' && exec sleep infinity" \
      < /dev/null > "$state/holder$i.log" 2>&1 &
    # Ready once it wrote its file and its shell became `sleep` (until the
    # exec, the namespace's process is still sh).
    local waited=0 pid=
    until [ -f "$state/ready$i" ] && [ -n "$pid" ]; do
      sleep 0.05; waited=$((waited + 1))
      [ $waited -lt 200 ] || die "host node$i did not start: $(cat "$state/holder$i.log")"
      [ -f "$state/ready$i" ] || continue
      pid=$(ip netns pids "$ns" | while read -r p; do
              if [ "$(cat /proc/"$p"/comm 2>/dev/null)" = sleep ]; then echo "$p"; fi
            done | head -n 1)
    done
    local mine=all
    if [ "$cpus" != 0 ]; then
      mine=${cpu_ids[*]:i * cpus:cpus}
      mine=${mine// /,}
    fi
    echo "node$i $addr $pid $mine" >> "$state/hosts"
  done
  echo "$rate $burst $limit $mtu $rps" > "$state/shape"
  # The launchers' ssh: hydra's -launcher-exec and Open MPI's plm_rsh_agent
  # take a program, not a command line.
  printf '#!/bin/sh\nGENCOLL_CLUSTER_ID=%s exec bash %q agent "$@"\n' "$id" "$self" > "$state/agent"
  chmod +x "$state/agent"
  printf '#!/bin/sh\nGENCOLL_CLUSTER_ID=%s exec bash %q bind "$@"\n' "$id" "$self" > "$state/bind"
  chmod +x "$state/bind"
  # Every host reaches every other one.
  for ((i = 1; i < n; i++)); do
    # No ping on a bare machine: a TCP connection to a closed port of node0
    # is refused at once when the network works, and times out when not.
    local err
    err=$(nsenter -t "$(awk -v h="node$i" '$1 == h {print $3}' "$state/hosts")" --net -- \
      timeout 3 bash -c "exec 3<>/dev/tcp/$net.1/9" 2>&1 || true)
    case $err in *refused*) ;; *) die "node$i cannot reach node0 (${err:-no answer})" ;; esac
  done
  trap - EXIT INT TERM
  echo "cluster.sh: $n hosts up (node0..node$((n - 1)) at $net.1..$net.$n), NICs at $rate each way, MTU $mtu, burst $burst, queue $limit, $([ "$cpus" = 0 ] && echo "sharing all $cores cores" || echo "$cpus core(s) each")" >&2
}

# The first "dropped" count of `tc -s qdisc show` on standard input.
qdisc_drops() { awk '/dropped/ { gsub(",", ""); print $7; exit }'; }

# FILE GROUP NAME: a counter of /proc/PID/net/{snmp,netstat}, whose groups
# are a line of names followed by a line of values.
net_counter() {
  awk -v g="$2:" -v n="$3" '$1 == g { if (!c) { for (f = 2; f <= NF; f++) if ($f == n) c = f } else { print $c; exit } }' \
    "$1" 2>/dev/null
}

status() {
  if [ ! -f "$state/hosts" ]; then echo "no cluster is up"; return 0; fi
  read -r rate burst limit mtu rps < "$state/shape"
  echo "$(nhosts) hosts, NICs at $rate each way (burst $burst, queue $limit, MTU $mtu$([ "${rps:-0}" = 1 ] && echo ", receive processing on each host's last core")), launching node $head on $bridge"
  local name addr pid cpus
  while read -r name addr pid cpus; do
    local alive=down
    # Not kill -0: a user who may not signal root's holder can still see it.
    [ -d "/proc/$pid" ] && alive=up
    local i=${name#node}
    local drops txdrops=? retrans=? timeouts=?
    drops=$(tc -s qdisc show dev "$vprefix$i" | qdisc_drops)
    # The host's own side: its send shaper's drops and its TCP's
    # retransmissions and retransmission timeouts, which tell a slow
    # collective that lost packets from one that only waited.
    if [ "$alive" = up ]; then
      # Root's to read; others get "?".
      txdrops=$(nsenter -t "$pid" --net tc -s qdisc show dev eth0 2>/dev/null | qdisc_drops) || true
      retrans=$(net_counter "/proc/$pid/net/snmp" Tcp RetransSegs) || true
      timeouts=$(net_counter "/proc/$pid/net/netstat" TcpExt TCPTimeouts) || true
    fi
    printf '%-7s %-14s %-4s holder %-7s cores %-6s rx %s tx %s bytes, rx drops %s, tx drops %s, TCP retransmitted %s, timeouts %s\n' \
      "$name" "$addr" "$alive" "$pid" "$cpus" \
      "$(cat /sys/class/net/"$vprefix$i"/statistics/tx_bytes)" "$(cat /sys/class/net/"$vprefix$i"/statistics/rx_bytes)" "${drops:-?}" \
      "${txdrops:-?}" "${retrans:-?}" "${timeouts:-?}"
  done < "$state/hosts"
}

# Bytes per host as the bridge's side of its veth counts them (tx there is
# what the host received).
nic_bytes() {
  [ -f "$state/hosts" ] || die "no cluster is up (cluster.sh up N)"
  local name i
  while read -r name _ _; do
    i=${name#node}
    echo "$name $(cat /sys/class/net/"$vprefix$i"/statistics/rx_bytes) $(cat /sys/class/net/"$vprefix$i"/statistics/tx_bytes)"
  done < "$state/hosts"
}

# bind CMD...: run CMD bound to one core of this host, chosen by the local
# rank the launcher exports. The host's cores are those `up` recorded for it
# in $state/hosts (the ones the agent's taskset gives it); where hosts share
# every core (--cpus 0) nothing is bound, since one host's core r is every
# host's.
bind_rank() {
  [ $# -ge 1 ] || die "bind CMD...: a command to run bound"
  local lr=${MPI_LOCALRANKID:-${OMPI_COMM_WORLD_LOCAL_RANK:-${SLURM_LOCALID:-}}}
  [[ $lr =~ ^[0-9]+$ ]] ||
    die "bind: no local rank in the environment (hydra exports MPI_LOCALRANKID, Open MPI OMPI_COMM_WORLD_LOCAL_RANK)"
  local name cpus="" h
  name=$(hostname)
  [ -f "$state/hosts" ] && read -r _ _ _ cpus <<< "$(awk -v h="$name" '$1 == h' "$state/hosts")"
  [ -n "$cpus" ] || die "bind: $name is not a host of cluster $id (run it through the cluster's launcher)"
  [ "$cpus" = all ] && exec "$@"
  local -a cores=()
  local part
  for part in ${cpus//,/ }; do
    if [[ $part =~ ^([0-9]+)-([0-9]+)$ ]]; then
      for ((h = BASH_REMATCH[1]; h <= BASH_REMATCH[2]; h++)); do cores+=("$h"); done
    else cores+=("$part"); fi
  done
  exec taskset -c "${cores[lr % ${#cores[@]}]}" "$@"
}

hostfile() {
  local r=${1:-1}
  [[ $r =~ ^[1-9][0-9]*$ ]] || die "ranks per host must be a positive integer (got '$r')"
  [ -f "$state/hosts" ] || die "no cluster is up (cluster.sh up N)"
  awk -v r="$r" -v f="${2:-hydra}" '{ if (f == "hydra") print $2 ":" r; else print $2 " slots=" r }' "$state/hosts"
}

case ${1:-} in
  up) shift; up "$@" ;;
  check)
    # What `up` would refuse, before a caller spends minutes on a build.
    shift; up_args "$@"; need_root ;;
  down) need_root; down; echo "cluster.sh: down" >&2 ;;
  status) status ;;
  exec)
    [ $# -ge 3 ] || die "exec HOST CMD...: a host and a command"
    line=$(host_line "$2"); shift 2
    enter "$line" "$@" ;;
  agent)
    # As ssh is called: options, a host, then words joined into one shell command.
    shift
    while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
    [ $# -ge 2 ] || die "agent: expected [-options] HOST COMMAND..."
    line=$(host_line "$1"); shift
    enter "$line" sh -c "$*" ;;
  hostfile) shift; hostfile "${1:-1}" hydra ;;
  bind) shift; bind_rank "$@" ;;
  binder) [ -x "$state/bind" ] || die "no cluster is up (cluster.sh up N)"; echo "$state/bind" ;;
  mpiexec-args)
    # Checked (a cluster up, R a count) before the file's name uses R.
    hosts=$(hostfile "${2:-1}" hydra)
    echo "$hosts" > "$state/hostfile-hydra-${2:-1}"
    echo "-f $state/hostfile-hydra-${2:-1} -launcher ssh -launcher-exec $state/agent -iface $bridge" ;;
  mpirun-args)
    hosts=$(hostfile "${2:-1}" openmpi)
    echo "$hosts" > "$state/hostfile-openmpi-${2:-1}"
    echo "--hostfile $state/hostfile-openmpi-${2:-1} --mca plm_rsh_agent $state/agent --mca oob_tcp_if_include $net.0/24 --mca btl_tcp_if_include $net.0/24 --bind-to none" ;;
  nic-bytes) nic_bytes ;;
  cpus) allowed_cpus ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac

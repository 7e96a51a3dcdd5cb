#!/usr/bin/env python3
"""Writes an MPICH selection file that runs one node-aware composition at every
size: MPIR_<Coll>_intra_smp for the collective, the given gencoll algorithm and
radix on MPICH's node_roots communicator (the nodes' leaders) and MPICH's
binomial reduce and bcast on its node communicators, as gencoll-tune writes
them. scripts/main-job.sh measures each composition the tuned file chose this
way, as configuration "smp+ALG:K". Python standard library only.

usage: smp_select.py COLLECTIVE ALGORITHM K   (COLLECTIVE: allreduce, reduce or bcast)
"""
import json
import sys

INTER = {"allreduce": "MPIR_Allreduce_inter_reduce_exchange_bcast",
         "reduce": "MPIR_Reduce_inter_local_reduce_remote_send",
         "bcast": "MPIR_Bcast_inter_remote_send_local_bcast"}


def tree(coll, intra):
    return {"comm_type=intra": intra, "comm_type=inter": {"algorithm=" + INTER[coll]: {}}}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in INTER:
        sys.exit(__doc__.strip())
    coll, alg, k = sys.argv[1], sys.argv[2], sys.argv[3]
    if not k.isdigit() or int(k) < 2:
        sys.exit("smp_select.py: K = %r: expected an integer >= 2" % k)
    cap = coll.capitalize()
    leaf = {"algorithm=MPIR_%s_intra_%s" % (cap, alg): {"k=" + k: {}}}
    # MPICH's smp computes nothing where every process is alone on its node
    # (no "parent" hierarchy): the same algorithm flat there.
    out = {"collective=" + coll: tree(coll, {"comm_hierarchy=node_roots": leaf, "comm_size=any": {
        "comm_hierarchy=parent": {"algorithm=MPIR_%s_intra_smp" % cap: {}}, "comm_hierarchy=any": leaf}})}
    # The compositions' reduce and bcast within a node (allreduce uses both).
    for c in ("reduce", "bcast"):
        node = {"comm_hierarchy=node": {"algorithm=MPIR_%s_intra_binomial" % c.capitalize(): {}}}
        if c == coll:
            out["collective=" + c]["comm_type=intra"] = dict(node, **out["collective=" + c]["comm_type=intra"])
        elif coll == "allreduce":
            out["collective=" + c] = tree(c, dict(node, **{"comm_size=any": {
                "algorithm=MPIR_%s_intra_binomial" % c.capitalize(): {}}}))
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


main()

#!/usr/bin/env python3
"""Evaluates a csel selection file for one call, the way MPICH's csel walks it,
for the keys gencoll-tune writes (collective, comm_type, comm_hierarchy,
comm_size, avg_msg_size, is_commutative and their =any forms), asked for a
user's communicator (never MPICH's internal node or node_roots ones). Prints
"algorithm k" (k empty if none), k as the bindings run and report it: a radix
above the communicator's size is every rank, k = p (gencoll-tune writes ring
past the sizes it tuned as the largest radix).

usage: select.py FILE COLLECTIVE COMM_SIZE BYTES [commutative|noncommutative]
"""
import json
import re
import sys


def holds(key, coll, p, nbytes, commutative):
    m = re.fullmatch(r'(\w+)(<=|<|=)(.*)', key)
    if not m:
        raise SystemExit("select.py: cannot read key %r" % key)
    name, op, val = m.groups()
    if op == '=' and val == 'any':
        return True
    if name == 'collective':
        return val == coll
    if name == 'comm_type':
        return val == 'intra'
    if name == 'comm_hierarchy':
        return val not in ('node', 'node_roots')
    if name == 'is_commutative':
        return (val == 'yes') == commutative
    x = {'comm_size': p, 'avg_msg_size': nbytes}.get(name)
    if x is None:
        raise SystemExit("select.py: key %r is not one gencoll-tune writes" % key)
    return x <= int(val) if op == '<=' else x < int(val)


def select(tree, coll, p, nbytes, commutative):
    while True:
        for key, sub in tree.items():
            if key.startswith('algorithm='):
                ks = [k[2:] for k in sub if k.startswith('k=')]
                return key[len('algorithm='):], (str(min(int(ks[0]), p)) if ks else '')
            if holds(key, coll, p, nbytes, commutative):
                tree = sub
                break
        else:
            return None, ''


def main():
    f, coll, p, nbytes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    commutative = len(sys.argv) < 6 or sys.argv[5] == 'commutative'
    alg, k = select(json.load(open(f)), coll, p, nbytes, commutative)
    if alg is None:
        raise SystemExit("select.py: no algorithm for %s p=%d %d bytes" % (coll, p, nbytes))
    print(alg, k)


main()

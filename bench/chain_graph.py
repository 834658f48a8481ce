#!/usr/bin/env python3
"""Writes the synthetic chain the whole-process figures of bench/README.md use, as anec-graph JSON.

usage: bench/chain_graph.py OPS FILE

Op i is a 3x3 conv of 64 channels (i % 3 == 0), a relu (1) or an add of the last two tensors (2) on a
1x64x56x56 input; every seventh (i % 7 == 6) is `tan`, a host op, so the placement has a partition
every 3.5 ops. One tensor an op; about 105 bytes of JSON an op.
"""
import sys


def op_text(i):
    kind = "tan" if i % 7 == 6 else ("conv", "relu", "add")[i % 3]
    inputs = f'"t{i}"' + (f', "t{i - 1 if i > 1 else 0}"' if kind == "add" else "")
    attrs = ', "attrs": {"out_channels": 64, "kernel": [3, 3], "pad": [1, 1, 1, 1]}' if kind == "conv" else ""
    return f'{{"name": "op{i}", "op": "{kind}", "inputs": [{inputs}], "outputs": ["t{i + 1}"]{attrs}}}'


def main():
    if len(sys.argv) != 3 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        sys.exit("usage: chain_graph.py OPS FILE (OPS a whole number of at least 1)")
    ops = int(sys.argv[1])
    with open(sys.argv[2], "w") as out:
        out.write('{"format": "anec-graph", "version": 1, '
                  '"inputs": [{"name": "t0", "shape": [1, 64, 56, 56]}], "ops": [')
        for i in range(ops):
            out.write((", " if i else "") + op_text(i))
        out.write(f'], "outputs": ["t{ops}"]}}')


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The Python module over a corpus with a thread pool: wall time with 1 and 2 threads.

anec.check, estimate, place, eval and load_program release the GIL while they read and work, so
threads run them on as many cores. Run from the clone, after the build:

    PYTHONPATH=build/python/module:python python3 bench/python_threads.py [MODEL] [COPIES] [REPEATS]

MODEL defaults to a synthetic chain of 20,000 conv/relu/add operations (an anec-graph document
given as bytes, so no file is read); each run checks COPIES copies (default 16) on h13 and
estimates them, and the best of REPEATS runs (default 3) is printed per thread count.
"""
import concurrent.futures
import json
import sys
import time

import anec


def synthetic(ops):
    tensors, listed = ["x"], []
    for i in range(ops):
        kind = ("conv", "relu", "add")[i % 3]
        src, out = tensors[-1], f"t{i}"
        if kind == "conv":
            op = {"name": f"o{i}", "op": "conv", "inputs": [src], "outputs": [out],
                  "attrs": {"out_channels": 64, "kernel": [3, 3], "pad": [1, 1, 1, 1]}}
        elif kind == "add":
            op = {"name": f"o{i}", "op": "add", "inputs": [src, tensors[-2]], "outputs": [out]}
        else:
            op = {"name": f"o{i}", "op": "relu", "inputs": [src], "outputs": [out]}
        listed.append(op)
        tensors.append(out)
    return json.dumps({"format": "anec-graph", "version": 1,
                       "inputs": [{"name": "x", "shape": [1, 64, 56, 56]}],
                       "ops": listed, "outputs": [tensors[-1]]}).encode()


def work(model):
    anec.check(model, "h13")
    anec.estimate(model, "h13")


def best_of(model, copies, threads, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            list(pool.map(work, [model] * copies))
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    model = open(sys.argv[1], "rb").read() if len(sys.argv) > 1 else synthetic(20000)
    copies = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    work(model)  # tables loaded, once
    one = best_of(model, copies, 1, repeats)
    two = best_of(model, copies, 2, repeats)
    print(f"{copies} x check + estimate: 1 thread {one:.2f} s, 2 threads {two:.2f} s, "
          f"speed-up {one / two:.2f}x")


if __name__ == "__main__":
    main()

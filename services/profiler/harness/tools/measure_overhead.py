#!/usr/bin/python3
"""Measure the simulator's per-instruction cost.

numerics: a synthetic kernel issues N instructions on [128, 512] fp32 tiles (tensor_scalar, activation,
tensor_tensor, copy, as in generated NKIBench kernels), with the liveness plan of a timing-only pass as the
harness uses it; the same numpy math is then timed on its own. The difference per instruction is the
simulator's overhead (indexing, dependency tracking, trace, copies into the destination). All times are process
CPU time, so other load on the machine does not inflate them.
timing-only: optionally, the trace time of a kernel/reference pair (e.g. NKIBench gqa_full).

usage: measure_overhead.py [--iterations N] [--kernel K.py --problem REF.py]
"""
import argparse
import os
import sys
import time

import numpy as np

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HARNESS)

import nki_sim  # noqa: E402

nki_sim.install_import_shim()
nki_sim.tune_allocator()

import neuronxcc.nki as nki  # noqa: E402
import neuronxcc.nki.isa as nisa  # noqa: E402
import neuronxcc.nki.language as nl  # noqa: E402
from nki_sim.jit import simulate  # noqa: E402

INSTRUCTIONS_PER_ITERATION = 6


@nki.jit
def synthetic_kernel(x, iterations):
    out = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.shared_hbm)
    src = nl.load(x)
    acc = nl.ndarray((iterations, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
    a = nl.ndarray((iterations, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
    b = nl.ndarray((iterations, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
    c = nl.ndarray((iterations, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
    d = nl.ndarray((iterations, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
    e = nl.ndarray((iterations, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(512)[None, :]
    for i in nl.affine_range(iterations):
        a[i, ip, jf] = nisa.tensor_scalar(data=src, op0=nl.multiply, operand0=np.float32(0.5), reverse0=False,
                                          op1=nl.add, operand1=np.float32(1.0), reverse1=False)
        b[i, ip, jf] = nisa.activation(op=nl.exp, data=a[i, ip, jf], scale=-1.0)
        c[i, ip, jf] = nl.multiply(a[i, ip, jf], b[i, ip, jf])
        d[i, ip, jf] = nisa.reciprocal(data=b[i, ip, jf])
        e[i, ip, jf] = nl.copy(c[i, ip, jf])
        acc[i, ip, jf] = nl.add(d[i, ip, jf], e[i, ip, jf])
    nl.store(out, value=acc[iterations - 1, ip, jf])
    return out


def numpy_only(x, iterations):
    for _ in range(iterations):
        a = np.add(np.multiply(x, np.float32(0.5)), np.float32(1.0))
        b = np.exp(a * -1.0)
        c = np.multiply(a, b)
        d = np.reciprocal(b)
        e = c.astype(np.float32)
        np.add(d, e)


def measure_numerics(iterations):
    x = np.random.default_rng(0).standard_normal((128, 512)).astype(np.float32)
    _, plan = simulate(synthetic_kernel, [x, iterations], timing_only=True)
    best_sim = best_math = float('inf')
    for _ in range(3):
        began = time.process_time()
        _, recorder = simulate(synthetic_kernel, [x, iterations], free_plan=plan.liveness_plan())
        best_sim = min(best_sim, time.process_time() - began)
        began = time.process_time()
        numpy_only(x, iterations)
        best_math = min(best_math, time.process_time() - began)
    count = recorder.count
    print(f'numerics: {count} instructions in {best_sim:.3f} s; numpy math alone {best_math:.3f} s; '
          f'overhead {(best_sim - best_math) / count * 1e6:.1f} us/instruction '
          f'(total {best_sim / count * 1e6:.1f} us/instruction)')


def measure_timing_only(kernel_path, problem_path):
    from protocol.evaluation import evaluate
    result = evaluate(reference=problem_path, kernel=kernel_path, timing_only=True)
    seconds = result['trace_cpu_seconds']
    count = result['instructions']
    print(f'timing-only {os.path.basename(kernel_path)}: {result["verdict"]}, {count} instructions traced in '
          f'{seconds:.2f} CPU s ({seconds / count * 1e6:.1f} us/instruction)')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--iterations', type=int, default=2000)
    parser.add_argument('--kernel')
    parser.add_argument('--problem')
    args = parser.parse_args(argv)
    measure_numerics(args.iterations)
    if args.kernel and args.problem:
        measure_timing_only(args.kernel, args.problem)
    return 0


if __name__ == '__main__':
    sys.exit(main())

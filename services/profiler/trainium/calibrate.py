#!/usr/bin/python3
"""Calibrates the Trainium-1 timing model against real measurements.

Steps:
  (a) trace the 7 calibration-set NKIBench kernels (and, for the held-out check, the other 7) with the simulator
      front end in timing-only mode;
  (b) fit the device constants whose source is tagged [fit] in devices/trn1.yaml by coordinate search, minimising
      the squared log error of latency plus weighted engine-activity and HBM-traffic errors over the CALIBRATION
      SET ONLY (trn1-calibration.csv), and optionally write the fitted values back into the device file;
  (c) print per-kernel simulated vs measured latency, relative error and key counters, then the held-out check
      (simulated latency vs the seed latencies of accelopt-algorithm.md section 8.2, never used for fitting).

Run with Debian's interpreter (numpy only, no scipy):
  /usr/bin/python3 services/profiler/trainium/calibrate.py /tmp/nkibench --model-bin build/dev/bin/accelopt-trn-model
      [--write] [--no-fit] [--markdown FILE]

CORPUS is a directory holding the NKIBench kernels and numpy references, either flat or as kernels/ and
reference/ subdirectories (public repository zhang677/AccelOpt, folder NKIBench; keep it outside this repository).
"""
import argparse
import csv
import json
import math
import os
import re
import statistics
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..', '..'))
DEFAULT_CSV = os.path.join(REPO, '..', 'shared', 'reference', 'trn1-calibration.csv')
DEFAULT_DEVICE = os.path.join(HERE, 'devices', 'trn1.yaml')
HARNESS = os.path.join(REPO, 'services', 'profiler', 'harness', 'run_kernel.py')
PYTHON = '/usr/bin/python3'

CALIBRATION = ['swiglu', 'matmul', 'rope_single_freq_apply', 'bmm', 'lora', 'adamw', 'silu']
# Held-out set: seed latency (ms) on Trainium 1 from accelopt-algorithm.md section 8.2. Reported, never fitted.
HELD_OUT_SEED_MS = {
    'add_rmsnorm_matmul': 1.2219,
    'bmm_softmax': 11.9996,
    'gqa_full': 19.1105,
    'mamba': 2.8887,
    'matmul_add_rmsnorm': 2.6666,
    'rmsnorm_matmul': 1.0558,
    'transpose_matmul': 9.6103,
}

# Search ranges of the [fit] constants: (low, high, integer).
FIT_RANGES = {
    'pe_transpose_fp32_factor': (1.0, 4.0, False),
    'pe_overhead_cycles': (0.0, 400.0, False),
    'act_overhead_cycles': (0.0, 400.0, False),
    'dve_overhead_cycles': (0.0, 400.0, False),
    'reciprocal_cycles_per_elem': (1.0, 8.0, False),
    'dma_descriptor_overhead_bytes': (16.0, 1024.0, False),
    'dma_queue_overhead_ns': (0.0, 1000.0, False),
    'dma_fixed_latency_ns': (200.0, 4000.0, False),
    'sync_latency_ns': (0.0, 300.0, False),
    'act_preference_ns': (-2000.0, 5000.0, False),
    'spill_reuse_window_instructions': (0.0, 256.0, True),
    'kernel_launch_ns': (0.0, 10000.0, False),
    'sbuf_reserve_bytes_pp': (0.0, 65536.0, True),
    'sbuf_ring_depth': (1.0, 8.0, True),
}

# Objective weights: latency dominates; engine activity and HBM traffic keep the model honest about why.
W_LATENCY = 1.0
W_ACTIVE = 0.5
W_HBM = 0.2

CONST_LINE = re.compile(r'^(\s*)([a-z0-9_]+): \{value: ([^,]+), source: "([^"]*)"\}\s*$')


# ----------------------------------------------------------------------------------------------------------------
# Corpus and tracing

class TraceError(Exception):
    """A kernel could not be traced."""


def find_files(corpus, problem):
    """(kernel, reference) paths of an NKIBench problem in a flat or kernels/ + reference/ corpus."""
    pattern = re.compile(r'^' + re.escape(problem) + r'_[A-Z]+\d')
    kernel = reference = None
    for root in (corpus, os.path.join(corpus, 'kernels'), os.path.join(corpus, 'reference')):
        if not os.path.isdir(root):
            continue
        for name in sorted(os.listdir(root)):
            if not name.endswith('.py') or not pattern.match(name):
                continue
            if '_numpy_' in name:
                reference = reference or os.path.join(root, name)
            else:
                kernel = kernel or os.path.join(root, name)
    if kernel is None or reference is None:
        raise TraceError(f'{problem}: kernel or reference not found under {corpus}')
    return kernel, reference


def trace_kernel(problem, corpus, trace_dir, regenerate):
    kernel, reference = find_files(corpus, problem)
    trace = os.path.join(trace_dir, problem + '.trace')
    result = os.path.join(trace_dir, problem + '.result.json')
    if not regenerate and os.path.exists(trace) and os.path.getmtime(trace) >= os.path.getmtime(kernel):
        return trace
    if not os.path.exists(HARNESS):
        raise TraceError(f'simulator front end {HARNESS} not found')
    cmd = [PYTHON, HARNESS, '--problem', reference, '--kernel', kernel, '--timing-only', '--trace-out', trace,
           '--result-out', result]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0 or not os.path.exists(trace):
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        raise TraceError(f'tracing {problem} failed (exit {proc.returncode}): ' + ' | '.join(tail))
    return trace


# ----------------------------------------------------------------------------------------------------------------
# Device file

def read_constants(path):
    """{name: (value, source)} of a device file."""
    constants = {}
    with open(path) as f:
        for line in f:
            m = CONST_LINE.match(line)
            if m:
                constants[m.group(2)] = (float(m.group(3)), m.group(4))
    return constants


def format_value(value, integer):
    if integer:
        return str(int(round(value)))
    return f'{value:.6g}'


def write_device(src, dst, values):
    """Copies device file `src` to `dst` with the constants in `values` replaced (other lines untouched)."""
    out = []
    with open(src) as f:
        for line in f:
            m = CONST_LINE.match(line)
            if m and m.group(2) in values:
                name = m.group(2)
                integer = FIT_RANGES.get(name, (0, 0, False))[2]
                line = f'{m.group(1)}{name}: {{value: {format_value(values[name], integer)}, source: "{m.group(4)}"}}\n'
            out.append(line)
    with open(dst, 'w') as f:
        f.writelines(out)


# ----------------------------------------------------------------------------------------------------------------
# Model runs and objective

def run_model(model_bin, trace, device_file):
    proc = subprocess.run([model_bin, '--trace', trace, '--device-file', device_file, '--json'],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f'calibrate: model failed on {trace}: {proc.stderr.strip()}')
    return json.loads(proc.stdout)


def run_all(model_bin, traces, device_file):
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = pool.map(lambda item: (item[0], run_model(model_bin, item[1], device_file)), traces.items())
        return dict(results)


def load_measurements(path):
    rows = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            rows[row['problem']] = {k: (float(v) if v not in ('', None) and k not in ('problem', 'config',
                                                                                       'nkibench_kernel') else v)
                                    for k, v in row.items()}
    return rows


def objective(results, measured):
    total = 0.0
    for problem, r in results.items():
        m = measured[problem]
        total += W_LATENCY * math.log(r['latency_ms'] / m['latency']) ** 2
        c = r['counters']
        for field in ('scalar_engine_active_time_percent', 'vector_engine_active_time_percent'):
            if isinstance(m.get(field), float):
                total += W_ACTIVE * (c[field] - m[field]) ** 2
        if isinstance(m.get('hbm_read_bytes'), float) and m['hbm_read_bytes'] > 0:
            total += W_HBM * math.log(max(c['hbm_read_bytes'], 1) / m['hbm_read_bytes']) ** 2
    return total


def candidates(name, value):
    """Trial values of one constant around `value`: relative and range-proportional steps, clipped to range."""
    low, high, integer = FIT_RANGES[name]
    span = high - low
    if integer:
        steps = (1, 2) if span <= 16 else (span / 64, span / 16)
        raw = [value + sign * step for step in steps for sign in (-1, 1)]
    else:
        raw = [value * f for f in (0.5, 0.8, 1.25, 2.0)] + [value + d * span for d in (-0.1, -0.03, 0.03, 0.1)]
    out = []
    for v in raw:
        v = min(max(v, low), high)
        if integer:
            v = float(round(v))
        if abs(v - value) > 1e-12 and v not in out:
            out.append(v)
    return out


def fit(model_bin, traces, measured, device_file, rounds):
    constants = read_constants(device_file)
    fitted = {n: v for n, (v, s) in constants.items() if s.startswith('[fit]') and n in FIT_RANGES}
    with tempfile.TemporaryDirectory() as tmp:
        trial = os.path.join(tmp, 'device.yaml')

        def evaluate(values):
            write_device(device_file, trial, values)
            return objective(run_all(model_bin, traces, trial), measured)

        best = evaluate(fitted)
        print(f'fit: start objective {best:.5f}', flush=True)
        for round_index in range(rounds):
            improved = False
            for name in sorted(fitted):
                for value in candidates(name, fitted[name]):
                    trial_values = dict(fitted, **{name: value})
                    score = evaluate(trial_values)
                    if score < best - 1e-9:
                        best, fitted, improved = score, trial_values, True
            print(f'fit: round {round_index + 1} objective {best:.5f}', flush=True)
            if not improved:
                break
    return fitted, best


# ----------------------------------------------------------------------------------------------------------------
# Report

def rel_err(sim, meas):
    return (sim - meas) / meas


COUNTER_FIELDS = ['hbm_read_bytes', 'hbm_write_bytes', 'psum_read_bytes', 'psum_write_bytes', 'sbuf_read_bytes',
                  'sbuf_write_bytes', 'spill_save_bytes', 'spill_reload_bytes', 'hardware_flops', 'transpose_flops']
COUNTER_TOLERANCE = 0.10
COUNTER_NEGLIGIBLE = 1e6   # bytes or FLOPs: a counter both sides below this agrees (e.g. no spilling on either)


def counter_agreement(results, measured):
    """Per counter: the calibration kernels whose simulated value is within COUNTER_TOLERANCE of the measured one,
    and the others with their relative error. Counters absent from a profile are skipped."""
    lines = ['Counters within 10% of the measured value (both below 1 MB / 1 MFLOP counts as agreeing):', '']
    total = agreeing = 0
    for field in COUNTER_FIELDS:
        outside = []
        compared = 0
        for problem in CALIBRATION:
            meas = measured[problem].get(field)
            if not isinstance(meas, float):
                continue
            sim = float(results[problem]['counters'][field])
            compared += 1
            if max(meas, sim) < COUNTER_NEGLIGIBLE:
                continue
            if meas == 0 or abs(sim - meas) > COUNTER_TOLERANCE * meas:
                outside.append(f"{problem} {'+inf' if meas == 0 else format(rel_err(sim, meas), '+.0%')}")
        total += compared
        agreeing += compared - len(outside)
        lines.append(f"- {field}: {compared - len(outside)} of {compared}"
                     + (f" (outside: {', '.join(outside)})" if outside else ''))
    lines += ['', f'All counters: {agreeing} of {total} within 10%.', '']
    return lines


def report(results, measured, held_out):
    lines = ['### Calibration set (fitted against these)', '',
             '| kernel | measured ms | simulated ms | rel. error | ACT active meas/sim | DVE active meas/sim '
             '| HBM read MB meas/sim | HBM write MB meas/sim | spill reload MB meas/sim |',
             '|---|---|---|---|---|---|---|---|---|']
    errors = []
    for problem in CALIBRATION:
        r, m = results[problem], measured[problem]
        c = r['counters']
        err = rel_err(r['latency_ms'], m['latency'])
        errors.append(abs(err))
        lines.append(
            f"| {problem} | {m['latency']:.4f} | {r['latency_ms']:.4f} | {err:+.1%} | "
            f"{m['scalar_engine_active_time_percent']:.3f} / {c['scalar_engine_active_time_percent']:.3f} | "
            f"{m['vector_engine_active_time_percent']:.3f} / {c['vector_engine_active_time_percent']:.3f} | "
            f"{m['hbm_read_bytes'] / 1e6:.0f} / {c['hbm_read_bytes'] / 1e6:.0f} | "
            f"{m['hbm_write_bytes'] / 1e6:.0f} / {c['hbm_write_bytes'] / 1e6:.0f} | "
            f"{m['spill_reload_bytes'] / 1e6:.0f} / {c['spill_reload_bytes'] / 1e6:.0f} |")
    lines += ['', f'Calibration set: median |error| {statistics.median(errors):.1%}, max {max(errors):.1%}.', '']
    lines += ['Counters, measured / simulated (MB, GFLOP; blank = absent from the profile):', '',
              '| kernel | psum read | psum write | sbuf read | sbuf write | spill save | hardware GFLOP '
              '| transpose GFLOP | hfu |', '|---|---|---|---|---|---|---|---|---|']
    for problem in CALIBRATION:
        c, m = results[problem]['counters'], measured[problem]

        def pair(field, scale):
            meas = m.get(field)
            meas_text = f'{meas / scale:.1f}' if isinstance(meas, float) else ''
            return f'{meas_text} / {c[field] / scale:.1f}'

        lines.append(f"| {problem} | {pair('psum_read_bytes', 1e6)} | {pair('psum_write_bytes', 1e6)} | "
                     f"{pair('sbuf_read_bytes', 1e6)} | {pair('sbuf_write_bytes', 1e6)} | "
                     f"{pair('spill_save_bytes', 1e6)} | {pair('hardware_flops', 1e9)} | "
                     f"{pair('transpose_flops', 1e9)} | {m['hfu_estimated_percent']:.3f} / "
                     f"{c['hfu_estimated_percent']:.3f} |")
    lines.append('')
    lines += counter_agreement(results, measured)
    if held_out:
        lines += ['### Held-out check (NOT used for fitting; measured = seed latency, accelopt-algorithm.md 8.2)', '',
                  '| kernel | seed ms | simulated ms | rel. error | ACT / DVE / PE active (sim) | HBM read MB (sim) |',
                  '|---|---|---|---|---|---|']
        held = []
        for problem, seed in HELD_OUT_SEED_MS.items():
            if problem not in held_out:
                continue
            r = held_out[problem]
            err = rel_err(r['latency_ms'], seed)
            held.append(abs(err))
            a = r['engine_active']
            lines.append(f"| {problem} | {seed:.4f} | {r['latency_ms']:.4f} | {err:+.1%} | "
                         f"{a['act']:.2f} / {a['dve']:.2f} / {a['pe']:.2f} | "
                         f"{r['counters']['hbm_read_bytes'] / 1e6:.0f} |")
        if held:
            lines += ['', f'Held-out set: median |error| {statistics.median(held):.1%}, max {max(held):.1%}.', '']
    return '\n'.join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('corpus', help='directory with the NKIBench kernels and references')
    parser.add_argument('--model-bin', required=True, help='path of the accelopt-trn-model binary')
    parser.add_argument('--device-file', default=DEFAULT_DEVICE)
    parser.add_argument('--calibration-csv', default=DEFAULT_CSV)
    parser.add_argument('--trace-dir', default=os.path.join(tempfile.gettempdir(), 'accelopt-trn-calibration'))
    parser.add_argument('--regenerate', action='store_true', help='re-trace even if cached traces are current')
    parser.add_argument('--no-fit', action='store_true', help='only report with the current constants')
    parser.add_argument('--no-held-out', action='store_true', help='skip the held-out check')
    parser.add_argument('--rounds', type=int, default=4, help='coordinate-search rounds')
    parser.add_argument('--write', action='store_true', help='write fitted values into the device file')
    parser.add_argument('--markdown', help='also write the report to this file')
    args = parser.parse_args()

    os.makedirs(args.trace_dir, exist_ok=True)
    measured = load_measurements(args.calibration_csv)
    try:
        traces = {p: trace_kernel(p, args.corpus, args.trace_dir, args.regenerate) for p in CALIBRATION}
    except TraceError as e:
        raise SystemExit(f'calibrate: {e}')

    device = args.device_file
    fitted = None
    if not args.no_fit:
        fitted, score = fit(args.model_bin, traces, measured, device, args.rounds)
        print('fitted constants:')
        for name in sorted(fitted):
            print(f'  {name}: {format_value(fitted[name], FIT_RANGES[name][2])}')
        if args.write:
            write_device(device, device, fitted)
            print(f'wrote {device}')
    with tempfile.TemporaryDirectory() as tmp:
        final_device = device
        if fitted is not None and not args.write:
            final_device = os.path.join(tmp, 'device.yaml')
            write_device(device, final_device, fitted)
        results = run_all(args.model_bin, traces, final_device)
        held_out = {}
        if not args.no_held_out:
            held_traces = {}
            for problem in HELD_OUT_SEED_MS:
                try:
                    held_traces[problem] = trace_kernel(problem, args.corpus, args.trace_dir, args.regenerate)
                except TraceError as e:
                    print(f'held-out: skipped {problem}: {e}')
            held_out = run_all(args.model_bin, held_traces, final_device)
    text = report(results, measured, held_out)
    print(text)
    if args.markdown:
        with open(args.markdown, 'w') as f:
            f.write(text + '\n')


if __name__ == '__main__':
    main()

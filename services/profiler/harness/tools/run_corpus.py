#!/usr/bin/python3
"""Run every kernel/reference pair of an NKIBench-style directory through run_kernel.py and print a table.

usage: run_corpus.py DIR [--seeds N] [--skip-numerics] [--only SUBSTRING] [--memory-limit-gb G] [--accelopt BIN]

DIR is searched recursively, so a checkout of your own (or public) kernels can be given by path. Pairing, per
directory: a reference named PREFIX_numpy_<n>.py (NKIBench) goes with the other files PREFIX_<...>.py; a reference
named NAME_reference.py goes with NAME.py (the convention of corpus/, our own kernels).
Each pair runs twice in a child process: --timing-only (trace on shapes) and with numerics (--seeds N, default
1). Children get an address-space limit (default: 90% of available memory), so a problem too large for
numerics on this machine reports OUT_OF_MEMORY instead of swapping. Prints a Markdown table and the count of kernels
OK in both runs; files that mention nki and have no reference are named on stderr. Exit status 1 when a kernel is
not OK in both runs, 2 when DIR is not a directory or holds no pair.
With --accelopt BIN (the `accelopt` CLI), each run is `BIN profile --json` instead: the worker's whole path (the
sandbox, both protocol steps, the timing model and the worker's plausibility checks), as a user of the cluster gets
it; the trace and RSS columns are then the worker's device seconds and '-'. A NAME_reference.yaml (or the NKIBench
problem.yaml beside the reference) is the problem's metadata in both modes; its key `target: trn2` runs that pair on
the trn2 model (`run_kernel.py --target trn2`, `accelopt profile --device sim-trn2`), for a kernel written for trn2
(NeuronCore-v3 forms such as nisa.range_select run under trn1 too, docs/simulator.md "Known limits", but are timed
with trn1's figures there).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import yaml

RUN_KERNEL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'run_kernel.py')


def pairs(directory, unpaired=None):
    """(kernel, reference) pairs of every directory under `directory` (see the module docstring). Files that mention
    nki and pair with no reference are appended to `unpaired`."""
    found = []
    for root, dirs, names in os.walk(directory):
        dirs.sort()
        files = sorted(f for f in names if f.endswith('.py') and not f.startswith('_'))
        for reference in files:
            if '_numpy_' in reference:
                prefix = reference.split('_numpy_')[0] + '_'
                for kernel in files:
                    if kernel.startswith(prefix) and '_numpy_' not in kernel and not kernel.endswith('_reference.py'):
                        found.append((os.path.join(root, kernel), os.path.join(root, reference)))
            elif reference.endswith('_reference.py'):
                kernel = reference[:-len('_reference.py')] + '.py'
                if kernel in files:
                    found.append((os.path.join(root, kernel), os.path.join(root, reference)))
        if unpaired is not None:
            paired = {p for pair in found for p in pair}
            for name in files:
                path = os.path.join(root, name)
                if path not in paired and '_numpy_' not in name and not name.endswith('_reference.py') \
                        and _mentions_nki(path):
                    unpaired.append(path)
    return found


def _mentions_nki(path):
    try:
        with open(path, errors='replace') as f:
            return 'nki' in f.read()
    except OSError:
        return False


def available_memory_bytes():
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemAvailable:'):
                return int(line.split()[1]) * 1024
    return 0


def run_child(arguments, memory_limit):
    """Run run_kernel.py; returns (result dict or None, peak RSS bytes, wall seconds, stderr tail)."""
    with tempfile.NamedTemporaryFile(suffix='.json', delete=False) as handle:
        result_path = handle.name

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    began = time.monotonic()
    child = subprocess.Popen(['/usr/bin/python3', RUN_KERNEL, *arguments, '--result-out', result_path],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limit_memory)
    stderr = child.stderr.read().decode(errors='replace')
    _, status, usage = os.wait4(child.pid, 0)       # reap it ourselves to get this child's own rusage
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - began
    try:
        with open(result_path) as f:
            result = json.load(f)
    except (OSError, ValueError):
        result = None
    os.unlink(result_path)
    return result, usage.ru_maxrss * 1024, wall, stderr.strip().splitlines()[-1:] or ['']


def run_cli(accelopt, arguments):
    """Run `accelopt profile --json`; returns (result dict or None, wall seconds, stderr tail)."""
    began = time.monotonic()
    child = subprocess.run([accelopt, 'profile', *arguments, '--json'], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.monotonic() - began
    stderr = child.stderr.decode(errors='replace').strip().splitlines()[-1:] or ['']
    try:
        result = json.loads(child.stdout)
    except ValueError:
        return None, wall, stderr
    if not isinstance(result, dict) or 'verdict' not in result:
        return None, wall, stderr
    result.setdefault('message', '')
    result.setdefault('max_rel_l2', None)
    result['trace_seconds'] = result.get('device_seconds')
    result['trace_cpu_seconds'] = '-'
    return result, wall, stderr


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('directory')
    parser.add_argument('--seeds', type=int, default=1)
    parser.add_argument('--skip-numerics', action='store_true')
    parser.add_argument('--only', default='')
    parser.add_argument('--memory-limit-gb', type=float)
    parser.add_argument('--accelopt', metavar='BIN', help='run each pair with `BIN profile --json` (the worker path)')
    args = parser.parse_args(argv)
    limit = int(args.memory_limit_gb * 2**30) if args.memory_limit_gb else int(available_memory_bytes() * 0.9)
    if not os.path.isdir(args.directory):
        print(f'run_corpus.py: {args.directory} is not a directory', file=sys.stderr)
        return 2
    unpaired = []
    found = pairs(args.directory, unpaired)
    for path in unpaired:
        print(f'run_corpus.py: not run: {path} has no reference (NAME_reference.py beside NAME.py, or an NKIBench '
              'PREFIX_numpy_<n>.py)', file=sys.stderr)
    if not found:
        print(f'run_corpus.py: no kernel/reference pairs under {args.directory}', file=sys.stderr)
        return 2
    rows = ['| kernel | instructions | trace s (cpu) | timing-only | numerics | rel L2 | numerics wall s | peak RSS GiB |',
            '|---|---|---|---|---|---|---|---|']
    print('\n'.join(rows), flush=True)

    def run(arguments):
        """(result or None, peak RSS bytes (0 through the CLI), wall seconds, stderr tail) of one run."""
        if args.accelopt:
            result, wall, err = run_cli(args.accelopt, arguments)
            return result, 0, wall, err
        return run_child(arguments, limit)
    ran = passed = 0
    for kernel, reference in found:
        if args.only not in os.path.basename(kernel):
            continue
        ran += 1
        common = ['--problem', reference, '--kernel', kernel]
        target = pair_target(reference)
        if target != 'trn1':
            common += ['--device', f'sim-{target}'] if args.accelopt else ['--target', target]
        timing, _, _, timing_err = run(common + ['--timing-only'])
        cells = [os.path.basename(kernel)[:-3]]
        if timing is None:
            cells += ['-', '-', f'harness crashed: {timing_err[0]}']
        else:
            cells += [str(timing.get('instructions')), f"{timing['trace_seconds']} ({timing['trace_cpu_seconds']})",
                      _verdict(timing)]
        if args.skip_numerics:
            cells += ['skipped', '-', '-', '-']
        else:
            numerics, rss, wall, numerics_err = run(common + ['--seeds', str(args.seeds)])
            if numerics is None:
                cells += [f'harness crashed: {numerics_err[0]}', '-', f'{wall:.1f}', f'{rss / 2**30:.2f}']
            else:
                rel = numerics['max_rel_l2']
                cells += [_verdict(numerics), '-' if rel is None else f'{rel:.2e}', f'{wall:.1f}',
                          '-' if args.accelopt else f'{rss / 2**30:.2f}']
        if cells[3] == 'OK' and cells[4] in ('OK', 'skipped'):
            passed += 1
        row = '| ' + ' | '.join(cells) + ' |'
        rows.append(row)
        print(row, flush=True)
    print(f'\n{passed} of {ran} kernel(s) OK' + (' (timing-only)' if args.skip_numerics else ''))
    return 0 if passed == ran else 1


def pair_target(reference):
    """The NeuronCore generation a pair is written for: `target` of its metadata (NAME_reference.yaml, or an
    NKIBench problem.yaml beside the reference), trn1 when absent."""
    beside = [reference[:-len('.py')] + '.yaml'] if reference.endswith('_reference.py') else []
    for path in beside + [os.path.join(os.path.dirname(reference), 'problem.yaml')]:
        if os.path.exists(path):
            with open(path) as f:
                metadata = yaml.safe_load(f) or {}
            target = metadata.get('target', 'trn1') if isinstance(metadata, dict) else 'trn1'
            if target not in ('trn1', 'trn2'):
                raise SystemExit(f'run_corpus.py: {path}: target {target!r} is not trn1 or trn2')
            return target
    return 'trn1'


def _verdict(result):
    if result['verdict'] == 'OK':
        return 'OK'
    return f"{result['verdict']}: {result['message'].splitlines()[-1][:80]}"


if __name__ == '__main__':
    sys.exit(main())

"""Run example kernels through the profiler harness and the Trainium timing model.

Used by examples/tests and by measure.py. Paths are relative to the repository root; the harness CLI is
services/profiler/harness/run_kernel.py and the timing model is the first build/<preset>/bin/accelopt-trn-model
found (dev, ci, release, asan), unless $ACCELOPT_BIN_DIR names the directory holding it (ctest sets it).
"""
import glob
import json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, 'examples')
PYTHON = '/usr/bin/python3'
HARNESS = os.path.join(ROOT, 'services', 'profiler', 'harness', 'run_kernel.py')
PROBLEMS = ('matmul', 'rmsnorm_matmul', 'softmax', 'silu', 'swiglu', 'rope', 'adamw')


def timing_model():
    bin_dir = os.environ.get('ACCELOPT_BIN_DIR')
    if bin_dir and os.access(os.path.join(bin_dir, 'accelopt-trn-model'), os.X_OK):
        return os.path.join(bin_dir, 'accelopt-trn-model')
    for preset in ('dev', 'ci', 'release', 'asan'):
        path = os.path.join(ROOT, 'build', preset, 'bin', 'accelopt-trn-model')
        if os.access(path, os.X_OK):
            return path
    return None


def harness_available():
    return os.path.exists(HARNESS)


def kernels(problem):
    """(label, path) of the baseline and every variant of an example."""
    d = os.path.join(EXAMPLES, problem)
    out = [('kernel', os.path.join(d, 'kernel.py'))]
    for path in sorted(glob.glob(os.path.join(d, 'variants', '*.py'))):
        out.append(('variants/' + os.path.basename(path), path))
    return out


def shape_files(problem, small):
    d = os.path.join(EXAMPLES, problem)
    if small:
        return os.path.join(d, 'reference_small.py'), os.path.join(d, 'problem_small.yaml')
    return os.path.join(d, 'reference.py'), os.path.join(d, 'problem.yaml')


def run_harness(reference, kernel, metadata, seeds=1, timing_only=False, timeout=300):
    """The harness result JSON, with the trace written to a temporary file (result['trace'])."""
    trace = tempfile.NamedTemporaryFile(prefix='accelopt-example-', suffix='.trace', delete=False).name
    cmd = [PYTHON, HARNESS, '--problem', reference, '--kernel', kernel, '--metadata', metadata,
           '--seeds', str(seeds), '--trace-out', trace]
    if timing_only:
        cmd.append('--timing-only')
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    try:
        result = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        result = {'verdict': 'INFRA_ERROR', 'message': f'harness printed no JSON: {proc.stderr[-2000:]}'}
    result['trace_file'] = trace
    return result


def model(trace, roofline=None, device='trn1'):
    """The timing model's JSON for a trace."""
    binary = timing_model()
    if binary is None:
        raise RuntimeError('accelopt-trn-model is not built (cmake --build --preset dev --target accelopt-trn-model)')
    cmd = [binary, '--trace', trace, '--device', device, '--json']
    if roofline:
        cmd += ['--vector-flops', str(roofline['vector_flops']), '--matmul-flops', str(roofline['matmul_flops']),
                '--hbm-bytes', str(roofline['hbm_bytes'])]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f'accelopt-trn-model failed: {proc.stderr.strip()}')
    return json.loads(proc.stdout)


def latency_ms(reference, kernel, metadata, seeds=1, timing_only=False):
    """(harness result, timing-model JSON or None). The model runs only when the harness judged OK (or traced)."""
    result = run_harness(reference, kernel, metadata, seeds, timing_only)
    timing = None
    try:
        if result.get('verdict') == 'OK' and os.path.getsize(result['trace_file']) > 0:
            roofline = (result.get('problem') or {}).get('roofline')
            timing = model(result['trace_file'], roofline)
    finally:
        if os.path.exists(result['trace_file']):
            os.unlink(result['trace_file'])
    return result, timing

"""Test helpers: write kernel/reference sources into a temporary directory and run them."""
import os
import tempfile
import textwrap

import numpy as np

from nki_sim.jit import simulate
from protocol.evaluation import evaluate
from protocol.problem import load_module

KERNEL_HEADER = '''import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
'''


# The fresh seed of the tests' evaluations (production draws a secret one per profile; tests/test_cheats.py and
# test_protocol.py check that path).
TEST_FRESH_SEED = 105


class Workspace:
    """A temporary directory holding kernel and reference modules, removed by close() or, for one a test did not
    close (a setUp that failed half-way), when it is garbage-collected or the interpreter exits."""

    def __init__(self):
        self._dir = tempfile.TemporaryDirectory(prefix='nki-harness-test-')
        self.root = self._dir.name
        self.counter = 0

    def close(self):
        self._dir.cleanup()

    def write(self, name, text):
        path = os.path.join(self.root, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def kernel(self, body, header=KERNEL_HEADER):
        """A kernel module; `body` starts at line 5 (after the 4 header lines)."""
        self.counter += 1
        return self.write(f'kernel_{self.counter}.py', header + textwrap.dedent(body))

    def reference(self, body, metadata=None):
        self.counter += 1
        path = self.write(f'reference_{self.counter}.py', 'import numpy as np\n' + textwrap.dedent(body))
        if metadata is not None:
            self.write(f'reference_{self.counter}.yaml', textwrap.dedent(metadata))
        return path

    def evaluate(self, reference, kernel, **options):
        """Both protocol steps; the fresh inputs come from TEST_FRESH_SEED unless `fresh_seed` is given (None: a
        secret seed, as in production), so that a test's verdict does not depend on a random draw."""
        options.setdefault('seeds', 1)
        options.setdefault('fresh_seed', TEST_FRESH_SEED)
        return evaluate(reference=reference, kernel=kernel, **options)

    def run(self, kernel_path, *inputs, timing_only=False):
        module = load_module(kernel_path, f'test_kernel_{self.counter}')
        entry = getattr(module, 'kernel', None) or module.optimized_kernel
        return simulate(entry, list(inputs), timing_only=timing_only)


def rel_l2(got, want):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


STANDARD_TRANSFORMS = '''
def transform_to_nki_inputs(inputs):
    return inputs


def transform_nki_outputs(k_res, ref):
    if not isinstance(k_res, tuple):
        k_res = (k_res,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    return [np.reshape(v, r.shape) for v, r in zip(k_res, refs)]
'''


def line_of(path, marker):
    """1-based line number of the first line of `path` containing `marker`."""
    with open(path) as f:
        for number, text in enumerate(f, 1):
            if marker in text:
                return number
    raise AssertionError(f'{marker!r} not found in {path}')


SIMPLE_REFERENCE = '''
def get_inputs():
    return [np.random.normal(size=(128, 64)).astype(np.float32)]


def forward(x):
    return x * 2.0
''' + STANDARD_TRANSFORMS


# A kernel that verifies against SIMPLE_REFERENCE (2 x); indented, as Workspace.kernel dedents its body.
DOUBLING_KERNEL = '''
    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.multiply(nl.load(x), 2.0))
        return out
    '''

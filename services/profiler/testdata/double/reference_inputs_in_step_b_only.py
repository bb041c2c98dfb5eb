"""The doubling problem of reference.py, whose inputs only the trusted replay (step B) may build: the kernel's
process (step A, run_kernel.py) is sent their shapes and fails the profile if it builds them itself."""
import sys

import numpy as np


def get_inputs():
    if sys.argv[0].endswith('run_kernel.py'):
        raise RuntimeError('the kernel\'s process built the inputs')
    return [np.random.rand(128, 256).astype(np.float32)]


forward = lambda x: x * np.float32(2.0)  # noqa: E731
transform_to_nki_inputs = lambda inputs: inputs  # noqa: E731
transform_nki_outputs = lambda out, ref: out  # noqa: E731

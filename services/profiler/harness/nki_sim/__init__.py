"""A numpy simulator of the NKI (Neuron Kernel Interface, Beta 1) API with an instruction trace.

`language` and `isa` implement neuronxcc.nki.language / neuronxcc.nki.isa; `jit.simulate` runs a kernel in
numerics or timing-only mode and returns its outputs and the TraceRecorder. `install_import_shim()` makes
`import neuronxcc.nki...` and `import nki...` resolve to this package; `tune_allocator()` keeps freed tile
memory in the process (call it once in programs that simulate large kernels).
"""
import os
import sys

from .allocator import tune_allocator  # noqa: F401  (re-exported)

SHIM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'shim')


def install_import_shim() -> None:
    if SHIM_DIR not in sys.path:
        sys.path.insert(0, SHIM_DIR)

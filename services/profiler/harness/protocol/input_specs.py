"""The kernel's inputs as step A needs them (shapes and formats of the arrays, the other values as they are), sent
by step B, which builds the problem's inputs anyway, so that step A never builds them (for a large problem that is
seconds of random numbers and hundreds of MiB it would only read the shapes of).

One JSON line: `{"inputs": [item, ...]}`, an item being `{"array": [shape, dtype]}` (dtype: a numpy dtype name or
an NKI format numpy lacks, bfloat16, float8_e4m3, ...) or `{"value": v}`, `v` a JSON scalar, `{"tuple": [...]}` /
`{"list": [...]}` of such values, or an `{"array": ...}` inside one (a list of arrays is one argument of a list of HBM
tensors; the arrays are described depth first, as Problem.kernel_arrays lists them). Inputs of any other kind are sent as `{"build": true}`: step A then builds the
inputs itself, as it would without step B. The line only tells step A what to run the kernel on; step B checks the
program's input declarations against its own inputs, whatever step A was told.
"""
import json
import os
import select
from typing import Any, Iterator, List, Optional, Sequence

import numpy as np

from nki_sim.dtypes import LOW_PRECISION
from nki_sim.jit import InputSpec

BUILD_THEMSELVES = '{"build":true}\n'
# Step B never waits for step A: the line is one write of at most PIPE_BUF bytes into the empty pipe, which the
# kernel writes whole; a longer line is sent as "build them yourself".
MAX_LINE_BYTES = select.PIPE_BUF


class _NotSendable(Exception):
    pass


def encode(nki_inputs: Sequence[Any], arrays: Sequence[np.ndarray], formats: Sequence[Any]) -> str:
    """The line for transform_to_nki_inputs' values `nki_inputs`, whose arrays are `arrays` in the NKI `formats`
    (Problem.kernel_arrays)."""
    try:
        described = iter([[list(a.shape), _dtype_name(a.dtype) if f is None else f.name]
                          for a, f in zip(arrays, formats)])
        items = [{'array': next(described)} if isinstance(v, np.ndarray) else {'value': _value(v, described)}
                 for v in nki_inputs]
    except _NotSendable:
        return BUILD_THEMSELVES
    return json.dumps({'inputs': items}, separators=(',', ':'), allow_nan=True) + '\n'


def _dtype_name(dtype: np.dtype) -> str:
    """A dtype's name, when the name gives back that very dtype (not for record or parametrised dtypes)."""
    try:
        same = np.dtype(dtype.name) == dtype and dtype.fields is None
    except TypeError:
        same = False
    if not same:
        raise _NotSendable
    return dtype.name


def _value(value: Any, described: Iterator[List[Any]]) -> Any:
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, np.ndarray):
        return {'array': next(described)}
    if type(value) in (tuple, list):
        return {type(value).__name__: [_value(v, described) for v in value]}
    raise _NotSendable


def send(descriptor: int, line: str) -> None:
    """Write `line` into the pipe `descriptor` (never waiting for the reader), then close it."""
    data = line.encode()
    if len(data) > MAX_LINE_BYTES:
        data = BUILD_THEMSELVES.encode()
    try:
        os.set_blocking(descriptor, False)
        os.write(descriptor, data)
    except OSError:     # the reader is gone: nothing to tell
        pass
    finally:
        os.close(descriptor)


def receive(descriptor: int) -> Optional[List[Any]]:
    """The kernel's inputs from the line step B sends (arrays as InputSpec), or None when step A must build them
    itself (step B sent "build", or ended before it sent a line). Reads one line: the descriptor may stay open
    elsewhere (a sandbox's reaper) after step B wrote it."""
    try:
        with open(descriptor, 'rb', closefd=True) as pipe:
            data = pipe.readline(MAX_LINE_BYTES + 1)
    except OSError:
        return None
    try:
        items = json.loads(data)['inputs']
        return [_input(item) for item in items]
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _input(item: Any) -> Any:
    if 'array' in item:
        shape, dtype = item['array']
        return InputSpec(tuple(int(s) for s in shape), LOW_PRECISION[dtype] if dtype in LOW_PRECISION else dtype)
    return _decoded(item['value'])


def _decoded(value: Any) -> Any:
    if isinstance(value, dict):
        if 'array' in value:
            return _input(value)
        if 'tuple' in value:
            return tuple(_decoded(v) for v in value['tuple'])
        return [_decoded(v) for v in value['list']]
    return value

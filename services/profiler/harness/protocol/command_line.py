"""What the two protocol entry points (run_kernel.py, replay_check.py) share: their common options, and running
one evaluation into exactly one result JSON (an unexpected exception becomes an INFRA_ERROR verdict)."""
import argparse
import json
import os
import re
import traceback
from typing import Any, Callable, Dict, Optional, Union

from nki_sim.target import DEFAULT, TARGETS

from .evaluation import empty_result


def add_evaluation_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of one evaluation, after --problem and the kernel or program option."""
    parser.add_argument('--metadata', help='problem.yaml (default: beside the reference)')
    parser.add_argument('--seeds', type=int, default=5, help='correctness seeds to check (default 5)')
    parser.add_argument('--tolerance', type=float, help='relative L2 tolerance (default: problem.yaml or 2e-5)')
    parser.add_argument('--timing-only', action='store_true', help='trace on shapes only, no numerics')
    parser.add_argument('--trace-out', help='write the instruction trace here')
    parser.add_argument('--result-out', help='write the result JSON here (it is always printed too)')
    parser.add_argument('--target', choices=sorted(TARGETS), default=DEFAULT,
                        help=f'the NeuronCore generation to simulate (default {DEFAULT}): what '
                             'nisa.get_nc_version() and nl.tile_size tell the kernel')


def add_fresh_seed_argument(parser: argparse.ArgumentParser) -> None:
    """--fresh-seed of the checking step: by default the final run's inputs come from a secret seed drawn per run."""
    parser.add_argument('--fresh-seed', type=int,
                        help='the seed of the final run\'s fresh inputs (default: a secret seed drawn per run, '
                             'named in the result as fresh_seed); give it to reproduce a reported failure')


def path_or_descriptor(text: str) -> Union[str, int]:
    """A program option's value: a path, or `fd:N` for the inherited open descriptor N (a pipe from or to the
    other protocol step; used as it is, never reopened through /proc)."""
    match = re.fullmatch(r'fd:([0-9]+)', text)
    return int(match.group(1)) if match else text


def descriptor(text: str) -> int:
    """An `fd:N` option's value: the inherited open descriptor N."""
    value = path_or_descriptor(text)
    if not isinstance(value, int):
        raise argparse.ArgumentTypeError(f'expected fd:N (an open descriptor), got {text!r}')
    return value


# A result message is at most this many characters: a kernel chooses its exceptions' text, and an 8 MiB message
# made the result larger than a gRPC reply may be.
MAX_MESSAGE_CHARS = 4000


def bounded(message: str) -> str:
    """`message`, cut to MAX_MESSAGE_CHARS with a note of how much was left out."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return f'{message[:MAX_MESSAGE_CHARS]}... ({len(message) - MAX_MESSAGE_CHARS} characters more)'


def report(evaluation: Callable[[], Dict[str, Any]], result_out: Optional[str]) -> int:
    """Runs `evaluation`, prints its result JSON and writes it to `result_out` (if given); returns exit status 0."""
    try:
        result = evaluation()
    except Exception as error:
        last = traceback.extract_tb(error.__traceback__)[-1]
        result = empty_result()
        result.update(verdict='INFRA_ERROR', message=f'harness failure: {type(error).__name__}: {error} '
                                                     f'({os.path.basename(last.filename)}:{last.lineno})')
    if isinstance(result.get('message'), str):
        result['message'] = bounded(result['message'])
    text = json.dumps(result)
    if result_out:
        with open(result_out, 'w') as f:
            f.write(text + '\n')
    print(text)
    return 0

"""Errors the simulator raises on behalf of the NKI toolchain.

CompileError: the program breaks a rule the real compiler enforces (tile limits, illegal indexing, ...).
It carries the kernel source line that issued the offending call (0 when unknown).
StaleStateError: a later run of the same kernel touched memory an earlier, identical run had proven dead;
the kernel's instruction stream changed between runs (it is stateful or non-deterministic).
WrongOnDeviceError: the run computes a result the device would not (verdict INCORRECT), with its two kinds:
AliasedReadError: a read that on the device sees another tensor's data, both placed at the same address by direct
allocation (nki_sim/placement.py); WriteRaceError: two programs of an SPMD launch write different values to the
same HBM element, so the device's result depends on which writes last (nki_sim/races.py).
StaleOutputError: the kernel returned an output tensor that this call did not create (e.g. one cached from an
earlier call); its values cannot be the answer for this call's inputs.
"""
import difflib


class CompileError(Exception):
    def __init__(self, message, line=0):
        super().__init__(message)
        self.message = message
        self.line = line


class UnsupportedApi(CompileError, AttributeError):
    """An nl/nisa name the simulator does not implement (also an AttributeError, so hasattr() answers False)."""


# APIs not modelled by design, with the reason.
NOT_MODELLED = dict.fromkeys(
    ('register_alloc', 'register_load', 'register_store', 'register_move', 'dynamic_range', 'fori_loop',
     'while_loop', 'VirtualRegister'),
    'virtual registers and data-dependent control flow (nisa.register_*, nl.dynamic_range, nl.fori_loop, while '
    'loops on a register) are not modelled: the simulator records a kernel\'s instructions from a run on the input '
    'shapes alone, without the values a trip count or condition would come from')

# Names of NKI's random-number API (nl.rand, nisa.rand2, the generator state calls).
RANDOM_NAMES = frozenset({'rand', 'random_seed', 'rand2', 'rng', 'rand_set_state', 'rand_get_state',
                          'set_rng_seed'})


# Collectives between NeuronCores (nl.all_reduce of Beta 1, nisa.sendrecv of Beta 2, the nki.collectives names).
COLLECTIVE_NAMES = frozenset({'all_reduce', 'all_gather', 'reduce_scatter', 'all_to_all', 'sendrecv',
                              'collective_permute', 'collective_permute_implicit'})


def not_modelled_cause(name):
    """Why a family of NKI names is not modelled by design ('' for a name merely not implemented)."""
    if name.endswith('_mx') or name.endswith('_x4'):
        return ('MX (microscaling) formats are not modelled: their packed x4 dtypes and block scales have no numpy '
                'form here')
    if name in NOT_MODELLED:
        return NOT_MODELLED[name]
    if name in RANDOM_NAMES:
        return 'random numbers are not modelled: a random result cannot be checked against a reference'
    if name in COLLECTIVE_NAMES:
        return 'collectives (all_reduce, all_gather, collective_permute, sendrecv, ...) are not modelled'
    if name in ('gemm_grid', 'gemm_stationary_grid'):
        return ('the Beta 1 nki.language source lists it ("Tile definition for ... Matrix Multiplication on Tensor '
                'Engine") with neither parameters nor a result, and no page documents a use; index a tile with '
                'slices, nl.arange or nl.mgrid')
    if name == 'prelu':
        return ('the parametric ReLU (an activation op of an NKI 0.3 nki.language stub) takes its negative slope from '
                'nisa.activate2\'s relu_param (NeuronCore-v4, whose parameterized activations are not modelled); '
                'no page gives nisa.activation a slope')
    if name == 'bfp16':
        return ('the Beta 1 nki.language source describes its one member, bfp16.min, both as the minimum bfloat16 '
                'value and as the bit pattern 0xff80, which is negative infinity; write the value meant '
                '(-3.3895314e38 or -np.inf)')
    if name == 'builtin_custom_op':
        return ('a custom operator from a compiled library has no documented semantics (the API stub gives only '
                'its signature)')
    return ''


def missing_api(prefix, name, known=()):
    """Module __getattr__ of nl / nisa: dunder lookups fail normally, API names as UnsupportedApi. `known`: the
    module's names; a name one or two letters away from one of them is most likely a misspelling
    (`nisa.ativation` in a public MoE kernel), and the message names the function meant."""
    if name.startswith('__'):
        raise AttributeError(name)
    cause = not_modelled_cause(name)
    if cause:
        raise UnsupportedApi(f'{prefix}.{name} is not supported by the simulator: {cause}')
    close = difflib.get_close_matches(name, [k for k in known if not k.startswith('_')], n=1, cutoff=0.85)
    hint = f'; did you mean {prefix}.{close[0]}?' if close else ''
    raise UnsupportedApi(f'{prefix}.{name} is not supported by the simulator (docs/simulator.md lists what is)'
                         f'{hint}')


class WrongOnDeviceError(CompileError):
    """The simulated run computes a result the device would not: the kernel's verdict is INCORRECT."""


class AliasedReadError(WrongOnDeviceError):
    """A read of bytes that another tensor placed at the same address (direct allocation) wrote over since: on the
    device it sees the other tensor's data (nki_sim/placement.py)."""


class WriteRaceError(WrongOnDeviceError):
    """Two programs of an SPMD launch write different values to one HBM element (nki_sim/races.py)."""


class StaleStateError(Exception):
    pass


class StaleOutputError(Exception):
    pass

"""The NeuronCore generation a run simulates: trn1 (NeuronCore-v2, the default) or trn2 (NeuronCore-v3), the
profiler's sim-trn1 and sim-trn2 devices. A kernel sees it through `nisa.get_nc_version()` and the SBUF size of
`nl.tile_size` (24 MiB on trn1, 28 MiB on trn2: Trainium2 Architecture Guide for NKI). Both protocol steps set it
before any kernel code runs or any program is replayed, so a kernel that branches on it records the branch of the
device it is profiled for."""

from .errors import CompileError

# target name -> (nisa.nc_version value, SBUF bytes per partition, physical NeuronCores of one logical core)
# Trn1 supports only LNC=1 (Neuron compiler error NCC_EARG001: "On trn1, only lnc=1 is supported"); a Trn2 logical
# core is two physical cores (the LNC pages)
TARGETS = {'trn1': (2, 192 * 1024, 1), 'trn2': (3, 224 * 1024, 2)}
DEFAULT = 'trn1'

_current = [DEFAULT]


def set_target(name: str) -> None:
    """Simulate NeuronCores of `name` (a key of TARGETS) from now on."""
    if name not in TARGETS:
        raise ValueError(f'unknown target {name!r}: one of {", ".join(sorted(TARGETS))}')
    _current[0] = name


def nc_version() -> int:
    """The generation number nisa.get_nc_version() answers (nisa.nc_version.gen2 or gen3)."""
    return TARGETS[_current[0]][0]


def sbuf_partition_bytes() -> int:
    """SBUF bytes per partition of the simulated NeuronCore."""
    return TARGETS[_current[0]][1]


def logical_core_size() -> int:
    """Physical NeuronCores an nl.nc(n) launch can spread over: 1 on trn1, 2 on trn2."""
    return TARGETS[_current[0]][2]


def require_generation(feature: str, minimum: int, note: str) -> None:
    """A COMPILE_ERROR unless the simulated NeuronCore is NeuronCore-v`minimum` or newer (the API page's note, quoted
    in `note`): a kernel using it does not compile for the device it is profiled for."""
    version = nc_version()
    if version >= minimum:
        return
    simulated = next(name for name, fields in TARGETS.items() if fields[0] == version)
    newer = [name for name, fields in sorted(TARGETS.items()) if fields[0] >= minimum]
    hint = f'profile it for {newer[0]} (device sim-{newer[0]})' if newer else \
        f'the simulator models {" and ".join(sorted(TARGETS))} only'
    raise CompileError(f'{feature} is available only on NeuronCore-v{minimum} and newer ({note}); the simulated '
                       f'NeuronCore is {simulated} (NeuronCore-v{version}): {hint}')

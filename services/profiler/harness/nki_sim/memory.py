"""Memory spaces and physical allocations.

A `Buffer` is a memory space a tensor is declared in (nl.sbuf, nl.psum, nl.hbm, nl.shared_hbm, ...).
An `Alloc` is one physical buffer the trace talks about: one block of an on-chip tensor (allocated lazily on
first touch), one anonymous instruction-result tile, or one HBM tensor. It holds the data (a flat numpy array,
or None in timing-only mode and after it was freed) and the access history used for dependency tracking.
"""
import itertools

_SERIALS = itertools.count()


class Buffer:
    __slots__ = ('name', 'trace_name', 'on_chip', 'scratch')

    def __init__(self, name, trace_name, on_chip, scratch=False):
        self.name = name
        self.trace_name = trace_name
        self.on_chip = on_chip
        self.scratch = scratch

    def __repr__(self):
        return f'nl.{self.name}'


sbuf = Buffer('sbuf', 'sbuf', True)
psum = Buffer('psum', 'psum', True)
shared_hbm = Buffer('shared_hbm', 'hbm', False)
hbm = Buffer('hbm', 'hbm', False, scratch=True)
private_hbm = Buffer('private_hbm', 'hbm', False, scratch=True)
constant_hbm = Buffer('constant', 'hbm', False)



class _RegionType(type):
    def __instancecheck__(cls, value):
        return isinstance(value, Buffer)


class MemoryRegion(metaclass=_RegionType):
    """`nl.MemoryRegion` (the NKI 2.32+ nki.language stub: "Memory region constants for NKI tensors", the type of a
    tensor's `.buffer`, with members sbuf, psum, private_hbm and shared_hbm, and `nl.hbm` its private_hbm): the
    members are the memories above, so `nl.MemoryRegion.sbuf is nl.sbuf`, and every memory, a tensor's `.buffer`
    included, is an instance (`isinstance(t.buffer, nl.MemoryRegion)`, as the NKI Library's tile helpers check)."""
    sbuf = sbuf
    psum = psum
    private_hbm = private_hbm
    shared_hbm = shared_hbm

class Alloc:
    """One physical allocation. `free` is elements per partition (HBM: parts=1, free=all elements)."""
    __slots__ = ('id', 'serial', 'buffer', 'parts', 'free', 'itemsize', 'data', 'version', 'writes', 'reads',
                 'last_use', 'site', 'freed', 'canonical', 'group', 'block', 'origin', 'fresh', 'written')

    def __init__(self, buffer, parts, free, itemsize, data, site):
        self.id = -1                 # trace id, assigned on first touch (on-chip only)
        self.serial = next(_SERIALS)  # unique for the process lifetime; identifies the allocation in CSE keys
        self.buffer = buffer
        self.parts = parts
        self.free = free
        self.itemsize = itemsize
        self.data = data
        self.version = 0             # bumped on every write; part of CSE keys
        self.writes = []             # [(instr, region, loop_context, accumulating, footprint)]
        self.written = False         # an instruction wrote it (the outputs of a kernel that returns nothing)
        self.reads = []              # [(instr, p0, p1, f0, f1)]
        self.last_use = -1
        self.site = site
        self.freed = False
        self.canonical = None        # HBM: the tensor whose shape index boxes refer to
        # A block of a tensor with block dimensions: `group` is a one-element list shared by the tensor's
        # blocks (the trace id of its first traced block, set on first touch), `block` the flat block index.
        self.group = None
        self.block = 0
        # (value key, write region, version) of the load that wrote this allocation last, while that write is
        # its latest: two allocations loaded from the same unchanged HBM region hold the same value (CSE keys)
        self.origin = None
        # uninitialized PSUM (nl.ndarray): per element, has no instruction written it yet (a matmul's first add
        # into such an element starts its accumulation group, so it overwrites); None elsewhere
        self.fresh = None

"""glibc malloc tuning for tile-sized allocations.

Simulated tiles are typically 64 KiB to 4 MiB. With glibc defaults such buffers are mmap'ed or trimmed back to
the OS when freed, so every new result array page-faults fresh zero pages, which costs more than the arithmetic.
Serving them from the heap and not trimming it keeps freed tile memory in the process for reuse.
"""
import ctypes

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
HEAP_SERVED_UP_TO = 32 * 2**20
KEEP_FREED_UP_TO = 2**31 - 1


def tune_allocator() -> None:
    """Best effort; a no-op where glibc's mallopt is unavailable. Loads libc by its soname (no library search,
    which would spawn a subprocess)."""
    try:
        libc = ctypes.CDLL('libc.so.6')
        libc.mallopt(M_MMAP_THRESHOLD, HEAP_SERVED_UP_TO)
        libc.mallopt(M_TRIM_THRESHOLD, KEEP_FREED_UP_TO)
    except (OSError, AttributeError):
        pass

"""Output checking: kernel outputs against reference outputs by relative L2 error in float64.

Output counts and shapes must match; NaN or Inf in a kernel output where the reference is finite fails
explicitly; where the reference itself holds NaN or +/-Inf (a causal mask's -inf, say), the kernel must hold the
same value there, and those elements are left out of the L2 norms; non-float outputs must match exactly; a float
output passes when ||k - r||_2 <= tolerance * ||r||_2 over the elements where the reference is finite. With the default tolerance
(`widen`), a reference output in a float format narrower than float32 (float16) is compared at no less than
4 machine epsilons of that format: a kernel cannot match it better than the format's rounding. The reference's
dtype decides, never the kernel's.
"""
import numpy as np


# Where a NaN the reference does not have may come from: nki_sim fills memory a kernel declared with nl.ndarray
# (SBUF, PSUM, HBM) with NaN until an instruction writes it (nki_sim/tensors.py, `uninitialized`).
UNINITIALIZED_HINT = (' (the simulator fills SBUF, PSUM and HBM declared with nl.ndarray with NaN until an instruction '
                      'writes it, and the masked-off elements of a masked instruction\'s new tile, as the device '
                      'leaves such memory holding stale data: a kernel that reads it before '
                      'writing it is wrong on the device, e.g. an accumulator never zeroed; a matmul\'s first add '
                      'into PSUM starts its accumulation group)')


class Comparison:
    def __init__(self, ok, rel_l2, message=''):
        self.ok = ok
        self.rel_l2 = rel_l2
        self.message = message


def as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def compare(kernel_outputs, reference_outputs, transform, tolerance, widen=False):
    """Convert the kernel outputs with the problem's transform_nki_outputs, then check each one."""
    references = as_tuple(reference_outputs)
    produced = as_tuple(kernel_outputs)
    if len(produced) != len(references):
        return Comparison(False, None, f'kernel returned {len(produced)} output(s); the reference has '
                                       f'{len(references)}')
    try:
        converted = as_tuple(transform(kernel_outputs, reference_outputs))
    except Exception as error:
        shapes = ', '.join(str(getattr(v, 'shape', type(v).__name__)) for v in produced)
        return Comparison(False, None, f'kernel output(s) of shape {shapes} do not convert to the reference '
                                       f'layout: {type(error).__name__}: {error}')
    worst = 0.0
    for index, (got, want) in enumerate(zip(converted, references)):
        result = _compare_one(index, got, want, output_tolerance(tolerance, want) if widen else tolerance)
        if not result.ok:
            return result
        worst = max(worst, result.rel_l2 or 0.0)
    return Comparison(True, worst)


def output_tolerance(tolerance, want):
    """The default bound for one reference output: at least 4 machine epsilons of a float format narrower than
    float32 (float16: 3.9e-3)."""
    dtype = np.asarray(want).dtype
    if dtype.kind == 'f' and dtype.itemsize < 4:
        return max(tolerance, 4 * float(np.finfo(dtype).eps))
    return tolerance


def _compare_one(index, got, want, tolerance):
    label = f'output {index}'
    want = np.asarray(want)
    got = np.asarray(got) if got is not None else None
    if got is None:
        return Comparison(False, None, f'{label}: kernel produced no value')
    if got.shape != want.shape:
        return Comparison(False, None, f'{label}: shape {got.shape} does not match the reference shape {want.shape}')
    if want.dtype.kind not in 'fc':
        if np.array_equal(got, want):
            return Comparison(True, 0.0)
        return Comparison(False, None, f'{label}: {np.count_nonzero(got != want)} element(s) differ from the '
                                       f'reference (exact match required for {want.dtype})')
    stats = _error_statistics(got.reshape(-1), want.reshape(-1))
    if stats['nan'] or stats['inf']:
        return Comparison(False, None, f"{label}: contains {stats['nan']} NaN and {stats['inf']} Inf value(s)"
                                       f"{' where the reference is finite' if stats['special'] else ''}"
                                       f"{UNINITIALIZED_HINT if stats['nan'] else ''}")
    if stats['unmatched']:
        return Comparison(False, None, f"{label}: {stats['unmatched']} of the reference's {stats['special']} NaN / "
                                       'Inf value(s) differ in the kernel output (it must hold the same non-finite '
                                       'value there)')
    error, scale = stats['error'], stats['scale']
    rel = error / scale if scale > 0 else (0.0 if error == 0 else float('inf'))
    if error <= tolerance * scale:
        return Comparison(True, rel)
    return Comparison(False, rel, f'{label}: relative L2 error {rel:.3e} exceeds tolerance {tolerance:.1e} '
                                  f"(max abs diff {stats['max_abs']:.3e})")


CHUNK = 1 << 22


def _error_statistics(got, want):
    """Over the elements where the reference is finite: L2 norms of (got - want) and of want in float64, max
    |got - want|, the kernel's NaN/Inf counts; of the reference's NaN/Inf elements (`special`), how many the kernel
    does not reproduce exactly (`unmatched`). Chunked so that gigabyte outputs need no full-size float64 copies."""
    error = scale = max_abs = 0.0
    nan = inf = special = unmatched = 0
    for start in range(0, got.size, CHUNK):
        g = got[start:start + CHUNK].astype(np.float64)
        w = want[start:start + CHUNK].astype(np.float64)
        reference_finite = np.isfinite(w)
        if not reference_finite.all():
            gs, ws = g[~reference_finite], w[~reference_finite]
            special += ws.size
            unmatched += int(ws.size - np.count_nonzero((gs == ws) | (np.isnan(gs) & np.isnan(ws))))
            g, w = g[reference_finite], w[reference_finite]
        finite = np.isfinite(g)
        if not finite.all():
            bad = int(np.isnan(g).sum())
            nan += bad
            inf += int(g.size - finite.sum()) - bad
            continue
        g -= w
        error += float(np.dot(g, g))
        scale += float(np.dot(w, w))
        max_abs = max(max_abs, float(np.abs(g).max()) if g.size else 0.0)
    return {'error': error ** 0.5, 'scale': scale ** 0.5, 'max_abs': max_abs, 'nan': nan, 'inf': inf,
            'special': special, 'unmatched': unmatched}

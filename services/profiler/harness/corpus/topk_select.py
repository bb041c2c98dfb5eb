"""Selection instructions of a top-k (MoE routing style): nisa.max8 takes the 8 largest scores of each partition,
nisa.nc_find_index8 finds where they are, nisa.nc_match_replace8 knocks them out so a second round yields the next
8; nisa.tensor_copy_predicated keeps the scores at or above the 16th largest and zeroes the rest; nisa.range_select
keeps columns 10..29 and reduces them to their maximum.
scores [64, 100] -> values [64, 16], positions [64, 16], kept [64, 100], window max [64, 1]."""
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(scores):
    p, n = scores.shape
    values = nl.ndarray((p, 16), dtype=scores.dtype, buffer=nl.shared_hbm)
    positions = nl.ndarray((p, 16), dtype=nl.uint32, buffer=nl.shared_hbm)
    kept = nl.ndarray((p, n), dtype=scores.dtype, buffer=nl.shared_hbm)
    window_max = nl.ndarray((p, 1), dtype=scores.dtype, buffer=nl.shared_hbm)

    s = nl.load(scores)
    first = nisa.max8(src=s)
    where_first = nisa.nc_find_index8(data=s, vals=first)
    rest = nisa.nc_match_replace8(data=s, vals=first, imm=-1e30)
    second = nisa.max8(src=rest)
    where_second = nisa.nc_find_index8(data=rest, vals=second)
    nl.store(values[:, 0:8], value=first)
    nl.store(values[:, 8:16], value=second)
    nl.store(positions[:, 0:8], value=where_first)
    nl.store(positions[:, 8:16], value=where_second)

    threshold = second[:, 7:8]
    keep = nl.greater_equal(s, threshold, dtype=nl.uint8)
    out = nl.zeros((p, n), dtype=scores.dtype, buffer=nl.sbuf)
    nisa.tensor_copy_predicated(src=s, dst=out, predicate=keep)
    nl.store(kept, value=out)

    low = nl.full((p, 1), 10.0, dtype=nl.float32, buffer=nl.sbuf)
    high = nl.full((p, 1), 30.0, dtype=nl.float32, buffer=nl.sbuf)
    best = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.range_select(on_true_tile=s, comp_op0=nl.greater_equal, comp_op1=nl.less, bound0=low, bound1=high,
                      reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_res=best, reduce_op=nl.maximum)
    nl.store(window_max, value=best)
    return values, positions, kept, window_max

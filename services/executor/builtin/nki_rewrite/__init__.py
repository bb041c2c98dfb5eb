"""nki_rewrite: the builtin (no-LLM) optimizer's rewrite engine for NKI kernels.

    from nki_rewrite import analyze, apply
    report = analyze(source, 'kernel.py')            # applicable transformations + static features
    result = apply(source, 'widen_dma', 'S21', {})   # {'ok': True, 'source': ..., ...} or {'ok': False, 'reason'}

Both functions return plain JSON-serialisable dicts and never raise on bad input.
"""
from .engine import analyze, apply, catalogue
from .kernel_ast import RewriteError
from .plan import Plan, PlanError

__all__ = ['analyze', 'apply', 'catalogue', 'Plan', 'PlanError', 'RewriteError']

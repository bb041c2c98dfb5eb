"""The catalogue of semantics-preserving NKI rewrites, one module per transformation.

Each transformation (see base.py) lists its candidate sites in a kernel and applies itself at one site, or
raises RewriteError with the precise reason it does not apply there. Shared checks are in common.py; the
legality rules are in the README.
"""
from .base import Applied, Candidate, Transformation
from .catalogue import BY_ID, CATALOGUE

__all__ = ['Applied', 'BY_ID', 'CATALOGUE', 'Candidate', 'Transformation']

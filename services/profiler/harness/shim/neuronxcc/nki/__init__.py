"""neuronxcc.nki backed by nki_sim (see nki_sim/surface.py)."""
import sys

from nki_sim import surface

surface.populate(sys.modules[__name__])

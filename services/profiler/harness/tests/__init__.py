"""Harness tests: run with /usr/bin/python3 -m unittest discover -s services/profiler/harness/tests
-t services/profiler/harness (from the repository root)."""
import nki_sim

nki_sim.install_import_shim()

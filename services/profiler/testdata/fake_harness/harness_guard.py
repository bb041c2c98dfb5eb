"""Test stand-in for the harness guard: runs the script given after the kernel path."""
import runpy
import sys

sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name='__main__')

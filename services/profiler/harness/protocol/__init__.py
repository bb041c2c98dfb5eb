"""The profiling protocol around the simulator: load a problem and a kernel, check correctness over seeds,
trace a final run on fresh inputs, and report one verdict (see evaluation.evaluate)."""

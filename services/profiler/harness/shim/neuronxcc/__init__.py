"""Import shim: the neuronxcc package as far as NKI kernels use it, backed by nki_sim."""

# expect: RUNTIME_ERROR
# message: characters more)
# An 8 MiB exception message: the result message is cut short (it made the reply larger than gRPC allows, so a
# kernel's failure became an RPC error).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    raise ValueError('A' * (8 << 20))

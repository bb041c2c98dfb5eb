"""NKI's simulation mode, in the style of the NKI API examples: the kernel returns tiles, an SBUF tile (a DMA
transpose of the input) and a PSUM tile (the Gram matrix x^T x), and the harness stores each to an output."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit(mode="simulation")
def kernel(x):
    tile = nl.load(x)
    return nisa.dma_transpose(x), nisa.nc_matmul(tile, tile)

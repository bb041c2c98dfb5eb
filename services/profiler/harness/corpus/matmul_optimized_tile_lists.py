"""Matmul tutorial step 4 (our own kernel) in the current tutorial's style: the K-block's tiles are Python lists
of separately declared SBUF tiles (one declaration site allocating a group of tiles per iteration), calls pass
their destination (`dst=`), and the partial sums live in a list of SBUF tiles. result = lhsT.T @ rhs."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

BM = 4      # 128-row output tiles per M block
BN = 2      # 512-column output tiles per N block
BK = 8      # 128-deep K tiles per K block


@nki.jit
def kernel(lhsT, rhs):
    K, M = lhsT.shape
    N = rhs.shape[1]
    bm = min(BM, M // 128)
    bn = min(BN, N // 512)
    bk = min(BK, K // 128)
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for nb in nl.affine_range(N // (512 * bn)):
        sums = []
        for _ in range(M // 128):
            row = []
            for _ in range(bn):
                tile = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=tile, value=0.0)
                row.append(tile)
            sums.append(row)
        for kb in nl.sequential_range(K // (128 * bk)):
            b_tiles = []
            for k in range(bk):
                b = nl.ndarray((128, 512 * bn), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b, src=rhs[(kb * bk + k) * 128:(kb * bk + k + 1) * 128,
                                             nb * 512 * bn:(nb + 1) * 512 * bn])
                b_tiles.append(b)
            for mb in nl.affine_range(M // (128 * bm)):
                a_tiles = []
                for k in range(bk):
                    a = nl.ndarray((128, 128 * bm), dtype=lhsT.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=a, src=lhsT[(kb * bk + k) * 128:(kb * bk + k + 1) * 128,
                                                  mb * 128 * bm:(mb + 1) * 128 * bm])
                    a_tiles.append(a)
                for i in range(bm):
                    for j in range(bn):
                        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                        for k in range(bk):
                            nisa.nc_matmul(dst=acc, stationary=a_tiles[k][:, i * 128:(i + 1) * 128],
                                           moving=b_tiles[k][:, j * 512:(j + 1) * 512])
                        total = sums[mb * bm + i][j]
                        nisa.tensor_tensor(dst=total, data1=total, data2=acc, op=nl.add)
        for mt in range(M // 128):
            packed = nl.ndarray((128, 512 * bn), dtype=result.dtype, buffer=nl.sbuf)
            for j in range(bn):
                nisa.tensor_copy(dst=packed[:, j * 512:(j + 1) * 512], src=sums[mt][j])
            nisa.dma_copy(dst=result[mt * 128:(mt + 1) * 128, nb * 512 * bn:(nb + 1) * 512 * bn], src=packed)
    return result

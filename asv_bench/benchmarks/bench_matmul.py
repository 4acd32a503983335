"""Matrix products: square matmul at three sizes (float BLAS and the integer kernel), a batch of
small products, matrix-vector, and einsum (attention scores, a row-wise dot)."""
from .common import DEVICES, DTYPES, FLOATS, LIBRARIES, Peer, warm


class Matmul:
    params = (LIBRARIES, DEVICES, (64, 256, 1024), DTYPES)
    param_names = ("library", "device", "n", "dtype")

    def setup(self, library, device, n, dtype):
        if n == 1024 and dtype == "int32":
            raise NotImplementedError("no BLAS for integers: NumPy takes seconds")
        peer = Peer(library, device)
        self.sync = peer.sync
        self.a, self.b = peer.random((n, n), dtype, seed=0), peer.random((n, n), dtype, seed=1)
        self.out = peer.mod.empty_like(self.a)
        self.matmul = peer.mod.matmul
        warm(self)

    def time_matmul(self, *_):
        self.sync(self.a @ self.b)

    def time_matmul_out(self, *_):
        self.sync(self.matmul(self.a, self.b, out=self.out))


class Batched:
    """64 products of 64x64 matrices, and a 2048x2048 matrix times a vector."""
    params = (LIBRARIES, DEVICES, FLOATS)
    param_names = ("library", "device", "dtype")

    def setup(self, library, device, dtype):
        peer = Peer(library, device)
        self.sync = peer.sync
        self.a, self.b = peer.random((64, 64, 64), dtype), peer.random((64, 64, 64), dtype, 1)
        self.m, self.v = peer.random((2048, 2048), dtype), peer.random(2048, dtype, seed=2)
        warm(self)

    def time_batched(self, *_):
        self.sync(self.a @ self.b)

    def time_matvec(self, *_):
        self.sync(self.m @ self.v)


class Einsum:
    """einsum of float32 operands: attention scores of 8 x 8 heads of 128 queries and keys of 64
    (a batched product), and a row-wise dot of 4096 x 64 (a product summed over one dim)."""
    params = (LIBRARIES, DEVICES, ("bhqd,bhkd->bhqk", "bi,bi->b"))
    param_names = ("library", "device", "equation")

    def setup(self, library, device, equation):
        peer = Peer(library, device)
        shape = (8, 8, 128, 64) if equation.startswith("bhqd") else (4096, 64)
        self.sync, self.einsum, self.equation = peer.sync, peer.mod.einsum, equation
        self.a, self.b = peer.random(shape, "float32"), peer.random(shape, "float32", seed=1)
        warm(self)

    def time_einsum(self, *_):
        self.sync(self.einsum(self.equation, self.a, self.b))


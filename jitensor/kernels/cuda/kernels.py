"""CUDA kernels for creation and copies: grid-stride loops over a 4-D view (`strided.as_4d`
coalesces any layout into one), with a flat path when every operand is dense. Each buffer comes
as (pointer, element offset, four element strides); see access.py."""
from numba import cuda

from ..scalar import creation as scalar
from .access import load, offset4, store, store4
from .driver import jit


@jit
def fill(o, oo, s0, s1, s2, s3, n, n1, n2, n3, dense, value):
    i = cuda.grid(1)
    while i < n:
        store(o, oo + (i if dense else offset4(i, n1, n2, n3, s0, s1, s2, s3)), value)
        i += cuda.gridsize(1)


@jit
def fill_vec4(o, o4, n4, word):
    """n4 16-byte chunks from chunk o4 of the float32 view `o` of a buffer, each four copies
    of `word` (any 4-byte pattern, as a float32: stores copy its bits)."""
    i = cuda.grid(1)
    while i < n4:
        store4(o, o4 + i, (word, word, word, word))
        i += cuda.gridsize(1)


@jit
def copy(o, oo, s0, s1, s2, s3, x, xo, t0, t1, t2, t3, n, n1, n2, n3, dense):
    """o = x with C casting (a store converts the loaded value to o's type)."""
    i = cuda.grid(1)
    while i < n:
        if dense:
            store(o, oo + i, load(x, xo + i))
        else:
            store(o, oo + offset4(i, n1, n2, n3, s0, s1, s2, s3),
                  load(x, xo + offset4(i, n1, n2, n3, t0, t1, t2, t3)))
        i += cuda.gridsize(1)


@jit
def arange(o, oo, n, start, step):
    i = cuda.grid(1)
    while i < n:
        store(o, oo + i, start + i * step)
        i += cuda.gridsize(1)


@jit
def linspace(o, oo, n, start, end):
    i = cuda.grid(1)
    while i < n:
        store(o, oo + i, scalar.linspace_at(i, n, start, end))
        i += cuda.gridsize(1)


@jit
def eye(o, oo, rows, cols):
    i = cuda.grid(1)
    while i < rows * cols:
        store(o, oo + i, i // cols == i % cols)
        i += cuda.gridsize(1)


@jit
def uniform(o, oo, n, seed, offset, low, high, bits):
    i = cuda.grid(1)
    while i < n:
        store(o, oo + i, low + (high - low) * scalar.uniform(seed, offset + i, bits))
        i += cuda.gridsize(1)


@jit
def normal(o, oo, n, seed, offset, mean, std):
    i = cuda.grid(1)
    while i < n:
        store(o, oo + i, mean + std * scalar.normal(seed, offset + 2 * i))
        i += cuda.gridsize(1)


@jit
def randint(o, oo, n, seed, offset, low, span):
    i = cuda.grid(1)
    while i < n:
        store(o, oo + i, scalar.randint(seed, offset + i, low, span))
        i += cuda.gridsize(1)

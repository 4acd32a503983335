"""Op front ends: argument checks, same-device check, type promotion, broadcasting, output
allocation, then one call into `backend(device)`. Each module lists the Tensor methods it
provides in TENSOR_METHODS; they are attached to Tensor here, once, at import (all but
activation's, conv's, loss's, norm's and pool's: torch has those in nn.functional only)."""
from ..autograd.wrap import install
from ..tensor import Tensor
from . import (
    activation,
    attention,
    complex_ops,
    conv,
    elementwise,
    factor,
    factor_legacy,
    householder,
    indexing,
    linalg,
    loss,
    matrix,
    matrix_function,
    native_extra,
    norm,
    pointwise,
    pool,
    recurrent,
    reduction,
    sampling,
    scatter,
    shape,
    sort,
    sparse,
    spectral,
    statistics,
)

# ops record the graph when needed
install((elementwise, indexing, linalg, matrix, reduction, scatter, shape, sort, activation, loss,
         norm, conv, pool, factor, pointwise, sampling, statistics, recurrent, matrix_function,
         attention, complex_ops, spectral))

for _module in (elementwise, reduction, linalg, shape, indexing, scatter, matrix, sort, factor,
                factor_legacy, pointwise, sampling, statistics, householder,
                matrix_function, native_extra, complex_ops, spectral, sparse):
    for _name, _fn in _module.TENSOR_METHODS.items():
        setattr(Tensor, _name, _fn)

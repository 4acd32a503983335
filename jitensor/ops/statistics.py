"""Statistics, searching and counting, with torch's signatures, dtypes and errors: order
statistics (median, nanmedian, quantile, nanquantile, mode, kthvalue, msort), counting and
binning (unique, unique_consecutive, bincount, histc, histogram), searching (isin, searchsorted,
bucketize), moments (cov, corrcoef), integration (trapezoid, trapz, cumulative_trapezoid),
scans (cummax, cummin, cumprod, logcumsumexp) and index helpers (vander, combinations,
unravel_index, argwhere).

Everything is composed from jitensor's own ops (sort, gather, scatter_add, cumsum, cat,
elementwise ops), so it runs on every device and autograd records it through those ops:

- Order statistics sort along the dim (stable, NaN last, as torch's sort) and gather at the
  wanted rank, so values take their gradient at the index returned. Among equal values that
  index is the stable sort's (the first in input order at that rank); torch's CPU kernels
  select with a quickselect, whose index among ties is unspecified (its docs say so).
- The prefix scans (cummax, cummin, cumprod, logcumsumexp) are Hillis-Steele scans: log2(n)
  passes of one elementwise op over shifted halves, O(n log n) work, O(n) memory per pass.
  cumprod and logcumsumexp therefore round in a tree order, not left to right (a few ulps from
  torch's sequential loop; integers are exact).
- searchsorted runs torch's binary search itself, every value in lock step: bit_length(n)
  rounds of a gather and a comparison over the values, O(m log n) work and O(m) extra memory
  for m values. It takes the same steps as torch's loop (the same comparisons, `!(mid >= v)`
  and `!(mid > v)`), so it returns what torch does even for NaN or unsorted input.

Results whose size depends on the data (unique, bincount, histc's inferred range, argwhere,
combinations) read sizes back to the host, as torch's do."""
import builtins
import itertools
import math
import operator
import warnings

import numpy as np

from .. import dtypes
from ..autograd.graph import differentiable, node_class
from ..creation import arange, empty, full, ones, zeros
from ..creation import tensor as _tensor
from ..dtypes import to_dtype
from ..kernels.registry import backend
from ..tensor import Tensor
from ._common import dim as _dim
from ._common import in_place, same_device, write_out, write_pair
from .elementwise import (
    ceil,
    clamp,
    floor,
    isnan,
    logaddexp,
    logical_not,
    maximum,
    minimum,
    round,
    where,
)
from .indexing import gather, nonzero
from .reduction import _return_type, aminmax, any, argmax, cumsum, return_types, sum
from .scatter import scatter, scatter_add
from .shape import cat, flip, movedim, narrow, unbind
from .sort import argsort, sort

__all__ = ["argwhere", "bincount", "bucketize", "combinations", "corrcoef", "cov", "cummax",
           "cummin", "cumprod", "cumulative_trapezoid", "histc", "histogram", "isin",
           "kthvalue", "logcumsumexp", "median", "mode", "msort", "nanmedian", "nanquantile",
           "quantile", "searchsorted", "trapezoid", "trapz", "unique", "unique_consecutive",
           "unravel_index", "vander"]

# in-place methods built from the out-of-place op (autograd records them through its parts)
COMPOSED = ("cumprod",)

# torch.return_types of this module's named pairs, added to jitensor.return_types
for _name in ("median", "nanmedian", "mode", "kthvalue", "cummax", "cummin"):
    setattr(return_types, _name, _return_type(_name))
return_types.histogram = _return_type("histogram", ("hist", "bin_edges"))
for _name, _args in (("median", "dim"), ("nanmedian", "dim"), ("mode", "dim"),
                     ("kthvalue", "k, dim"), ("cummax", "dim"), ("cummin", "dim"),
                     ("histogram", "bins")):
    _cls = getattr(return_types, _name)
    _cls.__doc__ = f"The ({', '.join(_cls._fields)}) that jitensor.{_name}(input, {_args}) returns."


# -- shared helpers -------------------------------------------------------------------------------
def _input(fn, input, name="input"):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(input).__name__}")
    return input


def _no_bool(fn, input):
    if input._dtype is dtypes.bool_:
        raise NotImplementedError(f"{fn}(): not implemented for 'Bool' input; convert it with "
                                  f".long() or .float()")


def _int(fn, value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{name}' must be int, not {type(value).__name__}")
    return int(value)


def _positions(n, d, ndim, device):
    """arange(n) shaped to broadcast along dim d of an ndim-dim tensor."""
    shape = [1] * ndim
    shape[d] = n
    return arange(n, dtype=dtypes.int64, device=device).reshape(shape)


def _scan(x, op, d):
    """The inclusive prefix scan of associative `op` along dim d (Hillis-Steele: log2(n)
    passes, each combining every element with the one s places before it)."""
    n = x.shape[d]
    s = 1
    while s < n:
        x = cat([narrow(x, d, 0, s), op(narrow(x, d, s, n - s), narrow(x, d, 0, n - s))], d)
        s *= 2
    return x


# -- median, nanmedian, kthvalue: one rank of the sorted dim --------------------------------------
def _at_rank(fn, input, dim, keepdim, rank):
    """(values, indices) of the element at sorted position rank(n, nan_count) along dim:
    rank returns an int or an int64 tensor of the kept shape (nan_count: NaNs per row)."""
    d = _dim(dim, input.ndim, fn)
    x = input.reshape(1) if input.ndim == 0 else input
    n = x.shape[d]
    if n == 0:
        raise IndexError(f"{fn}(): Expected reduction dim {d} to have non-zero size.")
    kept = list(x.shape)
    kept[d] = 1
    nans = sum(isnan(x.detach()), d, keepdim=True) if x._dtype.is_floating_point else None
    k = rank(n, nans)
    if not isinstance(k, Tensor):
        k = full(kept, k, dtype=dtypes.int64, device=x._device)
    values, indices = sort(x, d)
    v, i = gather(values, d, k), gather(indices, d, k)
    if input.ndim == 0:
        return v.reshape(()), i.reshape(())
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return v, i


def _median_rank(n, nans):
    """The lower middle, or the first NaN (NaN sorts last) where a row has one."""
    if nans is None:
        return (n - 1) // 2
    return where(nans > 0, n - nans, (n - 1) // 2)


def _nanmedian_rank(n, nans):
    """The lower middle of the values that are not NaN (0, a NaN, where all are NaN)."""
    if nans is None:
        return (n - 1) // 2
    valid = n - nans
    return where(valid > 0, (valid - 1) // 2, 0)


def _full_value(input, ignore_nan):
    fn = "nanmedian" if ignore_nan else "median"
    if not input.numel():
        if not input._dtype.is_floating_point:
            raise RuntimeError(f"{fn}(): the median of an empty {input._dtype.name} tensor is "
                               f"undefined (an integer has no NaN); pass a non-empty tensor")
        return full((), math.nan, dtype=input._dtype, device=input._device)
    return _at_rank(fn, input.reshape(-1), 0, False,
                    _nanmedian_rank if ignore_nan else _median_rank)[0]


def _evenly(g, result, input, ignore_nan):
    """torch's gradient of the whole-tensor median: shared evenly by the elements equal to
    it (by the NaNs where it is NaN)."""
    hit = (input == result) | (isnan(input) & isnan(result))
    return ((input, where(hit, g / sum(hit), 0.0)),)


_median_value = differentiable(_full_value, node_class("median", _evenly))


def _median(fn, input, dim, keepdim, out, ignore_nan):
    _input(fn, input)
    _no_bool(fn, input)
    if dim is None:
        if keepdim:
            raise TypeError(f"{fn}(): keepdim needs a dim; call {fn}(input, dim, keepdim=True)")
        if out is not None and not isinstance(out, Tensor):
            raise TypeError(f"{fn}(): a (values, indices) out needs a dim")
        value = _median_value(input, ignore_nan)
        return write_out(fn, out, value, exact=True)
    pair = _at_rank(fn, input, dim, keepdim, _nanmedian_rank if ignore_nan else _median_rank)
    return write_pair(fn, out, pair, getattr(return_types, fn))


def median(input, dim=None, keepdim=False, *, out=None):
    """The median of every element (a 0-d tensor), or with `dim` the pair
    ``return_types.median(values, indices)`` along it. Of an even count, the lower of the two
    middle values (torch's rule, not their mean); NaN where there is a NaN (index: the first
    NaN). The whole-tensor form shares its gradient evenly among the elements equal to the
    median, as torch's; the dim form sends it to the returned index."""
    return _median("median", input, dim, keepdim, out, False)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """median, ignoring NaN: the lower middle of the values that are not NaN (NaN, index 0,
    where all are NaN)."""
    return _median("nanmedian", input, dim, keepdim, out, True)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """``return_types.kthvalue(values, indices)``: the k-th smallest element along `dim`
    (k counts from 1; NaN is larger than every number)."""
    _input("kthvalue", input)
    _no_bool("kthvalue", input)
    k = _int("kthvalue", k, "k")
    d = _dim(dim, input.ndim, "kthvalue")
    n = input.shape[d] if input.ndim else 1
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}: "
                           f"k={k}, but the dimension has size {n}")
    pair = _at_rank("kthvalue", input, dim, keepdim, lambda n, nans: k - 1)
    return write_pair("kthvalue", out, pair, return_types.kthvalue)


def msort(input, *, out=None):
    """input sorted along dim 0 (values only): sort(input, dim=0).values."""
    _input("msort", input)
    return write_out("msort", out, sort(input, 0)[0], exact=True)


# -- quantile, nanquantile ------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _lerp(a, b, w):
    """torch's lerp, by its formula (the same rounding, and NaN where a and b are one infinity):
    a + w (b - a) below w = 0.5, b - (b - a)(1 - w) from there."""
    return where(w < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def _quantile(fn, input, q, dim, keepdim, interpolation, out, ignore_nan):
    _input(fn, input)
    if input._dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"quantile() input tensor must be either float or double dtype, got "
                           f"{input._dtype.name}; convert it with .float()")
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        if isinstance(q, bool) or not isinstance(q, (int, float, np.integer, np.floating)):
            raise TypeError(f"{fn}(): argument 'q' must be a number or a Tensor, not "
                            f"{type(q).__name__}")
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        q = full((), float(q), dtype=input._dtype, device=input._device)
    else:
        same_device(fn, input, q)
        if q.ndim > 1:
            raise RuntimeError(f"quantile() q must be a scalar or 1D tensor, got shape "
                               f"{list(q.shape)}")
        if q._dtype is not input._dtype:
            raise RuntimeError(f"quantile() q tensor must be same dtype as the input tensor "
                               f"({input._dtype.name}), got {q._dtype.name}")
        if q.numel() and not bool(((q >= 0) & (q <= 1)).all()):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        scalar_q = q.ndim == 0
        q = q.detach()  # (the rank is a step function of q: no gradient flows into it here)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if not input.numel():
        raise RuntimeError("quantile() input tensor must be non-empty")
    if dim is None:
        rows = input.reshape(-1)
    else:
        d = _dim(dim, input.ndim, fn)
        rows = movedim(input.reshape(1) if input.ndim == 0 else input, d, -1)
    srt = sort(rows, -1)[0]  # (..., n), NaN last
    n = srt.shape[-1]
    qs = q.reshape(-1)  # (nq,)
    last_nan = isnan(narrow(srt.detach(), -1, n - 1, 1))  # a row has a NaN iff its last is
    if ignore_nan:
        valid = sum(logical_not(isnan(srt.detach())), -1, keepdim=True)
        ranks = qs * (valid - 1)
        ranks = where(ranks < 0, 0.0, ranks)  # all NaN: rank 0, a NaN
    else:
        ranks = where(last_nan, float(n - 1), qs * (n - 1))  # a NaN: the last, a NaN
    ranks = {"lower": floor, "higher": ceil, "nearest": round}.get(interpolation,
                                                                   lambda r: r)(ranks)
    below = ranks.long()
    values = gather(srt, -1, below)
    if interpolation in ("linear", "midpoint"):
        weights = ranks - below if interpolation == "linear" else \
            where(below == ranks, 0.0, full((), 0.5, dtype=ranks._dtype, device=ranks._device))
        values = _lerp(values, gather(srt, -1, ceil(ranks).long()), weights)
    result = movedim(values, -1, 0)  # (nq, kept dims...)
    if keepdim and input.ndim:
        if dim is None:
            result = result.reshape([result.shape[0]] + [1] * input.ndim)
        else:
            result = result.unsqueeze(d + 1)
    if scalar_q:
        result = result.squeeze(0)
    return write_out(fn, out, result, exact=True)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The q-th quantiles (q: a number or a 1-D tensor in [0, 1], input's dtype) of input
    (float32/float64) over `dim` (None: every element). The rank q (n - 1) between two sorted
    values is read by `interpolation`: 'linear' (lerp), 'lower', 'higher', 'midpoint' (their
    mean) or 'nearest' (half to even). A 1-D q puts its dim first. NaN where a row has one."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, out, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile over the values that are not NaN (NaN where all are)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, out, True)


# -- mode -----------------------------------------------------------------------------------------
def mode(input, dim=-1, keepdim=False, *, out=None):
    """``return_types.mode(values, indices)``: the most frequent value along `dim` (the smallest
    of those tied; each NaN counts apart, as NaN != NaN) and the last index where it occurs, as
    torch's CPU kernel returns."""
    _input("mode", input)
    d = _dim(dim, input.ndim, "mode")
    x = input.reshape(1) if input.ndim == 0 else input
    n = x.shape[d]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    rows = movedim(x, d, -1)
    srt, order = sort(rows.detach(), -1)
    new = narrow(srt, -1, 1, n - 1) != narrow(srt, -1, 0, n - 1)  # a run starts at i + 1
    true = ones(list(srt.shape[:-1]) + [1], dtype=dtypes.bool_, device=x._device)
    pos = arange(n, dtype=dtypes.int64, device=x._device)
    start = _scan(where(cat([true, new], -1), pos, 0), maximum, -1)
    end = flip(_scan(flip(where(cat([new, true], -1), pos, n), [-1]), minimum, -1), [-1])
    best = argmax(end - start, -1, keepdim=True)  # the first (smallest) of the longest runs
    index = gather(order, -1, gather(end, -1, best))  # its last element, in input order
    value = gather(rows, -1, index)
    if keepdim or not input.ndim:
        value, index = movedim(value, -1, d), movedim(index, -1, d)
    else:
        value, index = value.squeeze(-1), index.squeeze(-1)
    if not input.ndim:
        value, index = value.reshape(()), index.reshape(())
    return write_pair("mode", out, (value, index), return_types.mode)


# -- unique, unique_consecutive -------------------------------------------------------------------
def _runs(rows, order, n, inverse_shape, return_inverse, return_counts):
    """The (first rows of each run, inverse, counts) of `rows` (n rows, in run order; `order`:
    where each came from, or None when in place)."""
    device = rows._device
    if rows.ndim == 1:
        new = narrow(rows, 0, 1, n - 1) != narrow(rows, 0, 0, n - 1) if n else rows != rows
    else:
        new = any(narrow(rows, 0, 1, n - 1) != narrow(rows, 0, 0, n - 1), 1) if n else \
            zeros(0, dtype=dtypes.bool_, device=device)
    first = cat([ones(min(n, 1), dtype=dtypes.bool_, device=device), new])
    starts = nonzero(first).reshape(-1)
    values = rows[starts]
    extra = []
    if return_inverse:
        run = cumsum(first, 0) - 1
        if order is not None:
            run = scatter(zeros(n, dtype=dtypes.int64, device=device), 0, order, run)
        extra.append(run.reshape(inverse_shape))
    if return_counts:
        bound = cat([starts, full((1,), n, dtype=dtypes.int64, device=device)])
        extra.append(narrow(bound, 0, 1, starts.numel()) - narrow(bound, 0, 0, starts.numel()))
    return values, extra


def _unique(fn, input, sort_first, return_inverse, return_counts, dim):
    _input(fn, input)
    x = input.detach()
    if dim is None:
        flat = x.reshape(-1)
        order = None
        if sort_first:
            flat, order = sort(flat)
        values, extra = _runs(flat, order, flat.numel(), input.shape, return_inverse,
                              return_counts)
    else:
        if input.ndim == 0:  # a 0-d tensor has no slices (torch's error)
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = _dim(dim, input.ndim, fn)
        moved = movedim(x, d, 0)
        n = moved.shape[0]
        if n and not moved.numel():
            raise RuntimeError(f"{fn}(): There are 0 sized dimensions, and they aren't "
                               f"selected, so unique cannot be applied")
        rows = moved.reshape(n, math.prod(moved.shape[1:]))
        order = None
        if sort_first and n:  # lexicographic: stable sorts by each column, the last first
            order = arange(n, dtype=dtypes.int64, device=x._device)
            for c in reversed(range(rows.shape[1])):
                order = order[argsort(rows[:, c][order])]
            rows = rows[order]
        values, extra = _runs(rows, order, n, (n,), return_inverse, return_counts)
        values = movedim(values.reshape((-1,) + tuple(moved.shape[1:])), 0, d)
    return tuple([values] + extra) if extra else values


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of input (flattened), or with `dim` its distinct slices along
    dim, in ascending (lexicographic) order; `sorted=False` sorts too, as torch's CPU kernel.
    With return_inverse / return_counts, also each element's (slice's) position in the result
    and each result's count (a tuple, in that order). NaNs are each distinct (NaN != NaN)."""
    return _unique("unique", input, True, return_inverse, return_counts, dim)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """unique of each run of equal consecutive elements (slices along `dim`): the first of
    every run, in input order."""
    return _unique("unique_consecutive", input, False, return_inverse, return_counts, dim)


# -- bincount, histc, histogram -------------------------------------------------------------------
def bincount(input, weights=None, minlength=0):
    """How often each of 0, 1, ..., max(input) occurs in `input` (1-D, non-negative integers),
    as int64, at least `minlength` bins; with `weights` (1-D, input's length) their sums
    instead: floating weights keep their dtype, other weights sum as float64 (torch's)."""
    _input("bincount", input)
    minlength = _int("bincount", minlength, "minlength")
    if input._dtype is dtypes.bool_ or input._dtype.is_floating_point:
        raise NotImplementedError(f"bincount(): not implemented for '{input._dtype.name}' input; "
                                  f"it counts non-negative integers (convert with .long())")
    if input.ndim != 1 or input.numel() and int(input.min()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError(f"minlength should be >= 0, got {minlength}")
    if weights is not None:
        _input("bincount", weights, "weights")
        same_device("bincount", input, weights)
        if weights.ndim != 1 or weights.shape[0] != input.shape[0]:
            raise RuntimeError(f"weights should be 1-d and have the same length as input "
                               f"({input.shape[0]}), got shape {list(weights.shape)}")
    length = builtins.max(int(input.max()) + 1 if input.numel() else 0, minlength)
    if weights is None:
        dtype, src = dtypes.int64, ones(input.shape[0], dtype=dtypes.int64, device=input._device)
    else:
        dtype = weights._dtype if weights._dtype.is_floating_point else dtypes.float64
        src = weights.to(dtype)
    return scatter_add(zeros(length, dtype=dtype, device=input._device), 0, input.long(), src)


def _float_only(fn, input):
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"{fn}(): not implemented for '{input._dtype.name}' input; "
                                  f"convert it with .float()")


def _bins_positive(fn, bins):
    if bins <= 0:
        raise RuntimeError(f"{fn}(): bins must be > 0, but got {bins} for dimension 0")


def _edges(lo, hi, bins, dtype, device):
    """bins + 1 equal bin edges from lo to hi in `dtype` by torch's linspace formula: the first
    half start + step i, the rest end - step (bins - i), each a fused multiply-add in dtype
    (emulated on the host in a wider type), so the edges and the bins they decide are torch's
    bit for bit where its kernel takes the scalar path (under a vector's width of edges)."""
    t = dtype.np.type
    start, end = t(lo), t(hi)
    step = t((end - start) / t(bins))
    wide = np.longdouble if t == np.float64 else np.float64
    i = np.arange(bins + 1)
    up = wide(start) + wide(step) * i.astype(wide)
    down = wide(end) - wide(step) * (bins - i).astype(wide)
    return _tensor(np.where(i < (bins + 1) // 2, up, down).astype(t), dtype=dtype,
                   device=device)


def _count_bins(x, pos, keep, nbins, weight, dtype):
    """Counts (or weight sums) of the elements at bin `pos` where `keep`; the rest go to an
    extra bin that is dropped."""
    pos = where(keep, pos, nbins)
    src = ones(x.shape, dtype=dtype, device=x._device) if weight is None else \
        weight.detach().reshape(-1)
    hist = scatter_add(zeros(nbins + 1, dtype=dtype, device=x._device), 0, pos, src)
    return narrow(hist, 0, 0, nbins)


def histc(input, bins=100, min=0, max=0, *, out=None):
    """A histogram of input's elements in `bins` equal bins over [min, max] (both 0, or equal:
    the data's min and max; still equal: widened by 1 each way). Elements outside and NaN are
    not counted; max falls in the last bin. An element's bin is (x - min) * bins / (max - min)
    truncated, in input's dtype, as torch's kernel computes it. Result: input's dtype."""
    _input("histc", input)
    _float_only("histc", input)
    bins = _int("histc", bins, "bins")
    _bins_positive("histc", bins)
    lo, hi = float(min), float(max)
    if lo == hi and input.numel():
        pair = aminmax(input.detach())
        lo, hi = float(pair[0]), float(pair[1])
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"histc(): range of [{lo}, {hi}] is not finite; pass finite min and "
                           f"max (NaN or inf in the input makes the inferred range infinite)")
    if not lo < hi:
        raise RuntimeError(f"histc(): max must be larger than min, got min {lo} and max {hi}")
    edges = _edges(lo, hi, bins, input._dtype, input._device)
    left, right = edges[0], edges[bins]
    x = input.detach().reshape(-1)
    keep = (x >= left) & (x <= right)
    pos = ((where(keep, x, left) - left) * bins / (right - left)).long()
    pos = where(pos >= bins, bins - 1, pos)  # the last bin includes its right edge
    return write_out("histc", out, _count_bins(x, pos, keep, bins, None, input._dtype),
                     exact=True)


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """``return_types.histogram(hist, bin_edges)`` of input's elements: `bins` an int (that many
    equal bins over `range`, default the data's min and max, widened by 0.5 each way where
    they are equal) or a 1-D tensor of increasing edges. Bins are closed on the left; the last
    also on the right; elements outside are not counted. `weight` (input's shape and dtype)
    sums weights instead of counts; `density` divides by the total and the bin widths."""
    _input("histogram", input)
    _float_only("histogram", input)
    if weight is not None:
        _input("histogram", weight, "weight")
        same_device("histogram", input, weight)
        if weight._dtype is not input._dtype:
            raise RuntimeError(f"histogram(): weight must have input's dtype ({input._dtype.name})"
                               f", got {weight._dtype.name}")
        if weight.shape != input.shape:
            raise RuntimeError(f"histogram(): weight must have input's shape "
                               f"{list(input.shape)}, got {list(weight.shape)}")
    x = input.detach().reshape(-1)
    if isinstance(bins, Tensor):
        same_device("histogram", input, bins)
        if bins.ndim != 1:
            raise RuntimeError(f"histogram(): bins tensor should have one dimension, but got "
                               f"{bins.ndim} dimensions")
        if bins._dtype is not input._dtype:
            raise RuntimeError(f"histogram(): input tensor and bins tensor should have the same "
                               f"dtype, but got input {input._dtype.name} and bins "
                               f"{bins._dtype.name}")
        _bins_positive("histogram", bins.numel() - 1)
        edges = bins.detach().clone()  # (torch's bin_edges is a copy of bins)
    else:
        nbins = _int("histogram", bins, "bins")
        _bins_positive("histogram", nbins)
        if range is not None:
            lo, hi = (float(v) for v in range)
        elif x.numel():
            pair = aminmax(x)
            lo, hi = float(pair[0]), float(pair[1])
        else:
            lo, hi = 0.0, 1.0
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"histogram(): range [{lo}, {hi}] is not finite; pass a finite "
                               f"range= (NaN or inf in the input makes the inferred range "
                               f"infinite)")
        if lo > hi:
            raise RuntimeError(f"histogram(): min should not exceed max, but got min {lo} "
                               f"max {hi}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = _edges(lo, hi, nbins, input._dtype, input._device)
    nbins = edges.numel() - 1
    keep = (x >= edges[0]) & (x <= edges[nbins])
    pos = searchsorted(edges, x, right=True) - 1
    pos = where(pos >= nbins, nbins - 1, pos)
    hist = _count_bins(x, pos, keep, nbins, weight, input._dtype)
    if density:
        hist = hist / sum(hist) / (narrow(edges, 0, 1, nbins) - narrow(edges, 0, 0, nbins))
    return write_pair("histogram", out, (hist, edges), return_types.histogram)


# -- searchsorted, bucketize, isin ----------------------------------------------------------------
def _scalar_or_tensor(fn, value, name, like):
    """`value` as a tensor on like's device (a number becomes a 0-d tensor)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, np.number)):
        return _tensor(value, device=like._device)
    raise TypeError(f"{fn}(): argument '{name}' must be Tensor or a number, not "
                    f"{type(value).__name__}")


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, out=None,
                 sorter=None):
    """Where each value of `input` would be inserted into `sorted_sequence` (ascending along
    its last dim: 1-D, or with input's leading dims) to keep it sorted: the first such place,
    or with right=True / side='right' the last. `sorter` (int64, the sequence's shape) holds
    the indices that sort an unsorted sequence. int64, or int32 with out_int32."""
    fn = "searchsorted"
    _input(fn, sorted_sequence, "sorted_sequence")
    if sorted_sequence.ndim == 0:
        raise RuntimeError("searchsorted(): boundaries tensor should have positive dimension, "
                           "but got 0 dimension")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"searchsorted(): side can only be 'left' or 'right' but got "
                               f"{side}")
        if side == "left" and right:
            raise RuntimeError("searchsorted(): side and right can't be set to opposites, got "
                               "side of left while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    values = _scalar_or_tensor(fn, input, "input", sorted_sequence)
    seq = sorted_sequence
    same_device(fn, seq, values)
    if seq.ndim > 1:
        if scalar:
            raise RuntimeError(f"searchsorted(): input value can be a scalar only when "
                               f"boundaries tensor dimension is 1, but we got boundaries tensor "
                               f"dim({seq.ndim})")
        if values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]:
            raise RuntimeError(f"searchsorted(): boundaries tensor should be 1 dimension or the "
                               f"first N-1 dimensions of boundaries tensor and input value "
                               f"tensor must match, but we got boundaries tensor "
                               f"{list(seq.shape)} and input value tensor "
                               f"{list(values.shape)}")
    n = seq.shape[-1]
    if sorter is not None:
        _input(fn, sorter, "sorter")
        same_device(fn, seq, sorter)
        if sorter._dtype is not dtypes.int64:
            raise RuntimeError(f"searchsorted(): sorter must be a tensor of long dtype but got "
                               f"dtype {sorter._dtype.name}")
        if sorter.shape != seq.shape:
            raise RuntimeError(f"searchsorted(): boundary and sorter must have the same size, "
                               f"but got boundary tensor {list(seq.shape)} and got sorter "
                               f"tensor {list(sorter.shape)}")
        if sorter.numel() and bool(((sorter < 0) | (sorter >= n)).any()):
            raise RuntimeError("searchsorted(): sorter index out of range")
    out_dtype = dtypes.int32 if out_int32 else dtypes.int64
    if out is not None and isinstance(out, Tensor) and out._dtype is not out_dtype:
        raise RuntimeError(f"searchsorted(): output tensor's dtype is wrong, it can only be "
                           f"int32 or int64 depending on whether out_int32 flag is True, but "
                           f"we got output tensor's dtype {out._dtype.name} and out_int32 flag "
                           f"is {bool(out_int32)}")
    common = dtypes.promote_types(seq._dtype, values._dtype)
    b = math.prod(seq.shape[:-1])  # rows of the sequence, each searched by its own values
    rows = seq.detach().to(common).reshape(b, n)
    v = values.detach().to(common).reshape(b, values.numel() // b if b else 0)
    order = sorter.reshape(rows.shape) if sorter is not None else None
    if common is dtypes.bool_:  # (the kernels read numbers)
        rows, v = rows.to(dtypes.uint8), v.to(dtypes.uint8)
    rows, v = rows.contiguous(), v.contiguous()
    lo = empty(v.shape, dtype=dtypes.int64, device=seq._device)
    if v.numel():
        backend(seq._device).sort.searchsorted(
            lo._data, rows._data, None if order is None else order.contiguous()._data, v._data,
            right)
    result = lo.reshape(values.shape)
    if out_int32:
        result = result.to(dtypes.int32)
    return write_out(fn, out, result, exact=True)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each value of `input` among the 1-D ascending `boundaries`: i with
    boundaries[i-1] < x <= boundaries[i] (right=True: boundaries[i-1] <= x < boundaries[i]),
    i.e. searchsorted(boundaries, input, right=right)."""
    _input("bucketize", boundaries, "boundaries")
    if boundaries.ndim != 1:
        raise RuntimeError(f"bucketize(): boundaries tensor must be 1 dimension, but got "
                           f"dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    """Whether each element of `elements` equals some element of `test_elements` (either may
    be a number, not both), as a bool tensor of elements' shape; `invert` negates it. Both are
    promoted to one dtype first; NaN is in nothing. The test elements are sorted and searched
    (O((n + m) log m)), so `assume_unique` changes nothing."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): at least one of elements and test_elements must be a Tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    elements = _scalar_or_tensor("isin", elements, "elements", like)
    test_elements = _scalar_or_tensor("isin", test_elements, "test_elements", like)
    same_device("isin", elements, test_elements)
    common = dtypes.promote_types(elements._dtype, test_elements._dtype)
    e = elements.detach().to(common)
    pool = sort(test_elements.detach().to(common).reshape(-1))[0]
    m = pool.numel()
    if m:
        # NaN (sorted last) searched as inf: the binary search's steps must see a sorted key
        key = where(isnan(pool), math.inf, pool) if common.is_floating_point else pool
        at = clamp(searchsorted(key, e.reshape(-1)), max=m - 1)
        found = (gather(pool, 0, at) == e.reshape(-1)).reshape(e.shape)
    else:
        found = zeros(e.shape, dtype=dtypes.bool_, device=e._device)
    return write_out("isin", out, logical_not(found) if invert else found, exact=True)


# -- cov, corrcoef --------------------------------------------------------------------------------
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in input's rows (a 1-D input: one variable),
    observations in its columns, with divisor N - correction; `fweights` (integer counts) and
    `aweights` (float importances) weight the observations (numpy.cov's rule). torch's
    formula, composed, so its gradient is torch's."""
    _input("cov", input)
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input._dtype is dtypes.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input; convert it with "
                           ".float()")
    correction = _int("cov", correction, "correction")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    observations = x.shape[1]
    w = None
    for name, t in (("fweights", fweights), ("aweights", aweights)):
        if t is None:
            continue
        _input("cov", t, name)
        same_device("cov", input, t)
        if t.ndim > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                               f"{name} with {t.ndim} dimensions")
        if name == "fweights" and (t._dtype.is_floating_point or t._dtype is dtypes.bool_):
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got "
                               f"fweights with {t._dtype.name} dtype")
        if name == "aweights" and not t._dtype.is_floating_point:
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {t._dtype.name} dtype")
        if t.numel() != observations:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                               f"observations in the input but got {t.numel()} != "
                               f"{observations}")
        if observations and bool(t.min() < 0):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        w = t if w is None else w * t
    if w is None:
        w_sum = full((), observations, dtype=dtypes.int64, device=input._device)
    else:
        w_sum = sum(w)
        if not bool(w_sum != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = sum(x if w is None else x * w, 1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * sum(w * aweights) / w_sum
    else:
        norm = w_sum - correction
    if bool(norm <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0
    centred = x - avg.unsqueeze(1)
    c = centred @ (centred if w is None else centred * w).t()
    return (c / norm).squeeze()


def corrcoef(input):
    """The Pearson correlation coefficients of the variables in input's rows: cov scaled by
    the standard deviations, clipped to [-1, 1] (a single variable: c / c, so 1 or NaN)."""
    _input("corrcoef", input)
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.reshape(-1, 1)
    c = c / std.reshape(1, -1)
    return clamp(c, -1, 1)


# -- trapezoid, trapz, cumulative_trapezoid -------------------------------------------------------
def _spacing(fn, y, x, dx, dim):
    """(dim, x's differences as a tensor broadcasting against y's pairs, or the float dx)."""
    _input(fn, y, "y")
    if x is not None and dx is not None:
        raise TypeError(f"{fn}(): pass either x (sample points) or dx (their spacing), not both")
    if y.ndim == 0:
        raise IndexError(f"{fn}(): Dimension specified as {dim} but tensor has no dimensions")
    d = _dim(dim, y.ndim, fn)
    if y._dtype is dtypes.bool_ or isinstance(x, Tensor) and x._dtype is dtypes.bool_:
        raise RuntimeError(f"{fn}: received a bool input for `x` or `y`, but bool is not "
                           f"supported; convert it with .float()")
    if x is None:
        dx = 1.0 if dx is None else dx
        if isinstance(dx, bool) or not isinstance(dx, (int, float, np.integer, np.floating)):
            raise TypeError(f"{fn}: Currently, we only support dx as a real number, got "
                            f"{type(dx).__name__}")
        return d, float(dx)
    _input(fn, x, "x")
    same_device(fn, y, x)
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{fn}: There must be one `x` value for each sample point "
                               f"({y.shape[d]} along dim {d}), got {x.shape[0]}")
        shape = [1] * y.ndim
        shape[d] = x.shape[0]
        x = x.reshape(shape)
    elif x.ndim < y.ndim:
        x = x.reshape([1] * (y.ndim - x.ndim) + list(x.shape))
    m = x.shape[d]
    return d, narrow(x, d, 1, m - 1) - narrow(x, d, 0, m - 1) if m else x


def _pairs(y, d):
    n = y.shape[d]
    return (narrow(y, d, 0, n - 1), narrow(y, d, 1, n - 1)) if n else (y, y)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule's integral of y along `dim`: sample points `x` (1-D, or
    broadcasting with y) or equal spacing `dx` (default 1). Zero samples give 0."""
    d, step = _spacing("trapezoid", y, x, dx, dim)
    if not y.shape[d]:
        shape = list(y.shape)
        del shape[d]
        return zeros(shape, dtype=y._dtype, device=y._device)
    if isinstance(step, Tensor):
        left, right = _pairs(y, d)
        return sum((left + right) * step, d) / 2.0
    # (equal spacing: the sum less half the two end points, torch's formula)
    return (sum(y, d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * step


def trapz(y, x=None, *, dx=None, dim=-1):
    """trapezoid under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral of y along `dim` (one fewer element there)."""
    d, step = _spacing("cumulative_trapezoid", y, x, dx, dim)
    left, right = _pairs(y, d)
    if isinstance(step, Tensor):
        return cumsum((left + right) * step, d) / 2.0
    return cumsum(step / 2.0 * (left + right), d)


# -- cummax, cummin, cumprod, logcumsumexp --------------------------------------------------------
def _cumulative_extremum(fn, input, dim, out, larger):
    _input(fn, input)
    d = _dim(dim, input.ndim, fn)
    x = input.reshape(1) if input.ndim == 0 else input
    data = x.detach()
    best = _scan(data, maximum if larger else minimum, d)  # NaN propagates
    # an element is the running extreme where it equals it (a NaN where that is NaN): the
    # index is the last such position so far (torch's rule for ties and NaN)
    hit = data == best
    if data._dtype.is_floating_point:
        hit = hit | isnan(data)
    n = x.shape[d]
    index = _scan(where(hit, _positions(n, d, x.ndim, x._device), 0), maximum, d) if n else \
        zeros(x.shape, dtype=dtypes.int64, device=x._device)
    values = gather(x, d, index)  # (the gradient goes to the index, as torch's)
    if not input.ndim:
        values, index = values.reshape(()), index.reshape(())
    return write_pair(fn, out, (values, index), getattr(return_types, fn))


def cummax(input, dim, *, out=None):
    """``return_types.cummax(values, indices)``: the running maximum along `dim` and where it
    was taken (the last index of a tie; once a NaN is met the values stay NaN, indexed at the
    latest NaN), as torch's."""
    return _cumulative_extremum("cummax", input, dim, out, True)


def cummin(input, dim, *, out=None):
    """As cummax, for the running minimum."""
    return _cumulative_extremum("cummin", input, dim, out, False)


def cumprod(input, dim, *, dtype=None, out=None):
    """Running products along `dim`; bool and integer input multiply as int64 (or `dtype`)."""
    _input("cumprod", input)
    d = _dim(dim, input.ndim, "cumprod")
    if dtype is not None:
        dtype = to_dtype(dtype)
    elif isinstance(out, Tensor):
        dtype = out._dtype
    else:
        dtype = input._dtype if input._dtype.is_floating_point else dtypes.int64
    x = input.to(dtype) if input._dtype is not dtype else input
    x = x.reshape(1) if input.ndim == 0 else x
    result = _scan(x, operator.mul, d).reshape(input.shape) if x.shape[d] > 1 else \
        x.reshape(input.shape).clone()  # (a new tensor, as a product's would be)
    return write_out("cumprod", out, result)


def logcumsumexp(input, dim, *, out=None):
    """log(cumsum(exp(input))) along `dim`, without overflow: a scan of logaddexp."""
    _input("logcumsumexp", input)
    _float_only("logcumsumexp", input)
    d = _dim(dim, input.ndim, "logcumsumexp")
    x = input.reshape(1) if input.ndim == 0 else input
    result = _scan(x, logaddexp, d).reshape(input.shape) if x.shape[d] > 1 else \
        x.reshape(input.shape).clone()
    return write_out("logcumsumexp", out, result, exact=True)


cumprod_ = in_place(cumprod)


# -- vander, combinations, unravel_index, argwhere ------------------------------------------------
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D x: column j is x ** (N - 1 - j) (with increasing,
    x ** j); N columns (default len(x)). Integer and bool x give int64 (cumprod's rule)."""
    _input("vander", x, "x")
    if x.ndim != 1:
        raise RuntimeError(f"vander(): x must be a one-dimensional tensor, got shape "
                           f"{list(x.shape)}")
    n = x.shape[0] if N is None else _int("vander", N, "N")
    if n < 0:
        raise RuntimeError(f"vander(): N must be non-negative, got {n}")
    dtype = dtypes.promote_types(x._dtype, dtypes.int64)
    columns = [ones((x.shape[0], builtins.min(n, 1)), dtype=dtype, device=x._device)]
    if n > 1:
        columns.append(cumprod(x.to(dtype).unsqueeze(1).expand(x.shape[0], n - 1), 1))
    result = cat(columns, 1) if len(columns) > 1 else columns[0]
    return result if increasing else flip(result, [1])


def combinations(input, r=2, with_replacement=False):
    """The r-length combinations of the 1-D input's elements (itertools.combinations' order;
    with_replacement: combinations_with_replacement's), one per row: shape (count, r)."""
    _input("combinations", input)
    if input.ndim != 1:
        raise RuntimeError(f"combinations(): Expect a 1D vector, but got shape "
                           f"{list(input.shape)}")
    r = _int("combinations", r, "r")
    if r < 0:
        raise RuntimeError(f"combinations(): Expect a non-negative number, but got {r}")
    if r == 0:
        return zeros(0, dtype=input._dtype, device=input._device)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    flat = np.fromiter(itertools.chain.from_iterable(pick(builtins.range(input.shape[0]), r)),
                       dtype=np.int64)
    return input[_tensor(flat.reshape(-1, r), device=input._device)]


def unravel_index(indices, shape):
    """The coordinates in a tensor of `shape` of each flat (C-order) position in `indices`:
    a tuple of int64 tensors of indices' shape, one per dim. Positions are not checked
    against the size (torch's: they wrap, negative ones from the end)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index(): argument 'indices' must be Tensor, not "
                        f"{type(indices).__name__}")
    if indices._dtype.is_floating_point or indices._dtype is dtypes.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices._dtype}")
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    elif isinstance(shape, (tuple, list)):
        for n in shape:
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                                f"{type(n)}")
        shape = tuple(int(n) for n in shape)
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if builtins.any(n < 0 for n in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    strides = list(itertools.accumulate(reversed(shape[1:] + (1,)), operator.mul))[::-1]
    device = indices._device
    coords = indices.unsqueeze(-1) // _tensor(strides, dtype=dtypes.int64, device=device) % \
        _tensor(list(shape), dtype=dtypes.int64, device=device)
    return tuple(unbind(coords, -1))


def argwhere(input):
    """The coordinates of input's non-zero elements, one row each: nonzero(input)."""
    return nonzero(_input("argwhere", input))


TENSOR_METHODS = {
    "median": median, "nanmedian": nanmedian, "quantile": quantile, "nanquantile": nanquantile,
    "mode": mode, "kthvalue": kthvalue, "msort": msort, "unique": unique,
    "unique_consecutive": unique_consecutive, "bincount": bincount, "histc": histc,
    "histogram": histogram, "cov": cov, "corrcoef": corrcoef, "argwhere": argwhere,
    "cummax": cummax, "cummin": cummin, "cumprod": cumprod, "cumprod_": cumprod_,
    "logcumsumexp": logcumsumexp,
}

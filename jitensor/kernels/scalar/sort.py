"""The order every sort follows, on both targets: by value, NaN above every number (torch's
order), ties by position, so that every sort is stable and gives one answer whatever its
algorithm (a merge sort on the CPU, a bitonic network on CUDA)."""
from numba.extending import register_jitable


@register_jitable
def precedes(a, ia, b, ib, descending):
    """Whether value a, at position ia, comes before value b, at position ib."""
    if a < b:  # (the common cases first: two comparisons)
        return not descending
    if b < a:
        return descending
    a_nan, b_nan = a != a, b != b  # equal, or a NaN is involved
    if a_nan != b_nan:
        return b_nan != descending  # ascending: numbers first; descending: NaN first
    return ia < ib


@register_jitable
def search(seq, so, n, order, oo, sorted_, value, right):
    """torch.searchsorted's binary search of one value in the n elements seq[so:] (read
    through the positions order[oo:] unless `sorted_`): the first i whose element is >= value
    (> value where `right`), n if none. NaN compares false as in torch's loop, so a NaN value
    lands at n, and the search is defined (if not meaningful) on unsorted data."""
    lo, hi = 0, n
    while lo < hi:
        mid = lo + (hi - lo) // 2
        probe = seq[so + (mid if sorted_ else order[oo + mid])]
        if not (probe > value if right else probe >= value):
            lo = mid + 1
        else:
            hi = mid
    return lo

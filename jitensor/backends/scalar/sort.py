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

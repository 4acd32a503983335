"""torch.einsum, composed from ops (so autograd differentiates it and it runs on every device):
each operand's repeated subscripts become a diagonal, subscripts used nowhere else are summed
out, then the operands are multiplied left to right, each pair as one (batched) matmul over
the subscripts they share and no later operand or the output needs (or as a broadcast product
where they share none), and the result is permuted into the output's order.

Subscripts are letters; `...` stands for the dims not named (broadcast between operands,
aligned from the right, and summed unless the output names them too). Without `->` the output
is `...` followed by the subscripts used once, in alphabetical order. The sublist form,
einsum(a, [0, 1], b, [1, 2], [0, 2]), is accepted too."""
import math

import numpy as np

from ..tensor import Tensor
from ._common import same_device
from .linalg import matmul

__all__ = ["einsum"]

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # (sublist ints, as torch's)


def _sublists(args):
    """The sublist form as (equation, operands)."""
    args, operands, terms = list(args), [], []

    def term(sub):
        out = ""
        for s in sub:
            if s is Ellipsis:
                out += "..."
            elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) and \
                    0 <= s < len(_LETTERS):
                out += _LETTERS[int(s)]
            else:
                raise ValueError(f"einsum(): subscript in sublist format must be Ellipsis or an "
                                 f"int in [0, {len(_LETTERS)}), got {s!r}")
        return out
    while len(args) >= 2 and isinstance(args[0], Tensor):
        operands.append(args.pop(0))
        terms.append(term(args.pop(0)))
    if len(args) > 1 or args and isinstance(args[0], Tensor):
        raise ValueError("einsum(): the sublist format takes operand, sublist pairs and an "
                         "optional output sublist")
    return ",".join(terms) + ("->" + term(args[0]) if args else ""), operands


def _labels(term, ndim, n, position, ellipsis):
    """The labels of an operand's dims (letters, and ('...', k) for the k-th of the `ellipsis`
    trailing unnamed dims) from its term; `position` is where the term starts in the
    equation, for the errors."""
    head, dots, tail = term.partition("...")
    for i, ch in enumerate(term):
        if ch != "." and ch not in _LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript given at index {position + i} in "
                               f"the equation string, subscripts must be in [a-zA-Z]")
    if "." in head + tail or dots and term.count(".") != 3:
        raise RuntimeError("einsum(): found '.' that is not part of any ellipsis ('...')")
    named = len(head) + len(tail)
    if ndim != named and not dots or dots and ndim < named:
        raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) "
                           f"{'is more than' if dots else 'does not match'} the number of "
                           f"dimensions ({ndim}) for operand {n}"
                           f"{' and no ellipsis was given' if not dots else ''}")
    unnamed = ndim - named
    return list(head) + [("...", k) for k in range(ellipsis - unnamed, ellipsis)] + list(tail)


def _diagonals(t, labels):
    """t with each repeated label's dims replaced by their diagonal."""
    while len(set(labels)) < len(labels):
        i = next(i for i, lab in enumerate(labels) if labels.index(lab) < i)
        j = labels.index(labels[i])
        if t.shape[i] != t.shape[j]:
            raise RuntimeError(f"einsum(): subscript {labels[i]} is repeated for operand but the "
                               f"sizes don't match, {t.shape[j]} != {t.shape[i]}")
        t = t.diagonal(0, j, i)  # (the diagonal goes last)
        labels = [lab for k, lab in enumerate(labels) if k not in (i, j)] + [labels[i]]
    return t, labels


def _summed(t, labels, keep):
    """t summed over its labels not in `keep`."""
    dims = [i for i, lab in enumerate(labels) if lab not in keep]
    if not dims:
        return t, labels
    return t.sum(dims), [lab for lab in labels if lab in keep]


def _permuted(t, labels, order):
    """t with its dims in `order` (a permutation of its labels); a view."""
    return t.permute([labels.index(lab) for lab in order]) if labels != order else t


def _pair(a, la, b, lb, keep):
    """The product of a and b (labels la, lb), summed over their shared labels not in keep."""
    size = {}
    for t, labels in ((a, la), (b, lb)):
        for lab, s in zip(labels, t.shape, strict=False):
            if size.get(lab, 1) != 1 and s != 1 and size[lab] != s:
                raise RuntimeError(f"einsum(): subscript {_name(lab)} has size {s} for an "
                                   f"operand which does not broadcast with previously seen size "
                                   f"{size[lab]}")
            size[lab] = s if size.get(lab, 1) == 1 else size[lab]  # (size 0 stays 0)
    shared = [lab for lab in la if lab in lb]
    summed = [lab for lab in shared if lab not in keep]
    for lab in summed:  # a summed subscript of size 1 on one side: sum the other side first
        sa, sb = a.shape[la.index(lab)], b.shape[lb.index(lab)]
        if sa != sb:
            t, labels = (b, lb) if sa == 1 else (a, la)
            t, labels = _summed(t, labels, set(labels) - {lab})
            t = t.unsqueeze(len(labels))
            labels.append(lab)
            a, la, b, lb = (a, la, t, labels) if sa == 1 else (t, labels, b, lb)
    if not summed:  # a broadcast product over every label
        order = la + [lab for lab in lb if lab not in la]
        return a.reshape(tuple(a.shape) + (1,) * (len(order) - len(la))) * \
            _expand_to(b, lb, order), order
    batch = [lab for lab in shared if lab in keep]
    left = [lab for lab in la if lab not in lb]
    right = [lab for lab in lb if lab not in la]
    a = _permuted(a, la, batch + left + summed)
    b = _permuted(b, lb, batch + summed + right)
    nb = len(batch)
    k = math.prod(a.shape[nb + len(left):])
    out = matmul(a.reshape(*a.shape[:nb], math.prod(a.shape[nb:nb + len(left)]), k),
                 b.reshape(*b.shape[:nb], k, math.prod(b.shape[nb + len(summed):])))
    shape = tuple(out.shape[:nb]) + tuple(size[lab] for lab in left + right)
    return out.reshape(shape), batch + left + right


def _expand_to(t, labels, order):
    """t (labels) with dims of size 1 for the labels of `order` it lacks, permuted to order."""
    missing = [lab for lab in order if lab not in labels]
    t = t.reshape(tuple(t.shape) + (1,) * len(missing))
    return _permuted(t, labels + missing, order)


def _name(label):
    return "..." if isinstance(label, tuple) else label


def einsum(*args):
    """Sums of products of the operands' elements along the dims named by an equation, as
    torch.einsum: einsum("ij,jk->ik", a, b) is a @ b; "ii" a trace; "bij,bjk->bik" a batched
    product; "...ij->...ji" a transpose of the last two dims."""
    if not args:
        raise TypeError("einsum(): missing the equation")
    if len(args) == 1 or isinstance(args[0], str) and len(args) == 2 and \
            isinstance(args[1], (list, tuple)) and not args[1]:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
    else:
        equation, operands = _sublists(args)
    for t in operands:
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): expected Tensor operands, got {type(t).__name__}")
        if t.dtype is not operands[0].dtype:
            raise RuntimeError(f"einsum(): expected all operands to have the same dtype, got "
                               f"{operands[0].dtype.name} and {t.dtype.name}; convert one with "
                               f".to({operands[0].dtype})")
    same_device("einsum", *operands)
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(f"einsum(): {'more' if len(operands) > len(terms) else 'fewer'} "
                           f"operands were provided than specified in the equation")
    ellipsis = max((t.ndim - len(term.replace("...", ""))
                    for t, term in zip(operands, terms, strict=False) if "..." in term), default=0)
    labels, position = [], 0
    for n, (t, term) in enumerate(zip(operands, terms, strict=False)):
        labels.append(_labels(term, t.ndim, n, position, ellipsis))
        position += len(term) + 1
    if arrow:
        if "." in rhs.replace("...", "") or rhs.count("...") > 1:
            raise RuntimeError("einsum(): found '.' that is not part of any ellipsis ('...')")
        head, dots, tail = rhs.partition("...")
        output = list(head) + ([("...", k) for k in range(ellipsis)] if dots else []) + \
            list(tail)
        seen = set().union(*map(set, labels))
        for lab in head + tail:
            if lab not in _LETTERS:
                raise RuntimeError(f"einsum(): invalid subscript given at index "
                                   f"{len(lhs) + 2 + rhs.index(lab)} in the equation string, "
                                   f"subscripts must be in [a-zA-Z]")
            if (head + tail).count(lab) > 1:
                raise RuntimeError(f"einsum(): output subscript {lab} appears more than once in "
                                   f"the output")
            if lab not in seen:
                raise RuntimeError(f"einsum(): output subscript {lab} does not appear in the "
                                   f"equation for any input operand")
    else:
        counts = {}
        for ls in labels:
            for lab in ls:
                counts[lab] = counts.get(lab, 0) + 1
        output = [("...", k) for k in range(ellipsis)] + \
            sorted(lab for lab, c in counts.items() if c == 1 and isinstance(lab, str))
    operands = list(operands)
    for n in range(len(operands)):
        operands[n], labels[n] = _diagonals(operands[n], labels[n])
        later = set(output).union(*map(set, labels[:n] + labels[n + 1:]))
        operands[n], labels[n] = _summed(operands[n], labels[n], later)
    result, have = operands[0], labels[0]
    for n in range(1, len(operands)):
        keep = set(output).union(*map(set, labels[n + 1:]))
        result, have = _pair(result, have, operands[n], labels[n], keep)
        result, have = _summed(result, have, keep)
    result, have = _summed(result, have, set(output))
    return _permuted(result, have, output)

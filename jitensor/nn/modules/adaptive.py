"""AdaptiveLogSoftmaxWithLoss: Grave et al.'s adaptive softmax for large vocabularies, as
torch's (a head over the frequent classes and one cluster per tail, each tail a two-layer
projection shrinking by div_value)."""
import collections

from ...ops.reduction import argmax
from ...ops.shape import cat
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 or \
                len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        options = dict(device=device, dtype=dtype)
        self.head = Linear(in_features, self.head_size, bias=head_bias, **options)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **options),
                                        Linear(hidden, size, bias=False, **options)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for first, second in self.tail:
            first.reset_parameters()
            second.reset_parameters()

    def forward(self, input_, target_):
        """(output: each target's log-probability, loss: their negated mean)."""
        if target_.ndim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {tuple(input_.shape)}")
        elif target_.ndim == 0:
            if input_.ndim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {tuple(input_.shape)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.ndim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        used = 0
        output = input.new_zeros(target.shape[0])
        gather = target.new_empty(target.shape[0])
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            mask = (target >= bounds[i]) & (target < bounds[i + 1])
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            if i == 0:
                gather.index_copy_(0, rows, target[mask])
            else:
                relative = target[mask] - bounds[i]
                cluster = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
                gather.index_fill_(0, rows, self.shortlist_size + i - 1)
                output.index_copy_(0, rows, cluster.gather(1, relative.unsqueeze(1)).squeeze(1))
            used += rows.numel()
        if used != target.shape[0]:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head = F.log_softmax(self.head(input), dim=1)
        output = output + head.gather(1, gather.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        head = F.log_softmax(head_output, dim=1)
        parts = [head[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input):
        """Every class's log-probability: (N, n_classes), or (n_classes,) unbatched."""
        batched = input.ndim > 1
        x = input if batched else input.unsqueeze(0)
        out = self._full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most probable class of each example (log_prob(input).argmax(1), computing the
        tails only for the rows whose head points into a cluster)."""
        batched = input.ndim > 1
        x = input if batched else input.unsqueeze(0)
        head_output = self.head(x)
        output = argmax(head_output, dim=1)
        outside = output >= self.shortlist_size
        if outside.any():
            rows = outside.nonzero().reshape(-1)
            full = self._full_log_prob(x.index_select(0, rows), head_output.index_select(0, rows))
            output = output.index_copy(0, rows, argmax(full, dim=1))
        return output if batched else output.squeeze(0)

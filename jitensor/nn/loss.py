"""Loss modules over `functional`; class weights are buffers (in the state dict), as in torch."""
from . import functional as F
from .module import Module


class MSELoss(Module):
    def __init__(self, *, reduction="mean"):
        super().__init__()
        F._check_reduction(reduction)
        self.reduction = reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(Module):
    def __init__(self, weight=None, *, ignore_index=-100, reduction="mean"):
        super().__init__()
        F._check_reduction(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction = ignore_index, reduction

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(Module):
    def __init__(self, weight=None, *, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__()
        F._check_reduction(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction = ignore_index, reduction
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)

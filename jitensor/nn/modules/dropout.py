"""The dropout modules over functional's dropout, dropout1d/2d/3d, alpha_dropout and
feature_alpha_dropout."""
from .. import functional as F
from .module import Module

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]


class Dropout(Module):
    """Zeroes elements with probability `p` while training (scaling the rest by 1 / (1 - p));
    the identity in eval mode."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class _DropoutNd(Module):
    fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        F._check_p(p)
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self).fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    fn = staticmethod(F.dropout3d)


class _AlphaDropoutNd(_DropoutNd):
    def forward(self, input):  # (torch's alpha dropout modules never work in place)
        return type(self).fn(input, self.p, self.training)


class AlphaDropout(_AlphaDropoutNd):
    fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_AlphaDropoutNd):
    fn = staticmethod(F.feature_alpha_dropout)

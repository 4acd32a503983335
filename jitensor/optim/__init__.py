"""jitensor.optim: torch.optim's Optimizer, SGD, Adam and AdamW."""
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Adam", "AdamW", "Optimizer", "SGD"]

"""jitensor.optim: torch.optim's Optimizer, SGD, Adam, AdamW, RMSprop and Adagrad, and (as the
module `lr_scheduler`) its learning-rate schedulers."""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]

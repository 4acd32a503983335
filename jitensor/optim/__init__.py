"""jitensor.optim: torch.optim's Optimizer and optimizers (SGD, Adam, AdamW, Adadelta, Adafactor,
Adagrad, Adamax, ASGD, LBFGS, Muon, NAdam, RAdam, RMSprop, Rprop; SparseAdam refuses, jitensor
having no sparse tensors), and as modules `lr_scheduler` (learning-rate schedulers) and
`swa_utils` (weight averaging)."""
from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["ASGD", "LBFGS", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SparseAdam", "lr_scheduler",
           "swa_utils"]

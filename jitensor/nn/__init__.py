"""jitensor.nn: modules, parameters, layers, losses (torch.nn's API), `functional` and `init`."""
from . import functional, init
from .containers import ModuleList, Sequential
from .layers import (Dropout, Flatten, Identity, Linear, LogSoftmax, ReLU, Sigmoid, Softmax,
                     Tanh)
from .loss import CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module
from .parameter import Parameter

__all__ = ["CrossEntropyLoss", "Dropout", "Flatten", "Identity", "Linear", "LogSoftmax", "MSELoss",
           "Module", "ModuleList", "NLLLoss", "Parameter", "ReLU", "Sequential", "Sigmoid",
           "Softmax", "Tanh", "functional", "init"]

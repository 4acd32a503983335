"""jitensor.nn: modules, parameters, layers, losses (torch.nn's API), `functional` and `init`."""
from . import functional, init
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .layers import (CELU, ELU, GELU, SELU, Dropout, Embedding, Flatten, Hardsigmoid, Hardswish,
                     Hardtanh, Identity, LayerNorm, LeakyReLU, Linear, LogSigmoid, LogSoftmax,
                     Mish, ReLU, ReLU6, RMSNorm, Sigmoid, SiLU, Softmax, Softplus, Tanh,
                     Threshold)
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MSELoss, NLLLoss, SmoothL1Loss)
from .module import Module
from .parameter import Parameter

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CELU", "CrossEntropyLoss", "Dropout", "ELU",
           "Embedding", "Flatten", "GELU", "Hardsigmoid", "Hardswish", "Hardtanh", "HuberLoss",
           "Identity", "KLDivLoss", "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LogSigmoid",
           "LogSoftmax", "MSELoss", "Mish", "Module", "ModuleDict", "ModuleList", "NLLLoss",
           "Parameter", "ParameterDict", "ParameterList",
           "RMSNorm", "ReLU", "ReLU6", "SELU", "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss",
           "Softmax", "Softplus", "Tanh", "Threshold", "functional", "init"]

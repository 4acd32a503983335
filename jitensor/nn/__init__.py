"""jitensor.nn: modules, parameters, layers, losses (torch.nn's API), `functional` and `init`."""
from . import functional, init
from .attention import MultiheadAttention, TransformerEncoder, TransformerEncoderLayer
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .layers import (CELU, ELU, GELU, SELU, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d,
                     AvgPool2d, BatchNorm1d, BatchNorm2d, Conv1d, Conv2d, Dropout, Embedding,
                     Flatten, Hardsigmoid, Hardswish, Hardtanh, Identity, LayerNorm, LeakyReLU,
                     Linear, LogSigmoid, LogSoftmax, MaxPool1d, MaxPool2d, Mish, ReLU, ReLU6,
                     RMSNorm, Sigmoid, SiLU, Softmax, Softplus, Tanh, Threshold)
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MSELoss, NLLLoss, SmoothL1Loss)
from .module import Module
from .parameter import Parameter

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "BCELoss",
           "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "CELU", "Conv1d", "Conv2d",
           "CrossEntropyLoss", "Dropout", "ELU", "Embedding", "Flatten", "GELU", "Hardsigmoid",
           "Hardswish", "Hardtanh", "HuberLoss", "Identity", "KLDivLoss", "L1Loss", "LayerNorm",
           "LeakyReLU", "Linear", "LogSigmoid", "LogSoftmax", "MSELoss", "MaxPool1d", "MaxPool2d",
           "Mish", "Module", "ModuleDict", "ModuleList", "MultiheadAttention", "NLLLoss",
           "Parameter", "ParameterDict", "ParameterList", "RMSNorm", "ReLU", "ReLU6", "SELU",
           "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax", "Softplus", "Tanh",
           "Threshold", "TransformerEncoder", "TransformerEncoderLayer", "functional", "init"]

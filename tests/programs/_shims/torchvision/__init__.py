"""A torchvision stand-in for tests/programs (jitensor's own code, not torchvision's).

The programs of tests/programs that import torchvision get this package instead (the test puts
tests/programs/_shims first on PYTHONPATH): its datasets are small synthetic data sets of the
real ones' shapes and types, drawn by NumPy from fixed seeds (so jitensor and torch see the
same data) and never downloaded; its transforms and `utils.save_image` are the few the programs
call. It imports `torch`, which under `python -m jitensor.run` is jitensor."""
from . import datasets, transforms, utils

__version__ = "0.0-jitensor-tests-shim"
__all__ = ["datasets", "transforms", "utils"]

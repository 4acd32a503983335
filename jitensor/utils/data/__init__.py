"""jitensor.utils.data: torch.utils.data's datasets, samplers, collation and DataLoader, over
jitensor tensors and jitensor's generators (a seed gives the same shuffles and splits on every
machine). num_workers > 0 loads in worker processes; see DataLoader."""
from . import _utils  # noqa: F401 (torch.utils.data._utils.collate: the older path)
from .collate import collate, default_collate, default_collate_fn_map, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (
                      ChainDataset,
                      ConcatDataset,
                      Dataset,
                      IterableDataset,
                      StackDataset,
                      Subset,
                      TensorDataset,
                      random_split,
)
from .distributed import DistributedSampler
from .sampler import (
                      BatchSampler,
                      RandomSampler,
                      Sampler,
                      SequentialSampler,
                      SubsetRandomSampler,
                      WeightedRandomSampler,
)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WeightedRandomSampler", "collate", "default_collate", "default_collate_fn_map",
           "default_convert", "get_worker_info", "random_split"]

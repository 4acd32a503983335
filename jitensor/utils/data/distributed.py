"""torch.utils.data.distributed.DistributedSampler: each of `num_replicas` processes draws its
own `rank`'s share of the dataset, the order shuffled by `seed` + epoch."""
import math

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _default(value, what):
    if value is not None:
        return value
    try:
        from ... import distributed as dist
    except ImportError:
        dist = None
    if dist is None or not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    return dist.get_world_size() if what == "num_replicas" else dist.get_rank()


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        num_replicas = _default(num_replicas, "num_replicas")
        rank = _default(rank, "rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, "
                             f"{num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        from ...ops.sampling import randperm
        from ...random import Generator
        n = len(self.dataset)
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:  # repeat from the start until every replica has num_samples
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / len(indices)))[:padding] if padding > 0 \
                else []
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """A different shuffle each epoch (the same in every replica)."""
        self.epoch = epoch

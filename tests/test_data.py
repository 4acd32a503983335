"""jitensor.utils.data against torch.utils.data: the same datasets, samplers and loader options
give the same batches (contents, order, types, dtypes and shapes) wherever the order is
deterministic, the same lengths and the same errors; the random samplers and splits are
checked for being permutations/partitions, reproducible under a seed, and for their
frequencies (jitensor's generator is its own, so not torch's numbers)."""
import collections
import math

import numpy as np
import pytest
from conftest import to_torch_dtype

import jitensor as jt
from jitensor.utils import data as jd

torch = pytest.importorskip("torch")
td = torch.utils.data

needs_cuda = pytest.mark.skipif(not jt.cuda.is_available(),
                                reason="no CUDA: numba-cuda is not installed")

Point = collections.namedtuple("Point", "x y")


def same(mine, theirs):
    """Recursively: the same structure (types), and tensors of the same shape, dtype and
    values."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, jt.Tensor), type(mine)
        assert to_torch_dtype(mine.dtype) == theirs.dtype
        assert tuple(mine.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
        return
    assert type(mine) is type(theirs), (type(mine), type(theirs))
    if isinstance(theirs, dict):
        assert list(mine) == list(theirs)
        for key in theirs:
            same(mine[key], theirs[key])
    elif isinstance(theirs, (list, tuple)):
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs, strict=False):
            same(a, b)
    elif isinstance(theirs, np.ndarray):
        np.testing.assert_array_equal(mine, theirs)
    else:
        assert mine == theirs


def pair(lib_data, lib):
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    y = np.arange(10) % 3
    return lib_data.TensorDataset(lib.tensor(x), lib.tensor(y))


class Samples:
    """A map-style dataset of nested samples, built for either library."""

    def __init__(self, base, n=7):
        self.base, self.n = base, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"image": np.full((2, 2), i, np.float32), "label": i % 2, "weight": i / 2,
                "name": f"s{i}", "pair": (i, np.int16(i)), "point": Point(i, [i, -i]),
                "flag": bool(i % 3)}


def loaders(dataset_factory, **options):
    mine = jd.DataLoader(dataset_factory(jd, jt), **options)
    theirs = td.DataLoader(dataset_factory(td, torch), **options)
    return mine, theirs


@pytest.mark.parametrize("options", [
    {}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": 4},
    {"batch_size": None}, {"batch_size": 10}, {"batch_size": 20, "drop_last": True},
    {"batch_size": 3, "num_workers": 2},
])
def test_tensor_dataset_batches_match_torch(options):
    mine, theirs = loaders(pair, **options)
    assert len(mine) == len(theirs)
    got, expected = list(mine), list(theirs)
    assert len(got) == len(expected) == len(theirs)
    for a, b in zip(got, expected, strict=False):
        same(a, b)


@pytest.mark.parametrize("options", [{"batch_size": 3}, {"batch_size": None},
                                     {"batch_size": 2, "drop_last": True}])
def test_nested_samples_collate_as_torch(options):
    mine, theirs = loaders(lambda lib_data, lib: Samples(lib_data), **options)
    for a, b in zip(list(mine), list(theirs), strict=True):
        same(a, b)


def test_sampler_batch_sampler_and_collate_fn_options_match_torch():
    order = [9, 0, 4, 4, 2, 7]
    cases = [
        lambda d: dict(sampler=order, batch_size=4),
        lambda d: dict(sampler=d.SequentialSampler(range(10)), batch_size=3, drop_last=True),
        lambda d: dict(batch_sampler=[[1, 2], [0], [9, 8, 7]]),
        lambda d: dict(batch_sampler=d.BatchSampler(order, 4, False)),
        lambda d: dict(batch_size=4, collate_fn=lambda batch: [len(batch), batch[0][1].item()]),
        lambda d: dict(batch_size=None, sampler=order),
    ]
    for case in cases:
        mine = jd.DataLoader(pair(jd, jt), **case(jd))
        theirs = td.DataLoader(pair(td, torch), **case(td))
        assert len(mine) == len(theirs)
        for a, b in zip(list(mine), list(theirs), strict=True):
            same(a, b)


_STREAMS = {}


def Stream(base, n, length=True):
    """An IterableDataset of base (jd or td) yielding 0..n-1, with __len__ unless not `length`."""
    key = (base, length)
    if key not in _STREAMS:
        body = {"__init__": lambda s, n: setattr(s, "n", n),
                "__iter__": lambda s: iter(range(s.n))}
        if length:
            body["__len__"] = lambda s: s.n
        _STREAMS[key] = type("Stream", (base.IterableDataset,), body)
    return _STREAMS[key](n)


@pytest.mark.parametrize("options", [{}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                                     {"batch_size": None}, {"batch_size": 7},
                                     {"batch_size": 8, "drop_last": True}])
def test_iterable_dataset_batches_and_len_match_torch(options):
    mine, theirs = loaders(lambda d, lib: Stream(d, 7), **options)
    assert len(mine) == len(theirs)
    for a, b in zip(list(mine), list(theirs), strict=True):
        same(a, b)
    # no __len__: iteration works, len() raises TypeError in both
    mine, theirs = loaders(lambda d, lib: Stream(d, 5, length=False), **options)
    for a, b in zip(list(mine), list(theirs), strict=True):
        same(a, b)
    for loader in (mine, theirs):
        with pytest.raises(TypeError):
            len(loader)


def test_chain_and_concat_datasets_read_through_the_loader():
    mine = jd.DataLoader(Stream(jd, 3) + Stream(jd, 2), batch_size=2)
    theirs = td.DataLoader(Stream(td, 3) + Stream(td, 2), batch_size=2)
    for a, b in zip(list(mine), list(theirs), strict=True):
        same(a, b)
    assert len(mine) == len(theirs) == 3
    mine = jd.DataLoader(pair(jd, jt) + pair(jd, jt), batch_size=6)
    theirs = td.DataLoader(pair(td, torch) + pair(td, torch), batch_size=6)
    for a, b in zip(list(mine), list(theirs), strict=True):
        same(a, b)


def test_default_collate_and_convert_match_torch():
    samples = [Samples(None)[i] for i in range(4)]
    same(jd.default_collate(samples), td.default_collate(samples))
    for sample in samples[:2] + [np.arange(3), (np.ones(2), [np.zeros(1), 3]), "text", 4.5,
                                 {"a": np.float32(2.0)}, Point(np.arange(2), 1),
                                 np.array(["x"]), collections.OrderedDict(b=np.ones(1))]:
        same(jd.default_convert(sample), td.default_convert(sample))
    cases = [[1, 2, 3], [1.5, 2.0], [True, False], [np.float32(1), np.float32(2)],
             [np.int8(1), np.int8(-1)], [np.arange(3), np.arange(3)], ["a", "b"], [b"x", b"y"],
             [(1, 2.0), (3, 4.0)], [[1, 2], [3, 4]], [Point(1, 2.0), Point(3, 4.0)],
             [("a", 1), ("b", 2)], [[1, "a"], [2, "b"]], [(("a", "x"), 1), (("b", "y"), 2)],
             [Point("a", np.ones(2)), Point("b", np.zeros(2))], [{"k": "a"}, {"k": "b"}],
             [collections.OrderedDict(a=1, b=2.0), collections.OrderedDict(a=3, b=4.0)]]
    for batch in cases:
        same(jd.default_collate(batch), td.default_collate(batch))
    tensors = [jt.arange(3.0) + i for i in range(2)]
    same(jd.default_collate(tensors), td.default_collate([torch.arange(3.0) + i for i in range(2)]))
    # errors: ragged sequences, unknown types, NumPy strings; unequal tensors do not stack
    for bad, kind in [([[1, 2], [3]], RuntimeError), ([object(), object()], TypeError),
                      ([np.array(["a"]), np.array(["b"])], TypeError)]:
        with pytest.raises(kind):
            td.default_collate(bad)
        with pytest.raises(kind):
            jd.default_collate(bad)
    with pytest.raises(RuntimeError):
        jd.default_collate([jt.zeros(2), jt.zeros(3)])


def test_custom_collate_map():
    def count(batch, *, collate_fn_map):
        return len(batch)
    table = {**jd.default_collate_fn_map, str: count}
    out = jd.collate([{"a": "x", "b": 1}, {"a": "y", "b": 2}], collate_fn_map=table)
    assert out["a"] == 2 and out["b"].tolist() == [1, 2]


# -- datasets -------------------------------------------------------------------------------------
def test_datasets_index_as_torch():
    mine, theirs = pair(jd, jt), pair(td, torch)
    assert len(mine) == len(theirs) == 10
    same(mine[3], theirs[3])
    same(mine[-1], theirs[-1])
    for d, lib in ((jd, jt), (td, torch)):
        with pytest.raises(AssertionError, match="Size mismatch"):
            d.TensorDataset(lib.zeros(3), lib.zeros(4))
    sub, tsub = jd.Subset(range(10, 20), [4, 0, 7]), td.Subset(range(10, 20), [4, 0, 7])
    assert [sub[i] for i in range(3)] == [tsub[i] for i in range(3)] == [14, 10, 17]
    assert len(sub) == 3 and sub.__getitems__([2, 0]) == [17, 14]
    class Lists(jd.Dataset):  # a dataset that reads a list of keys at once
        def __getitem__(self, keys):
            return [10 * k for k in keys]
    assert jd.Subset(Lists(), [2, 1])[[0, 1]] == [20, 10]
    cat, tcat = jd.ConcatDataset([range(3), range(10, 14)]), td.ConcatDataset([range(3),
                                                                               range(10, 14)])
    assert len(cat) == len(tcat) == 7 and cat.cumulative_sizes == tcat.cumulative_sizes
    assert [cat[i] for i in range(-7, 7)] == [tcat[i] for i in range(-7, 7)]
    for c in (cat, tcat):
        with pytest.raises(ValueError, match="absolute value of index"):
            c[-8]
    for d in (jd, td):
        with pytest.raises(AssertionError, match="empty"):
            d.ConcatDataset([])
        with pytest.raises(AssertionError, match="IterableDataset"):
            d.ConcatDataset([Stream(d, 2)])
        with pytest.raises(AssertionError, match="only supports IterableDataset"):
            list(d.ChainDataset([range(2)]))
        with pytest.raises(NotImplementedError):
            d.Dataset()[0]
    assert isinstance(pair(jd, jt) + pair(jd, jt), jd.ConcatDataset)
    assert isinstance(Stream(jd, 1) + Stream(jd, 1), jd.ChainDataset)


def test_subset_that_overrides_getitem_only_is_refused_as_torch():
    for d in (jd, td):
        class Doubled(d.Subset):
            def __getitem__(self, i):
                return 2 * super().__getitem__(i)
        with pytest.raises(NotImplementedError, match="__getitems__"):
            Doubled(range(3), [0, 1])


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [1.0], [0.33, 0.67],
                                     [0.1] * 10, [10, 0]])
@pytest.mark.filterwarnings("ignore:Length of split")
def test_random_split_lengths_and_partition(lengths):
    mine = jd.random_split(range(10), lengths, generator=jt.Generator().manual_seed(1))
    theirs = td.random_split(range(10), lengths, generator=torch.Generator().manual_seed(1))
    assert [len(s) for s in mine] == [len(s) for s in theirs]
    assert sorted(i for s in mine for i in s) == list(range(10))
    again = jd.random_split(range(10), lengths, generator=jt.Generator().manual_seed(1))
    assert [list(s) for s in mine] == [list(s) for s in again]


def test_random_split_uses_the_default_generator_and_checks_lengths():
    jt.manual_seed(5)
    a = [list(s) for s in jd.random_split(range(20), [10, 10])]
    jt.manual_seed(5)
    assert a == [list(s) for s in jd.random_split(range(20), [10, 10])]
    assert a != [list(range(10)), list(range(10, 20))]
    for d in (jd, td):
        with pytest.raises(ValueError, match="Sum of input lengths"):
            d.random_split(range(10), [3, 3])
        with pytest.raises(ValueError, match="Fraction at index 1"):
            d.random_split(range(10), [0.5, 1.5, -1.0])
        with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
            d.random_split(range(2), [0.9, 0.05, 0.05])


# -- samplers -------------------------------------------------------------------------------------
def test_random_sampler_orders_and_counts():
    g = jt.Generator().manual_seed(3)
    s = jd.RandomSampler(range(10), generator=g)
    first, second = list(s), list(s)
    assert sorted(first) == sorted(second) == list(range(10)) and first != second
    assert list(jd.RandomSampler(range(10), generator=jt.Generator().manual_seed(3))) == first
    more = list(jd.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(more) == 10 and sorted(more[:4]) == sorted(more[4:8]) == [0, 1, 2, 3]
    assert len(set(more[8:])) == 2
    draws = list(jd.RandomSampler(range(5), replacement=True, num_samples=5000, generator=g))
    assert len(draws) == len(jd.RandomSampler(range(5), True, 5000)) == 5000
    counts = np.bincount(draws, minlength=5)
    assert counts.size == 5 and (abs(counts - 1000) < 6 * math.sqrt(800)).all()
    jt.manual_seed(8)
    a = list(jd.RandomSampler(range(10)))
    jt.manual_seed(8)
    assert a == list(jd.RandomSampler(range(10)))


def test_sampler_errors_match_torch():
    cases = [
        (lambda d: d.RandomSampler(range(3), replacement=1), TypeError, "replacement"),
        (lambda d: d.RandomSampler(range(3), num_samples=0), ValueError, "num_samples"),
        (lambda d: d.RandomSampler(range(3), num_samples=2.0), ValueError, "num_samples"),
        (lambda d: d.WeightedRandomSampler([1.0], 0), ValueError, "num_samples"),
        (lambda d: d.WeightedRandomSampler([1.0], True), ValueError, "num_samples"),
        (lambda d: d.WeightedRandomSampler([1.0], 2, replacement=0), ValueError, "replacement"),
        (lambda d: d.WeightedRandomSampler([[1.0, 2.0]], 2), ValueError, "1d sequence"),
        (lambda d: d.BatchSampler(range(3), 0, False), ValueError, "batch_size"),
        (lambda d: d.BatchSampler(range(3), True, False), ValueError, "batch_size"),
        (lambda d: d.BatchSampler(range(3), 2, 1), ValueError, "drop_last"),
        (lambda d: list(d.WeightedRandomSampler([1.0, 1.0], 3, replacement=False)),
         RuntimeError, "n_sample > prob_dist"),
        (lambda d: list(d.Sampler()), NotImplementedError, None),
    ]
    for make, kind, message in cases:
        for d in (td, jd):
            with pytest.raises(kind, match=message):
                make(d)


def test_sequential_subset_weighted_and_batch_samplers():
    assert list(jd.SequentialSampler(range(4))) == list(td.SequentialSampler(range(4)))
    assert len(jd.SequentialSampler(range(4))) == 4
    idx = [10, 20, 30, 40]
    s = jd.SubsetRandomSampler(idx, generator=jt.Generator().manual_seed(2))
    assert sorted(s) == idx and len(s) == 4
    w = jd.WeightedRandomSampler([0.0, 1.0, 3.0], 4000, generator=jt.Generator().manual_seed(4))
    draws = np.array(list(w))
    assert len(w) == 4000 and w.weights.dtype is jt.float64
    assert (draws != 0).all() and abs((draws == 2).mean() - 0.75) < 6 * math.sqrt(0.1875 / 4000)
    no_repeat = list(jd.WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], 4, replacement=False))
    assert sorted(no_repeat) == [0, 1, 2, 3]
    for size, drop in [(3, False), (3, True), (5, True), (12, False), (1, True)]:
        mine = jd.BatchSampler(jd.SequentialSampler(range(10)), size, drop)
        theirs = td.BatchSampler(td.SequentialSampler(range(10)), size, drop)
        assert list(mine) == list(theirs) and len(mine) == len(theirs)


# -- the loader's options -----------------------------------------------------------------------
def test_shuffle_reproducible_with_a_generator_and_new_each_epoch():
    def epochs(seed):
        loader = jd.DataLoader(range(12), batch_size=5, shuffle=True,
                               generator=jt.Generator().manual_seed(seed))
        return [[b.tolist() for b in loader] for _ in range(2)]
    first = epochs(1)
    assert first == epochs(1) and first != epochs(2)
    assert first[0] != first[1]
    for epoch in first:
        assert [len(b) for b in epoch] == [5, 5, 2]
        assert sorted(i for b in epoch for i in b) == list(range(12))
    jt.manual_seed(3)
    a = [b.tolist() for b in jd.DataLoader(range(6), batch_size=2, shuffle=True)]
    jt.manual_seed(3)
    assert a == [b.tolist() for b in jd.DataLoader(range(6), batch_size=2, shuffle=True)]


def test_getitems_is_used_for_batches():
    class Batched(jd.Dataset):
        calls = []

        def __len__(self):
            return 5

        def __getitem__(self, i):
            raise AssertionError("the batched read should be used")

        def __getitems__(self, indices):
            self.calls.append(list(indices))
            return [jt.tensor(float(i)) for i in indices]
    batches = [b.tolist() for b in jd.DataLoader(Batched(), batch_size=2)]
    assert batches == [[0.0, 1.0], [2.0, 3.0], [4.0]] and Batched.calls == [[0, 1], [2, 3], [4]]


@pytest.mark.subprocess
@pytest.mark.slow
def test_workers_give_the_same_batches():
    # (worker processes: more in tests/test_dataloader_workers.py)
    plain = [b.tolist() for b in jd.DataLoader(range(9), batch_size=2)]
    with_workers = jd.DataLoader(range(9), batch_size=2, num_workers=3, timeout=5,
                                 persistent_workers=True, prefetch_factor=4)
    assert [b.tolist() for b in with_workers] == plain
    seen = []

    class Probe(jd.IterableDataset):
        def __iter__(self):
            seen.append(jd.get_worker_info())  # in the worker's copy of `seen`
            return iter(range(4))
    # unsharded, each worker yields the whole stream, as torch's
    assert [b.tolist() for b in jd.DataLoader(Probe(), batch_size=2, num_workers=2)] == [
        [0, 1], [0, 1], [2, 3], [2, 3]]
    assert seen == [] and jd.get_worker_info() is None and td.get_worker_info() is None


def test_pin_memory_warns_and_loads():
    with pytest.warns(UserWarning, match="pin"):
        loader = jd.DataLoader(range(3), batch_size=2, pin_memory=True)
    assert [b.tolist() for b in loader] == [[0, 1], [2]]


def test_loader_errors_match_torch():
    def stream(d):
        return Stream(d, 3)
    cases = [
        (lambda d: d.DataLoader(range(3), num_workers=-1), "num_workers option"),
        (lambda d: d.DataLoader(range(3), timeout=-1), "timeout option"),
        (lambda d: d.DataLoader(range(3), prefetch_factor=2), "prefetch_factor option"),
        (lambda d: d.DataLoader(range(3), num_workers=1, prefetch_factor=-1), "prefetch_factor"),
        (lambda d: d.DataLoader(range(3), persistent_workers=True), "persistent_workers"),
        (lambda d: d.DataLoader(stream(d), shuffle=True), "expected unspecified shuffle"),
        (lambda d: d.DataLoader(stream(d), sampler=[0]), "expected unspecified sampler"),
        (lambda d: d.DataLoader(stream(d), batch_sampler=[[0]]), "unspecified batch_sampler"),
        (lambda d: d.DataLoader(range(3), sampler=[0], shuffle=True), "mutually exclusive"),
        (lambda d: d.DataLoader(range(3), batch_sampler=[[0]], batch_size=2), "mutually"),
        (lambda d: d.DataLoader(range(3), batch_sampler=[[0]], drop_last=True), "mutually"),
        (lambda d: d.DataLoader(range(3), batch_size=None, drop_last=True), "auto-batching"),
        (lambda d: d.DataLoader(range(3), batch_size=0), "batch_size should be"),
    ]
    for make, message in cases:
        for d in (td, jd):
            with pytest.raises(ValueError, match=message):
                make(d)
    for d in (td, jd):
        loader = d.DataLoader(range(3))
        with pytest.raises(ValueError, match="should not be set after"):
            loader.batch_size = 4
        loader.collate_fn = d.default_collate  # other attributes stay settable
    assert len(jd.DataLoader(range(3), shuffle=False, batch_size=None)) == 3


# -- CUDA ----------------------------------------------------------------------------------------
@needs_cuda
def test_cuda_tensors_batch_on_their_device():
    x = jt.arange(12.0, device="cuda").reshape(6, 2)
    loader = jd.DataLoader(jd.TensorDataset(x, x.sum(1)), batch_size=4)
    (a, b), (c, d) = list(loader)
    assert a.device.type == "cuda" and a.shape == (4, 2) and c.shape == (2, 2)
    np.testing.assert_array_equal(a.cpu().numpy(), np.arange(8.0).reshape(4, 2))
    np.testing.assert_array_equal(d.cpu().numpy(), [17.0, 21.0])
    split = jd.random_split(jd.TensorDataset(x), [0.5, 0.5],
                            generator=jt.Generator().manual_seed(0))
    assert sorted(int(s[i][0][0].item()) for s in split for i in range(3)) == [0, 2, 4, 6, 8, 10]


def test_stack_dataset_matches_torch():
    torch = pytest.importorskip("torch")
    for lib in (jt, torch):
        a = lib.utils.data.TensorDataset(lib.arange(6).view(3, 2))
        b = ["x", "y", "z"]
        tuples, named = lib.utils.data.StackDataset(a, b), lib.utils.data.StackDataset(x=a, y=b)
        got = (len(tuples), tuples[1][0][0].tolist(), tuples[1][1], named[2]["y"],
               [(s[0][0].tolist(), s[1]) for s in tuples.__getitems__([0, 2])],
               [(s["x"][0].tolist(), s["y"]) for s in named.__getitems__([1])],
               [(batch["x"][0].tolist(), batch["y"])
                for batch in lib.utils.data.DataLoader(named, batch_size=2)])
        errors = []
        for args, kwargs in (((a,), {"y": b}), ((), {}), ((a, [1]), {})):
            with pytest.raises(ValueError) as e:
                lib.utils.data.StackDataset(*args, **kwargs)
            errors.append(str(e.value))
        if lib is jt:
            mine = got, errors
    assert mine == (got, errors)

"""F.fractional_max_pool2d/3d and nn.FractionalMaxPool2d/3d against torch: given the same
samples, the same values and indices exactly; gradients; errors; drawn samples."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt
from jitensor import nn
from jitensor.nn import functional as F

torch = pytest.importorskip("torch")


def _pool(lib, n, x, samples, *args, **kwargs):
    fn = getattr(torch.nn.functional if lib is torch else F, f"fractional_max_pool{n}d")
    t = lib.tensor(x).requires_grad_()
    values, at = fn(t, *args, return_indices=True, _random_samples=lib.tensor(samples),
                    **kwargs)
    (values * lib.tensor(np.arange(values.numel()).reshape(values.shape)
                         .astype(x.dtype))).sum().backward()
    return values.detach().numpy(), at.numpy(), t.grad.numpy()


def _same(x, samples, n, *args, **kwargs):
    theirs = _pool(torch, n, x, samples, *args, **kwargs)
    ours = _pool(jt, n, x, samples, *args, **kwargs)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel, output", [(2, (5, 4)), ((3, 2), (7, 8)), (2, 1), (3, (9, 7))])
def test_2d_equals_torch(dtype, kernel, output):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 11, 9)).astype(dtype)
    _same(x, rng.random((2, 3, 2)).astype(dtype), 2, kernel, output_size=output)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_3d_equals_torch(dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 7, 11, 9)).astype(dtype)
    _same(x, rng.random((2, 3, 3)).astype(dtype), 3, (2, 3, 2), output_size=(4, 5, 6))
    _same(x[0], rng.random((1, 3, 3)).astype(dtype), 3, 2, output_ratio=(0.5, 0.5, 0.5))


def test_unbatched_ratio_and_extra_samples():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 10, 12)).astype(np.float32)
    _same(x, rng.random((1, 3, 2)).astype(np.float32), 2, 3, output_ratio=(0.5, 0.7))
    x = rng.standard_normal((2, 3, 10, 12)).astype(np.float32)
    # samples for more batch elements than there are: the first ones serve
    _same(x, rng.random((4, 3, 2)).astype(np.float32), 2, 2, output_ratio=[0.4, 0.3])


def test_ties_and_nan_pick_as_torch():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2, (1, 2, 9, 9)).astype(np.float32)  # many ties: the first max wins
    x[0, 1, ::2, 1::3] = np.nan  # several NaNs in a window: the last one wins
    samples = rng.random((1, 2, 2)).astype(np.float32)
    theirs = _pool(torch, 2, x, samples, 3, output_size=4)
    ours = _pool(jt, 2, x, samples, 3, output_size=4)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])


@settings(deadline=None, max_examples=30)
@given(data=st.data(), n=st.sampled_from([2, 3]), batch=st.integers(1, 2),
       planes=st.integers(1, 3))
def test_against_torch_hypothesis(data, n, batch, planes):
    sizes = data.draw(st.tuples(*[st.integers(1, 9)] * n))
    kernel = tuple(data.draw(st.integers(1, s)) for s in sizes)
    output = tuple(data.draw(st.integers(1, s - k + 1)) for s, k in zip(sizes, kernel,
                                                                         strict=True))
    seed = data.draw(st.integers(0, 99))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, planes) + sizes).astype(np.float32)
    samples = rng.random((batch, planes, n)).astype(np.float32)
    if n == 3 and any(o + k - 1 == s for s, k, o in zip(sizes, kernel, output, strict=True)):
        # torch's 3-d check is strict: both refuse a window ending at the last element
        raised = [_error(lambda lib=lib: _pool(lib, n, x, samples, kernel, output_size=output))
                  for lib in (torch, jt)]
        assert type(raised[1]) is type(raised[0]) is RuntimeError
        return
    _same(x, samples, n, kernel, output_size=output)


def test_modules_and_drawn_samples():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    samples = rng.random((2, 3, 2)).astype(np.float32)
    ours = nn.FractionalMaxPool2d(2, output_size=3, _random_samples=jt.tensor(samples))
    theirs = torch.nn.FractionalMaxPool2d(2, output_size=3,
                                          _random_samples=torch.tensor(samples))
    np.testing.assert_array_equal(ours(jt.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy())
    assert "_random_samples" in dict(ours.named_buffers())
    # without samples: jitensor's generator draws them, reproducibly
    m = nn.FractionalMaxPool3d(2, output_ratio=0.5, return_indices=True)
    volume = jt.tensor(rng.standard_normal((2, 3, 6, 6, 6)).astype(np.float32))
    jt.manual_seed(5)
    first = m(volume)
    jt.manual_seed(5)
    again = m(volume)
    assert tuple(first[0].shape) == (2, 3, 3, 3, 3)
    np.testing.assert_array_equal(first[1].numpy(), again[1].numpy())
    # each value is the input at its index
    flat = volume.numpy().reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, first[1].numpy().reshape(2, 3, -1),
                                                     2), first[0].numpy().reshape(2, 3, -1))


def test_same_bits_at_one_and_two_threads():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((8, 16, 40, 40)).astype(np.float32)
    samples = rng.random((8, 16, 2)).astype(np.float32)
    before = jt.get_num_threads()
    try:
        jt.set_num_threads(1)
        one = _pool(jt, 2, x, samples, 3, output_size=17)
        jt.set_num_threads(2)
        two = _pool(jt, 2, x, samples, 3, output_size=17)
    finally:
        jt.set_num_threads(before)
    for a, b in zip(one, two, strict=True):
        assert np.array_equal(a, b)


def _error(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 (the test compares the exception's type)
        return e
    raise AssertionError("no error")


X2, S2 = np.zeros((2, 3, 9, 8), np.float32), np.zeros((2, 3, 2), np.float32)
ERRORS = [  # (function name, input, arguments, samples, words of both messages)
    ("2d", X2, dict(kernel_size=2), None, "either an output_size or an output_ratio"),
    ("2d", X2, dict(kernel_size=(2, 3, 1), output_size=4), S2, "kernel_size must either"),
    ("2d", X2, dict(kernel_size=2, output_size=(4, 4, 4)), S2, "output_size must either"),
    ("2d", X2, dict(kernel_size=2, output_ratio=(0.5,) * 3), S2, "output_ratio to either"),
    ("2d", X2, dict(kernel_size=2, output_ratio=0.5), S2, "has no len()"),
    ("2d", X2, dict(kernel_size=5, output_size=6), S2, "pool height 5 too large"),
    ("2d", X2, dict(kernel_size=2, output_size=(8, 8)), S2, "pool width 2 too large"),
    ("2d", X2, dict(kernel_size=2, output_size=4), S2[:1], "size(0) no less then"),
    ("2d", X2, dict(kernel_size=2, output_size=4), S2[:, :2], "size(1) equals"),
    ("2d", X2, dict(kernel_size=2, output_size=4), np.zeros((2, 3, 3), np.float32),
     "size(2) equals to 2; got 3"),
    ("2d", X2, dict(kernel_size=2, output_size=4), S2[:, :, 0], "to have 3 dimensions"),
    ("2d", X2, dict(kernel_size=2, output_size=4), S2.astype(np.float64), "same dtype"),
    ("2d", X2[:, :, :0], dict(kernel_size=2, output_size=4), S2, "non-zero size"),
    ("2d", X2[0, 0], dict(kernel_size=2, output_size=4), None, "out of range"),
    ("2d", X2, dict(kernel_size=2, output_ratio=[0.5]), S2, "index out of range"),
    ("3d", X2[:, :, None], dict(kernel_size=2, output_size=4), None,
     "pool time 2 too large relative to input time 1"),
    ("3d", X2[:, :, None], dict(kernel_size=(2, 2), output_size=1), None,
     "kernel_size must either be a single Int or tuple of three Ints"),
    ("3d", np.zeros((2, 3, 5, 9, 8), np.float32), dict(kernel_size=2, output_size=3), S2,
     "size(2) equals to 3; got 2"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_match_torch(index):
    n, x, kwargs, samples, words = ERRORS[index]
    raised = []
    for lib, functional in ((torch, torch.nn.functional), (jt, F)):
        extra = {} if samples is None else {"_random_samples": lib.tensor(samples)}
        fn = getattr(functional, f"fractional_max_pool{n}")
        raised.append(_error(lambda lib=lib, fn=fn, extra=extra: fn(lib.tensor(x), **kwargs,
                                                                     **extra)))
    assert type(raised[1]) is type(raised[0]), raised
    for e in raised:
        assert words in str(e), e


@pytest.mark.parametrize("args, words", [
    (dict(kernel_size=2), "requires specifying either an output size, or a pooling ratio"),
    (dict(kernel_size=2, output_size=3, output_ratio=0.5), "only one of"),
    (dict(kernel_size=2, output_ratio=1.5), "between 0 and 1"),
])
def test_module_errors(args, words):
    for module in (torch.nn.FractionalMaxPool2d, nn.FractionalMaxPool2d):
        with pytest.raises(ValueError, match=words):
            module(**args)

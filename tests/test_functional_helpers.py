"""The smaller names of torch.nn.functional: conv_tbc, native_channel_shuffle,
assert_int_or_pair and boolean_dispatch, against torch."""
import numpy as np
import pytest

import jitensor as jt
from jitensor.nn import functional as F

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc_values_and_gradients(pad):
    rng = np.random.default_rng(pad + 5)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((6, 2, 3), (3, 3, 4), (4,))]
    out = []
    for lib, fn in ((torch, torch.nn.functional.conv_tbc), (jt, F.conv_tbc)):
        tensors = [lib.tensor(a).requires_grad_() for a in arrays]
        y = fn(*tensors, pad)
        (y * lib.tensor(np.arange(y.numel()).reshape(y.shape).astype(np.float32))).sum() \
            .backward()
        out.append([y.detach().numpy()] + [t.grad.numpy() for t in tensors])
    for a, b in zip(*out, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shapes, pad, words", [
    (((5, 2, 3), (3, 2, 4), (4,)), 0, "input channels"),
    (((5, 2), (3, 3, 4), (4,)), 0, "Input must have 3 dims"),
    (((5, 2, 3), (3, 3), (4,)), 0, "Weight tensor must have 3 dims"),
    (((5, 2, 3), (3, 3, 4), (5,)), 0, "Bias size must equal"),
    (((5, 2, 3), (3, 3, 4), (4, 1)), 0, "Bias must be 1-D"),
    (((5, 2, 3), (8, 3, 4), (4,)), 0, "negative dimension -2"),
])
def test_conv_tbc_errors_match_torch(shapes, pad, words):
    for lib, fn in ((torch, torch.conv_tbc), (jt, F.conv_tbc)):
        with pytest.raises(RuntimeError, match=words):
            fn(*(lib.zeros(s) for s in shapes), pad)


def test_native_channel_shuffle():
    x = np.arange(2 * 6 * 3, dtype=np.float32).reshape(2, 6, 3)
    np.testing.assert_array_equal(F.native_channel_shuffle(jt.tensor(x), 3).numpy(),
                                  torch.nn.functional.native_channel_shuffle(
                                      torch.tensor(x), 3).numpy())


def test_assert_int_or_pair():
    for fn in (torch.nn.functional.assert_int_or_pair, F.assert_int_or_pair):
        fn(3, "kernel_size", "{} must be an int or a pair")
        fn((1, 2), "kernel_size", "{} must be an int or a pair")
        with pytest.raises(AssertionError, match="stride must be an int or a pair"):
            fn((1, 2, 3), "stride", "{} must be an int or a pair")


def _pair_of_functions():
    def with_flag(x, flag=False):
        """Doc."""
        return ("true", x)

    def without(x, flag=False):
        return ("false", x)
    return with_flag, without


def test_boolean_dispatch():
    for module in (torch.nn.functional, F):
        with_flag, without = _pair_of_functions()
        fn = module.boolean_dispatch("flag", 1, False, with_flag, without, "m", "dispatched")
        assert fn(1) == ("false", 1) and fn(1, True) == ("true", 1)
        assert fn(1, flag=True) == ("true", 1)
        assert fn.__name__ == "dispatched" and fn.__module__ == "m" and fn.__doc__ == "Doc."
        assert without.__doc__ == "Doc."  # (both take the one docstring, as torch's)
    with_flag, without = _pair_of_functions()
    without.__doc__ = "Other."
    with pytest.raises(RuntimeError, match="only one function can have a docstring"):
        F.boolean_dispatch("flag", 1, False, with_flag, without, None, None)

"""F.ctc_loss and nn.CTCLoss against torch: values, gradients (torch's native backward),
argument forms, errors, and the same bits at any thread count."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt
from jitensor import nn
from jitensor.kernels.cpu.kernels import PARALLEL_MIN
from jitensor.nn import functional as F

torch = pytest.importorskip("torch")


def _case(t_max, n, c, s, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((t_max, n, c)).astype(dtype)
    log_probs = torch.tensor(logits).log_softmax(2).numpy()
    targets = rng.integers(1, c, (n, s))
    return log_probs, targets


def _both(log_probs, targets, input_lengths, target_lengths, wrap=None, **kwargs):
    """(loss, grad) of torch and of jitensor for the same arguments; `wrap` turns the lengths
    into each library's argument form (default: as given, lists)."""
    out = []
    for lib, fn in ((torch, torch.nn.functional.ctc_loss), (jt, F.ctc_loss)):
        x = lib.tensor(log_probs).requires_grad_()
        lengths = [input_lengths, target_lengths] if wrap is None else \
            [wrap(lib, v) for v in (input_lengths, target_lengths)]
        loss = fn(x, lib.tensor(targets), *lengths, **kwargs)
        loss.sum().backward()
        out.append((loss.detach().numpy(), x.grad.numpy()))
    return out


def _as_tensor(lib, lengths):
    return lib.tensor(lengths)


def _as_0d(lib, lengths):
    return lib.tensor(lengths[0])


def _close(ours, theirs, dtype=np.float32):
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_gradients(reduction, dtype):
    log_probs, targets = _case(12, 4, 6, 5, dtype=dtype)
    theirs, ours = _both(log_probs, targets, [12, 10, 7, 3], [5, 3, 0, 1], reduction=reduction)
    assert ours[0].dtype == dtype and ours[1].dtype == dtype
    _close(ours, theirs, dtype)


def test_concatenated_targets_and_tensor_lengths():
    log_probs, targets = _case(10, 3, 5, 4, seed=1)
    lengths = [4, 2, 3]
    flat = np.concatenate([targets[b, :k] for b, k in enumerate(lengths)])
    theirs, ours = _both(log_probs, flat, [10, 9, 8], lengths, wrap=_as_tensor, reduction="none")
    _close(ours, theirs)
    # int32 lengths and targets, and tuples
    theirs, ours = _both(log_probs, targets.astype(np.int32), (10, 9, 8), tuple(lengths))
    _close(ours, theirs)


def test_repeated_labels_and_blank_elsewhere():
    log_probs, _ = _case(9, 2, 4, 4, seed=2)
    targets = np.array([[1, 1, 2, 2], [0, 3, 3, 0]])  # repeats need a blank between them
    theirs, ours = _both(log_probs, targets, [9, 9], [4, 4], blank=2, reduction="none")
    _close(ours, theirs)


def test_unbatched():
    log_probs, targets = _case(8, 1, 5, 3, seed=3)
    for reduction in ("none", "mean"):
        theirs, ours = _both(log_probs[:, 0], targets[0], [8], [3], reduction=reduction)
        assert ours[0].shape == theirs[0].shape
        _close(ours, theirs)
    theirs, ours = _both(log_probs[:, 0], targets[0], [8], [3], wrap=_as_0d, reduction="none")
    _close(ours, theirs)


def test_impossible_alignments_and_zero_infinity():
    log_probs, targets = _case(6, 3, 5, 4, seed=4)
    targets[0] = [1, 1, 1, 1]  # needs 7 frames
    lengths = ([6, 0, 0], [4, 2, 0])  # too short; no frames for 2 labels; nothing for nothing
    for zero_infinity in (False, True):
        theirs, ours = _both(log_probs, targets, *lengths, reduction="none",
                             zero_infinity=zero_infinity)
        np.testing.assert_array_equal(ours[0], theirs[0])  # inf, inf, 0 (or 0, 0, 0)
        np.testing.assert_array_equal(np.isnan(ours[1]), np.isnan(theirs[1]))
        _close(ours, theirs)


def test_module_and_devices_of_lengths():
    log_probs, targets = _case(7, 2, 4, 3, seed=5)
    ours = nn.CTCLoss(blank=3, reduction="sum", zero_infinity=True)(
        jt.tensor(log_probs), jt.tensor(targets), jt.tensor([7, 5]), jt.tensor([3, 1]))
    theirs = torch.nn.CTCLoss(blank=3, reduction="sum", zero_infinity=True)(
        torch.tensor(log_probs), torch.tensor(targets), torch.tensor([7, 5]),
        torch.tensor([3, 1]))
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-6)


@settings(deadline=None, max_examples=25)
@given(data=st.data(), n=st.integers(1, 4), c=st.integers(2, 6), t_max=st.integers(1, 10),
       reduction=st.sampled_from(["mean", "sum", "none"]), zero_infinity=st.booleans())
def test_against_torch_hypothesis(data, n, c, t_max, reduction, zero_infinity):
    blank = data.draw(st.integers(0, c - 1))
    s = data.draw(st.integers(0, 6))
    input_lengths = data.draw(st.lists(st.integers(0, t_max), min_size=n, max_size=n))
    target_lengths = data.draw(st.lists(st.integers(0, s), min_size=n, max_size=n))
    log_probs, _ = _case(t_max, n, c, s, seed=data.draw(st.integers(0, 99)))
    targets = np.array(data.draw(st.lists(st.lists(st.integers(0, c - 1), min_size=s,
                                                   max_size=s), min_size=n, max_size=n)),
                       np.int64).reshape(n, s)
    theirs, ours = _both(log_probs, targets, input_lengths, target_lengths, blank=blank,
                         reduction=reduction, zero_infinity=zero_infinity)
    np.testing.assert_array_equal(np.isinf(ours[0]), np.isinf(theirs[0]))
    np.testing.assert_array_equal(np.isnan(ours[1]), np.isnan(theirs[1]))
    _close(ours, theirs)


def test_same_bits_at_one_and_two_threads():
    t_max, n, s = 100, 16, 25  # alpha holds more than PARALLEL_MIN elements: the parallel path
    assert t_max * n * (2 * s + 1) > PARALLEL_MIN
    log_probs, targets = _case(t_max, n, 8, s, seed=6)
    lengths = ([t_max - b for b in range(n)], [s - b % 3 for b in range(n)])

    def run():
        x = jt.tensor(log_probs).requires_grad_()
        loss = F.ctc_loss(x, jt.tensor(targets), *lengths, reduction="none")
        loss.sum().backward()
        return loss.detach().numpy(), x.grad.numpy()

    before = jt.get_num_threads()
    try:
        jt.set_num_threads(1)
        one = run()
        jt.set_num_threads(2)
        two = run()
    finally:
        jt.set_num_threads(before)
    for a, b in zip(one, two, strict=True):
        assert np.array_equal(a, b)
    small = _both(log_probs[:, :2], targets[:2], lengths[0][:2], lengths[1][:2],
                  reduction="none")  # (the serial path)
    _close(small[1], small[0])


def _error(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 (the test compares the exception's type)
        return e
    raise AssertionError("no error")


ERRORS = [  # (arguments as a function of a library, words of both messages)
    (lambda lib, lp, tg: (lp, tg, [7, 5], [3, 2]), "at most"),
    (lambda lib, lp, tg: (lp, tg, [-1, 5], [3, 2]), "at least"),
    (lambda lib, lp, tg: (lp, tg, [6, 5], [-1, 2]), "at least"),
    (lambda lib, lp, tg: (lp, tg, [6, 5], [4, 2]), "at least 4"),
    (lambda lib, lp, tg: (lp, tg, [6, 5, 4], [3, 2]), "batch_size"),
    (lambda lib, lp, tg: (lp, tg, [6, 5], [3]), "batch_size"),
    (lambda lib, lp, tg: (lp, tg, [6, 5], [3, 2], 5), "blank must be in label range"),
    (lambda lib, lp, tg: (lp, tg, [6, 5], [3, 2], -1), "blank must be in label range"),
    (lambda lib, lp, tg: (lp, tg.flatten(), [6, 5], [3, 2]), "size 5"),
    (lambda lib, lp, tg: (lp, tg[:1], [6, 5], [3, 2]), "size 2"),
    (lambda lib, lp, tg: (lp, tg, lib.tensor([6., 5]), lib.tensor([3, 2])), "integral"),
    (lambda lib, lp, tg: (lp, tg, lib.tensor([6, 5]), lib.tensor([3., 2])), "integral"),
    (lambda lib, lp, tg: (lp, tg, lib.tensor([6, 5]), [3, 2]), "ctc_loss"),
    (lambda lib, lp, tg: (lp, tg, 6, 3), "ctc_loss"),
    (lambda lib, lp, tg: (lp.unsqueeze(0), tg, [6, 5], [3, 2]), "3-dimensional"),
    (lambda lib, lp, tg: (lp, tg.unsqueeze(0), [6, 5], [3, 2]), "1 to 2 dimensions"),
    (lambda lib, lp, tg: (lp.long(), tg, [6, 5], [3, 2]), "not implemented"),
    (lambda lib, lp, tg: (lp, tg, [6, 5], [3, 2], 0, "bad"), "not a valid value for reduction"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_match_torch(index):
    args, words = ERRORS[index]
    log_probs, targets = _case(6, 2, 5, 3)
    raised = [_error(lambda lib=lib, fn=fn: fn(*args(lib, lib.tensor(log_probs),
                                                     lib.tensor(targets))))
              for lib, fn in ((torch, torch.nn.functional.ctc_loss), (jt, F.ctc_loss))]
    assert type(raised[1]) is type(raised[0]), raised
    for e in raised:
        assert words in str(e), e


def test_labels_out_of_range_raise():
    log_probs, targets = _case(6, 2, 5, 3)
    with pytest.raises(RuntimeError, match=r"target labels must be in \[0, 5\)"):
        F.ctc_loss(jt.tensor(log_probs), jt.tensor(targets + 3), [6, 5], [3, 2])
    # labels past a target's length are padding, never read
    targets[1, 2] = 99
    F.ctc_loss(jt.tensor(log_probs), jt.tensor(targets), [6, 5], [3, 2])


@pytest.mark.skipif(not jt.cuda.is_available(), reason="no CUDA: numba-cuda is not installed")
def test_cuda_matches_cpu():
    log_probs, targets = _case(5, 2, 4, 2, seed=7)
    out = []
    for device in ("cpu", "cuda"):
        x = jt.tensor(log_probs, device=device).requires_grad_()
        loss = F.ctc_loss(x, jt.tensor(targets, device=device), [5, 4], [2, 1])
        loss.backward()
        assert loss.device.type == device and x.grad.device.type == device
        out.append((loss.detach().cpu().numpy(), x.grad.cpu().numpy()))
    for a, b in zip(*out, strict=True):
        np.testing.assert_array_equal(a, b)

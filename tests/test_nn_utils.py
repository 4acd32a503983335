"""jt.nn.utils against torch.nn.utils: gradient clipping (norms of every order, skipped grads,
generators, the non-finite error), parameters_to_vector / vector_to_parameters and rnn's
pad_sequence / unpad_sequence, on the same values in both libraries."""
import math
import warnings

import numpy as np
import pytest

import jitensor as jt
from jitensor import nn
from jitensor.nn import utils

torch = pytest.importorskip("torch")


def values(t):
    return t.detach().numpy()


def _raises_as_torch(jt_call, torch_call):
    with pytest.raises(Exception) as expected:
        torch_call()
    with pytest.raises(type(expected.value)) as got:
        jt_call()
    assert str(got.value) == str(expected.value).replace("torch.Tensor", "jitensor.Tensor")
    return got


def _twin_params(shapes, dtypes=None, grads=True, scale=1.0, seed=0):
    """The same parameters, with the same .grad (None where shapes[i] is marked by a None
    gradient), in jitensor and torch."""
    rng = np.random.default_rng(seed)
    dtypes = dtypes or ["float32"] * len(shapes)
    jps, tps = [], []
    for shape, dtype in zip(shapes, dtypes, strict=False):
        data = rng.standard_normal(shape).astype(dtype)
        jp, tp = nn.Parameter(jt.tensor(data)), torch.nn.Parameter(torch.tensor(data))
        if grads:
            grad = (scale * rng.standard_normal(shape)).astype(dtype)
            jp.grad, tp.grad = jt.tensor(grad), torch.tensor(grad)
        jps.append(jp)
        tps.append(tp)
    return jps, tps


def _same(jt_t, torch_t, rtol=1e-6, atol=0.0):
    assert jt_t.dtype.name == str(torch_t.dtype).removeprefix("torch.")
    assert tuple(jt_t.shape) == tuple(torch_t.shape)
    np.testing.assert_allclose(values(jt_t), torch_t.detach().numpy(), rtol=rtol, atol=atol)


def _same_grads(jps, tps, rtol=1e-6):
    for jp, tp in zip(jps, tps, strict=False):
        assert (jp.grad is None) == (tp.grad is None)
        if jp.grad is not None:
            _same(jp.grad, tp.grad, rtol)


# -- clip_grad_norm_ and its parts -------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf", 0.5, 0])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])  # clipped, and left as they were
def test_clip_grad_norm_as_torch(norm_type, max_norm):
    jps, tps = _twin_params([(4, 5), (7,), (2, 3, 2), ()])
    got = utils.clip_grad_norm_(jps, max_norm, norm_type)
    expected = torch.nn.utils.clip_grad_norm_(tps, max_norm, norm_type)
    _same(got, expected, rtol=2e-6)
    assert not got.requires_grad and got.grad_fn is None
    _same_grads(jps, tps, rtol=2e-6)
    for jp in jps:  # parameters themselves are untouched, and still leaves
        assert jp.is_leaf and jp.grad.grad_fn is None


def test_clip_grad_norm_inputs_as_torch():
    # a single tensor
    jps, tps = _twin_params([(10,)], scale=5.0)
    _same(utils.clip_grad_norm_(jps[0], 1.0), torch.nn.utils.clip_grad_norm_(tps[0], 1.0))
    _same_grads(jps, tps)
    # a generator (read once, for both the norm and the clipping), and grads that are None
    jps, tps = _twin_params([(3, 3), (4,)], scale=3.0, seed=1)
    jps += _twin_params([(2,)], grads=False)[0]
    tps += _twin_params([(2,)], grads=False)[1]
    got = utils.clip_grad_norm_((p for p in jps), 0.1)
    _same(got, torch.nn.utils.clip_grad_norm_((p for p in tps), 0.1))
    _same_grads(jps, tps)
    # a module's parameters, float64
    jm, tm = nn.Linear(3, 2).double(), torch.nn.Linear(3, 2).double()
    tm.load_state_dict({k: torch.tensor(values(v)) for k, v in jm.state_dict().items()})
    x = np.arange(12.0).reshape(4, 3)
    jm(jt.tensor(x)).sum().backward()
    tm(torch.tensor(x)).sum().backward()
    _same(utils.clip_grad_norm_(jm.parameters(), 2.0),
          torch.nn.utils.clip_grad_norm_(tm.parameters(), 2.0), rtol=1e-12)
    _same_grads(list(jm.parameters()), list(tm.parameters()), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clip_grad_norm_of_many_large_gradients_as_torch(dtype):
    # the 2-norm and the scaling of C-contiguous CPU gradients run as one kernel call each
    # (sums over vector lanes); a transposed gradient sends them op by op: the same results
    jps, tps = _twin_params([(300, 70), (4097,), (3, 5, 7), (1,)] * 3, [dtype] * 12, seed=3)
    for transposed in (False, True):
        if transposed:
            jps[0].grad, tps[0].grad = jps[0].grad.T.contiguous().T, tps[0].grad.T.contiguous().T
        _same(utils.clip_grad_norm_(jps, 0.5), torch.nn.utils.clip_grad_norm_(tps, 0.5),
              rtol=1e-6)
        _same_grads(jps, tps, rtol=2e-6)


def test_clip_grad_norm_mixed_dtypes_promote_the_total():
    jps, tps = _twin_params([(5,), (6,)], dtypes=["float32", "float64"], scale=4.0)
    _same(utils.clip_grad_norm_(jps, 1.0), torch.nn.utils.clip_grad_norm_(tps, 1.0))
    _same_grads(jps, tps)


def test_clip_grad_norm_empty_as_torch():
    for make in (list, iter):  # no parameters, or none with a gradient: a norm of 0.0
        jps, tps = _twin_params([(3,)], grads=False)
        _same(utils.clip_grad_norm_(make(jps), 1.0), torch.nn.utils.clip_grad_norm_(make(tps), 1.0))
        _same(utils.clip_grad_norm_(make([]), 1.0), torch.nn.utils.clip_grad_norm_(make([]), 1.0))
    with pytest.warns(UserWarning, match="`parameters` is an empty generator") as got:
        utils.clip_grad_norm_((p for p in []), 1.0)
    assert got[0].filename == __file__  # the warning points at the caller
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        utils.clip_grad_norm_([], 1.0)  # only an empty generator warns


def test_clip_grad_norm_nonfinite():
    for bad in (math.inf, math.nan):
        jps, tps = _twin_params([(3,), (2,)])
        jps[1].grad[0] = bad
        tps[1].grad[0] = bad
        _raises_as_torch(
            lambda jps=jps: utils.clip_grad_norm_(jps, 1.0, error_if_nonfinite=True),
            lambda tps=tps: torch.nn.utils.clip_grad_norm_(tps, 1.0, error_if_nonfinite=True))
        _same_grads(jps, tps)  # nothing was scaled before the error
        # without the check, gradients are scaled by the non-finite norm, as torch's are
        _same(utils.clip_grad_norm_(jps, 1.0), torch.nn.utils.clip_grad_norm_(tps, 1.0))
        for jp, tp in zip(jps, tps, strict=False):
            np.testing.assert_array_equal(values(jp.grad), tp.grad.numpy())
    jps, tps = _twin_params([(3,)])
    jps[0].grad[1] = math.inf
    tps[0].grad[1] = math.inf
    _raises_as_torch(lambda: utils.clip_grad_norm_(jps, 1.0, "inf", True),
                     lambda: torch.nn.utils.clip_grad_norm_(tps, 1.0, "inf", True))


def test_get_total_norm_and_clip_grads_with_norm_as_torch():
    jps, tps = _twin_params([(4, 3), (5,)], scale=2.0)
    for norm_type in (2.0, 1.0, math.inf):
        jn = utils.get_total_norm([p.grad for p in jps], norm_type)
        tn = torch.nn.utils.get_total_norm([p.grad for p in tps], norm_type)
        _same(jn, tn)
    _same(utils.get_total_norm(jps[0].grad, 3), torch.nn.utils.get_total_norm(tps[0].grad, 3))
    _same(utils.get_total_norm([]), torch.nn.utils.get_total_norm([]))
    # clipping with a given norm, e.g. one gathered across ranks
    assert utils.clip_grads_with_norm_(jps, 1.0, jt.tensor(20.0)) is None
    torch.nn.utils.clip_grads_with_norm_(tps, 1.0, torch.tensor(20.0))
    _same_grads(jps, tps)
    utils.clip_grads_with_norm_(jps[0], 5.0, jt.tensor(1.0))  # a coefficient over 1: unchanged
    torch.nn.utils.clip_grads_with_norm_(tps[0], 5.0, torch.tensor(1.0))
    _same_grads(jps, tps)
    utils.clip_grads_with_norm_([], 1.0, jt.tensor(2.0))
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        _same(utils.clip_grad_norm(jps, 0.1), torch.nn.utils.clip_grad_norm_(tps, 0.1))
    _same_grads(jps, tps)


@pytest.mark.parametrize("clip_value", [0.5, 2])
def test_clip_grad_value_as_torch(clip_value):
    jps, tps = _twin_params([(6, 4), (9,)], dtypes=["float32", "float64"], scale=2.0)
    jps += _twin_params([(2,)], grads=False)[0]
    tps += _twin_params([(2,)], grads=False)[1]
    assert utils.clip_grad_value_(jps, clip_value) is None
    torch.nn.utils.clip_grad_value_(tps, clip_value)
    _same_grads(jps, tps, rtol=0)
    jps, tps = _twin_params([(5,)], scale=3.0)
    utils.clip_grad_value_(iter(jps), clip_value, foreach=True)
    torch.nn.utils.clip_grad_value_(iter(tps), clip_value, foreach=True)
    _same_grads(jps, tps, rtol=0)
    utils.clip_grad_value_(jps[0], 0.1)
    torch.nn.utils.clip_grad_value_(tps[0], 0.1)
    _same_grads(jps, tps, rtol=0)


# -- parameters_to_vector, vector_to_parameters ----------------------------------------------------
def test_parameters_vector_round_trip_as_torch():
    jps, tps = _twin_params([(2, 3), (4,), ()], grads=False)
    jv, tv = utils.parameters_to_vector(jps), torch.nn.utils.parameters_to_vector(tps)
    _same(jv, tv, rtol=0)
    # differentiable in the parameters
    (jv * jt.arange(11.0)).sum().backward()
    (tv * torch.arange(11.0)).sum().backward()
    _same_grads(jps, tps, rtol=0)
    new = np.arange(11.0, dtype=np.float32) * 10
    jnew, tnew = jt.tensor(new), torch.tensor(new)
    assert utils.vector_to_parameters(jnew, jps) is None
    torch.nn.utils.vector_to_parameters(tnew, tps)
    for jp, tp in zip(jps, tps, strict=False):
        _same(jp, tp, rtol=0)
        assert isinstance(jp, nn.Parameter) and jp.requires_grad
    jnew[0] = -1.0  # the parameters now share the vector's memory, as torch's do
    tnew[0] = -1.0
    _same(jps[0], tps[0], rtol=0)


def test_parameters_vector_errors_as_torch():
    _raises_as_torch(lambda: utils.vector_to_parameters([1.0, 2.0], []),
                     lambda: torch.nn.utils.vector_to_parameters([1.0, 2.0], []))
    _raises_as_torch(lambda: utils.vector_to_parameters(np.zeros(2), []),
                     lambda: torch.nn.utils.vector_to_parameters(np.zeros(2), []))
    with pytest.raises(ValueError, match="expected a non-empty list of Tensors"):
        torch.nn.utils.parameters_to_vector([])
    with pytest.raises(ValueError, match="expected a non-empty list of Tensors"):
        utils.parameters_to_vector([])


@pytest.mark.skipif(not jt.cuda.is_available(), reason="needs two devices")
def test_parameters_on_two_devices_raise():
    params = [nn.Parameter(jt.zeros(2)), nn.Parameter(jt.zeros(2, device="cuda"))]
    with pytest.raises(TypeError, match="Found two parameters on different devices"):
        utils.parameters_to_vector(params)
    with pytest.raises(TypeError, match="Found two parameters on different devices"):
        utils.vector_to_parameters(jt.zeros(4), params)


# -- rnn.pad_sequence, rnn.unpad_sequence --------------------------------------------------------
def _sequences(lengths, trailing=(), dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    return [(10 * rng.standard_normal((n, *trailing))).astype(dtype) for n in lengths]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("lengths, trailing", [([3, 5, 1], ()), ([2, 4], (3,)),
                                                ([4, 0, 4], (2, 2)), ([1], (3,))])
def test_pad_sequence_as_torch(batch_first, padding_side, lengths, trailing):
    seqs = _sequences(lengths, trailing)
    jseqs = [jt.tensor(s, requires_grad=True) for s in seqs]
    tseqs = [torch.tensor(s, requires_grad=True) for s in seqs]
    got = utils.rnn.pad_sequence(jseqs, batch_first, -1.5, padding_side)
    expected = torch.nn.utils.rnn.pad_sequence(tseqs, batch_first, -1.5, padding_side)
    _same(got, expected, rtol=0)
    assert got.is_contiguous()
    weights = np.random.default_rng(1).standard_normal(got.shape).astype(np.float32)
    (got * jt.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for js, ts in zip(jseqs, tseqs, strict=False):
        _same(js.grad, ts.grad, rtol=0)


def test_pad_sequence_dtypes_and_defaults_as_torch():
    ints = [np.arange(n, dtype=np.int64) for n in (2, 5)]
    # the result takes the first sequence's dtype; a float padding is cast to it
    for pad in (0.0, 1.7, -3):
        _same(utils.rnn.pad_sequence([jt.tensor(s) for s in ints], padding_value=pad),
              torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in ints], padding_value=pad))
    mixed = [np.ones((2, 3), np.float64), np.full((3, 3), 0.1, np.float32)]
    for order in (mixed, mixed[::-1]):
        _same(utils.rnn.pad_sequence([jt.tensor(s) for s in order]),
              torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in order]), rtol=0)
    # a tuple, a generator and a tensor (its rows) are iterables too
    seqs = _sequences([2, 3])
    _same(utils.rnn.pad_sequence(tuple(jt.tensor(s) for s in seqs), batch_first=True),
          torch.nn.utils.rnn.pad_sequence(tuple(torch.tensor(s) for s in seqs), True), rtol=0)
    _same(utils.rnn.pad_sequence(jt.tensor(s) for s in seqs),
          torch.nn.utils.rnn.pad_sequence(torch.tensor(s) for s in seqs), rtol=0)
    rows = np.arange(12.0).reshape(3, 4)
    _same(utils.rnn.pad_sequence(jt.tensor(rows)), torch.nn.utils.rnn.pad_sequence(
        torch.tensor(rows)), rtol=0)


def test_pad_sequence_errors_as_torch():
    pad, tpad = utils.rnn.pad_sequence, torch.nn.utils.rnn.pad_sequence
    _raises_as_torch(lambda: pad([]), lambda: tpad([]))
    _raises_as_torch(lambda: pad(5), lambda: tpad(5))
    seqs = _sequences([2, 3], (2,))
    _raises_as_torch(lambda: pad([jt.tensor(s) for s in seqs], padding_side="middle"),
                     lambda: tpad([torch.tensor(s) for s in seqs], padding_side="middle"))
    bad = [np.ones((2, 3)), np.ones((3, 4))]
    with pytest.raises(RuntimeError, match="must match"):  # torch's kind of shape error
        tpad([torch.tensor(s) for s in bad])
    with pytest.raises(RuntimeError):
        pad([jt.tensor(s) for s in bad])


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence_as_torch(batch_first):
    seqs = _sequences([3, 1, 4], (2,))
    lengths = np.array([3, 1, 4])
    jpadded = utils.rnn.pad_sequence([jt.tensor(s) for s in seqs], batch_first)
    tpadded = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first)
    before = values(jpadded).copy()
    got = utils.rnn.unpad_sequence(jpadded, jt.tensor(lengths), batch_first)
    expected = torch.nn.utils.rnn.unpad_sequence(tpadded, torch.tensor(lengths), batch_first)
    assert len(got) == len(expected) == 3
    for g, e, s in zip(got, expected, seqs, strict=False):
        _same(g, e, rtol=0)
        np.testing.assert_array_equal(values(g), s)
    np.testing.assert_array_equal(values(jpadded), before)  # the input is left as it was
    got[0][0, 0] = 99.0  # results are copies, not views of the padded tensor
    np.testing.assert_array_equal(values(jpadded), before)
    with pytest.raises(ValueError):  # a length per sequence, as torch's zip(strict=True)
        utils.rnn.unpad_sequence(jpadded, jt.tensor([3, 1]), batch_first)


@pytest.mark.parametrize("kind", ["conv", "conv_transpose", "linear", "linear_one_feature"])
def test_fusing_a_batch_norm_matches_torch_and_the_unfused_layers(kind):
    rng = np.random.default_rng(0)

    def build(lib):
        lib.manual_seed(0)
        layer = {"conv": lambda: lib.nn.Conv2d(3, 4, 3),
                 "conv_transpose": lambda: lib.nn.ConvTranspose2d(3, 4, 3, bias=False),
                 "linear": lambda: lib.nn.Linear(5, 4),
                 "linear_one_feature": lambda: lib.nn.Linear(5, 4)}[kind]()
        bn = (lib.nn.BatchNorm2d(4) if kind.startswith("conv") else
              lib.nn.BatchNorm1d(1 if kind == "linear_one_feature" else 4))
        return layer, bn

    mine, theirs = build(jt), build(torch)
    for m, t in zip(mine, theirs, strict=True):
        for (name, a), b in zip(m.state_dict().items(), t.state_dict().values(), strict=True):
            values = rng.standard_normal(a.shape) + (2 if "var" in name else 0)
            a.copy_(jt.tensor(np.abs(values) if "var" in name else values, dtype=a.dtype))
            b.copy_(torch.tensor(a.numpy()))
        m.eval()
        t.eval()
    x = rng.standard_normal((2, 3, 6, 6) if kind.startswith("conv") else (3, 5))
    x = x.astype(np.float32)
    if kind.startswith("conv"):
        transpose = kind == "conv_transpose"
        fused = utils.fuse_conv_bn_eval(*mine, transpose)
        expected = torch.nn.utils.fuse_conv_bn_eval(*theirs, transpose)
    else:
        if kind == "linear_one_feature":  # (torch needs a feature dim for a 1-feature norm)
            x = x[:, None]
        fused = utils.fuse_linear_bn_eval(*mine)
        expected = torch.nn.utils.fuse_linear_bn_eval(*theirs)
    assert isinstance(fused.weight, nn.Parameter) and fused.weight.requires_grad
    out = fused(jt.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), expected(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.detach().numpy(), mine[1](mine[0](jt.tensor(x))).detach()
                               .numpy(), rtol=1e-5, atol=1e-5)
    mine[0].train()
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        (utils.fuse_conv_bn_eval if kind.startswith("conv") else utils.fuse_linear_bn_eval)(
            *mine)


def test_skip_init_builds_the_module_and_checks_as_torch():
    m = utils.skip_init(nn.Linear, 3, 4, bias=False)
    assert isinstance(m, nn.Linear) and m.weight.shape == (4, 3) and m.bias is None
    for bad, message in ((nn.ReLU, "must support a 'device' arg"), (int, "Expected a Module")):
        with pytest.raises((RuntimeError, TypeError)):
            torch.nn.utils.skip_init(getattr(torch.nn, bad.__name__, int))
        with pytest.raises((RuntimeError, TypeError), match=message):
            utils.skip_init(bad)

"""float16 and bfloat16 on the CPU: stored in the narrow type, computed in float32 and rounded
once per kernel (kernels/cpu/narrow.py), against torch's CPU kernels for these dtypes: the
conversions bit for bit, elementwise ops to within one unit in the last place (torch's own
vectorised and scalar loops differ by that much), reductions, products, nn functions and
training steps to the narrow type's precision; promotion, in-place writes, autograd,
serialization, DLPack, and the same bits at any thread count."""
import io

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt

torch = pytest.importorskip("torch")

NARROW = ["float16", "bfloat16"]


def _pair(name, values):
    """(torch tensor, jitensor tensor) of dtype `name` from float32 `values`."""
    values = np.asarray(values, np.float32)
    return torch.tensor(values).to(getattr(torch, name)), \
        jt.tensor(values).to(getattr(jt, name))


def _bits(t):
    """Sign-magnitude bits of a narrow tensor as ordered integers (a step of 1 is one ulp)."""
    if isinstance(t, torch.Tensor):
        raw = t.detach().contiguous().view(torch.int16).numpy().view(np.uint16)
    else:
        raw = t.detach().contiguous().numpy().view(np.uint16)
    raw = raw.astype(np.int64)
    return np.where(raw & 0x8000, -(raw & 0x7FFF), raw)


def assert_ulps(got, want, ulps=1):
    """Same dtype, shape and NaNs; values within `ulps` units in the last place."""
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    g, w = got.float().numpy(), want.float().numpy()
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    keep = ~np.isnan(w)
    assert np.abs(_bits(got)[keep] - _bits(want)[keep]).max(initial=0) <= ulps


def assert_near(got, want, rtol=1e-2, atol=1e-2):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.float().numpy() if got.dtype.is_floating_point else
                               got.numpy(),
                               want.float().numpy() if want.dtype.is_floating_point else
                               want.numpy(), rtol=rtol, atol=atol)


SPECIAL = np.array([0.0, -0.0, 1.0, -2.5, 65504.0, 65520.0, 1e5, -1e5, 6.1e-5, 5.96e-8, 3e-8,
                    1e-40, 3.3895e38, 3.4e38, np.inf, -np.inf, np.nan, 1.00048828125,
                    1.0009765625, 1.00390625, 1.01171875, 0.1, 1 / 3], np.float32)


@pytest.mark.parametrize("name", NARROW)
def test_conversions_round_as_torch(name):
    rng = np.random.default_rng(0)
    values = np.concatenate([SPECIAL, rng.standard_normal(4000).astype(np.float32) *
                             np.float32(10.0) ** rng.integers(-8, 6, 4000)])
    want, got = _pair(name, values)
    assert got.dtype is getattr(jt, name)
    finite = ~np.isnan(values)
    np.testing.assert_array_equal(_bits(got)[finite], _bits(want)[finite])
    assert np.isnan(got.float().numpy()[~finite]).all()
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())  # widening: exact
    # float64 and int64 sources round through float32, as torch's conversions do
    doubles = rng.standard_normal(4000) * 3
    assert_ulps(jt.tensor(doubles).to(getattr(jt, name)),
                torch.tensor(doubles).to(getattr(torch, name)), ulps=0)
    assert_ulps(jt.tensor(doubles, dtype=getattr(jt, name)),
                torch.tensor(doubles, dtype=getattr(torch, name)), ulps=0)
    ints = rng.integers(-(1 << 40), 1 << 40, 4000)
    assert_ulps(jt.tensor(ints).to(getattr(jt, name)),
                torch.tensor(ints).to(getattr(torch, name)), ulps=0)
    back = getattr(jt, name)
    np.testing.assert_array_equal(got.to(jt.int32).numpy()[np.isfinite(values) &
                                                           (np.abs(values) < 1e9)],
                                  want.to(torch.int32).numpy()[np.isfinite(values) &
                                                               (np.abs(values) < 1e9)])
    assert jt.tensor([1.5], dtype=back).item() == 1.5


UNARY = ["abs", "neg", "exp", "expm1", "log1p", "tanh", "sigmoid", "sin", "cos", "erf",
         "floor", "ceil", "round", "trunc", "sign", "square", "reciprocal", "atan", "asinh",
         "exp2"]
POSITIVE = ["log", "log2", "log10", "sqrt", "rsqrt", "lgamma", "digamma"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "atan2", "hypot", "fmod",
          "remainder", "copysign", "pow"]


@pytest.mark.parametrize("name", NARROW)
@pytest.mark.parametrize("op", UNARY + POSITIVE)
def test_unary_ops_match_torch(name, op):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(1000).astype(np.float32) * 3
    if op in POSITIVE:
        x = np.abs(x) + 0.25
    want, got = _pair(name, x)
    assert_ulps(getattr(jt, op)(got), getattr(torch, op)(want))


@pytest.mark.parametrize("name", NARROW)
@pytest.mark.parametrize("op", BINARY)
def test_binary_ops_match_torch(name, op):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((2, 1000)).astype(np.float32) * 3
    if op == "pow":
        x = np.abs(x) + 0.1
    (tx, jx), (ty, jy) = _pair(name, x), _pair(name, y)
    assert_ulps(getattr(jt, op)(jx, jy), getattr(torch, op)(tx, ty))


@pytest.mark.parametrize("name", NARROW)
def test_numbers_round_as_torch_takes_them(name):
    """torch rounds a number operand to the narrow type for add, sub and pow, but mul and div
    read it in float32 (their CPU kernels' opmath): 0.1 differs in the two."""
    rng = np.random.default_rng(3)
    want, got = _pair(name, np.abs(rng.standard_normal(1000)) + 0.5)
    for f in (lambda x: x + 0.1, lambda x: x - 0.1, lambda x: 0.1 - x, lambda x: x * 0.1,
              lambda x: x / 0.1, lambda x: 0.1 * x, lambda x: x ** 1.1, lambda x: x // 0.1,
              lambda x: x.mul(0.3).add(0.7), lambda x: x.clamp(0.6, 1.1)):
        assert_ulps(f(got), f(want), ulps=0)
    # composed of ops that each round (torch's kernels round once)
    for f in (lambda x: x.lerp(x * 2, 0.3), lambda x: x.addcmul(x, x, value=0.1)):
        assert_ulps(f(got), f(want), ulps=1)


@pytest.mark.parametrize("name", NARROW)
@given(shapes=st.sampled_from([((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((5,), ()), ((1,), (6, 1)),
                               ((2, 1, 3), (2, 5, 1))]),
       op=st.sampled_from(["add", "sub", "mul", "div", "maximum"]),
       other=st.sampled_from(["same", "float32", "float64", "int64", "bool"]))
def test_broadcasting_and_promotion_match_torch(name, shapes, op, other):
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal(s).astype(np.float32) + 2 for s in shapes)
    (ta, ja) = _pair(name, a)
    if other == "same":
        tb, jb = _pair(name, b)
    else:
        tb = torch.tensor(b).to(getattr(torch, other if other != "bool" else "bool"))
        jb = jt.tensor(b).to(getattr(jt, other))
    try:
        want = getattr(torch, op)(ta, tb)
    except RuntimeError:  # (sub of a bool tensor)
        with pytest.raises(RuntimeError):
            getattr(jt, op)(ja, jb)
        return
    got = getattr(jt, op)(ja, jb)
    if want.dtype in (torch.float16, torch.bfloat16):
        assert_ulps(got, want)
    else:
        assert_near(got, want, rtol=1e-6, atol=0)


def test_promotion_table_matches_torch():
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
             "float32", "float64"]
    for a in names:
        for b in names:
            want = torch.promote_types(getattr(torch, a), getattr(torch, b))
            assert jt.promote_types(getattr(jt, a), getattr(jt, b)) is \
                getattr(jt, str(want).split(".")[-1])
    assert (jt.ones(2, dtype=jt.float16) + jt.ones(2, dtype=jt.bfloat16)).dtype is jt.float32
    assert (jt.ones(2, dtype=jt.bfloat16) + jt.ones((), dtype=jt.float32)).dtype is jt.bfloat16
    assert (jt.ones(2, dtype=jt.int64) * 0.5).dtype is jt.float32
    assert (jt.ones(2, dtype=jt.bfloat16) * 2).dtype is jt.bfloat16


REDUCTIONS = {
    "sum": lambda x: x.sum(), "sum_dim": lambda x: x.sum(1), "mean": lambda x: x.mean(0),
    "var": lambda x: x.var(1), "std": lambda x: x.std(), "prod": lambda x: (x / 4 + 1).prod(1),
    "amax": lambda x: x.amax(0), "min": lambda x: x.min(1).values, "argmax": lambda x: x.argmax(1),
    "cumsum": lambda x: x.cumsum(1), "logsumexp": lambda x: x.logsumexp(1),
    "softmax": lambda x: x.softmax(1), "log_softmax": lambda x: x.log_softmax(0),
    "norm": lambda x: x.norm(dim=1), "sort": lambda x: x.sort(1).values,
    "topk": lambda x: x.topk(3).values, "median": lambda x: x.median(1).values,
}


@pytest.mark.parametrize("name", NARROW)
@pytest.mark.parametrize("op", sorted(REDUCTIONS))
def test_reductions_match_torch(name, op):
    rng = np.random.default_rng(5)
    want, got = _pair(name, rng.standard_normal((16, 33)))
    assert_near(REDUCTIONS[op](got), REDUCTIONS[op](want), rtol=2e-2, atol=2e-2)


NN = {
    "matmul": lambda L, x, w: x @ w.T,
    "bmm": lambda L, x, w: x.reshape(2, 8, 8) @ w.reshape(1, 8, 8),
    "linear": lambda L, x, w: L.nn.functional.linear(x, w, w[0]),
    "conv2d": lambda L, x, w: L.nn.functional.conv2d(
        x.reshape(2, 2, 8, 4), w.reshape(-1)[:12].reshape(3, 2, 2, 1), padding=1),
    "conv_transpose2d": lambda L, x, w: L.nn.functional.conv_transpose2d(
        x.reshape(2, 2, 8, 4), w.reshape(-1)[:8].reshape(2, 2, 2, 1), stride=2),
    "layer_norm": lambda L, x, w: L.nn.functional.layer_norm(x, (8,), w[0], w[1]),
    "batch_norm": lambda L, x, w: L.nn.functional.batch_norm(x, None, None, w[0], w[1],
                                                             training=True),
    "group_norm": lambda L, x, w: L.nn.functional.group_norm(x.reshape(4, 4, 8), 2),
    "attention": lambda L, x, w: L.nn.functional.scaled_dot_product_attention(
        x.reshape(1, 2, 8, 8), w.expand(1, 2, 8, 8), x.reshape(1, 2, 8, 8), is_causal=True),
    "gelu": lambda L, x, w: L.nn.functional.gelu(x),
    "silu": lambda L, x, w: L.nn.functional.silu(x),
    "cross_entropy": lambda L, x, w: L.nn.functional.cross_entropy(x, L.arange(16) % 8),
    "mse_loss": lambda L, x, w: L.nn.functional.mse_loss(x, w.repeat(2, 1)),
    "max_pool2d": lambda L, x, w: L.nn.functional.max_pool2d(x.reshape(2, 2, 8, 4), 2),
    "avg_pool2d": lambda L, x, w: L.nn.functional.avg_pool2d(x.reshape(2, 2, 8, 4), 2),
    "interpolate": lambda L, x, w: L.nn.functional.interpolate(x.reshape(2, 2, 8, 4),
                                                               scale_factor=2, mode="bilinear"),
    "embedding": lambda L, x, w: L.nn.functional.embedding(L.tensor([[1, 3], [7, 0]]), w),
    "dropout_eval": lambda L, x, w: L.nn.functional.dropout(x, 0.5, training=False),
    "cat_index": lambda L, x, w: L.cat([x[::2], w[[1, 0]]]).flip(0).roll(1, 1),
}


@pytest.mark.parametrize("name", NARROW)
@pytest.mark.parametrize("op", sorted(NN))
def test_nn_functions_match_torch(name, op):
    rng = np.random.default_rng(6)
    (tx, jx), (tw, jw) = _pair(name, rng.standard_normal((16, 8))), \
        _pair(name, rng.standard_normal((8, 8)) / 2)
    assert_near(NN[op](jt, jx, jw), NN[op](torch, tx, tw), rtol=3e-2, atol=3e-2)


@pytest.mark.parametrize("name", NARROW)
def test_in_place_writes_reach_narrow_memory(name):
    dt = getattr(jt, name)
    base = jt.arange(12, dtype=jt.float32).to(dt).reshape(3, 4)
    alias = base.view(-1)
    base[:, ::2].mul_(0.5)  # a strided view, written through
    base[1].add_(base[0])  # reads another row of the same memory
    base.add_(base)  # reads and writes the same memory
    t = torch.arange(12, dtype=torch.float32).to(getattr(torch, name)).reshape(3, 4)
    t[:, ::2].mul_(0.5)
    t[1].add_(t[0])
    t.add_(t)
    assert_ulps(base, t, ulps=0)
    assert alias.data_ptr() == base.data_ptr() and alias[5].item() == base[1, 1].item()
    row = jt.ones(4, dtype=dt)
    wide = jt.zeros(3, 4, dtype=dt)
    wide += row.expand(3, 4)  # a broadcast (read-only) input stays as it was
    assert row.tolist() == [1.0] * 4 and wide.sum().item() == 12
    out = jt.empty(3, 4, dtype=dt)
    jt.mul(base, 2, out=out)
    assert_ulps(out, t * 2, ulps=0)


@pytest.mark.parametrize("name", NARROW)
def test_autograd_and_a_training_step_follow_torch(name):
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((8, 16)).astype(np.float32), rng.integers(0, 4, 8)
    w1, w2 = rng.standard_normal((2, 32, 16)).astype(np.float32) / 4
    results = []
    for lib in (torch, jt):
        dt = getattr(lib, name)
        m = lib.nn.Sequential(lib.nn.Linear(16, 32), lib.nn.GELU(), lib.nn.LayerNorm(32),
                              lib.nn.Linear(32, 4))
        with lib.no_grad():
            m[0].weight.copy_(lib.tensor(w1))
            m[3].weight.copy_(lib.tensor(w2[:4, :]).repeat(1, 2))
            for p in (m[0].bias, m[3].bias):
                p.fill_(0.1)
        m = m.to(dt)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        losses = []
        for _ in range(5):
            loss = lib.nn.functional.cross_entropy(m(lib.tensor(x).to(dt)), lib.tensor(y))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        grad = m[0].weight.grad
        assert str(grad.dtype).endswith(name) and str(loss.dtype).endswith(name)
        results.append((losses, grad.float().numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=3e-2)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=0.1, atol=3e-2)


@pytest.mark.parametrize("name", NARROW)
def test_same_bits_at_any_thread_count(name):
    dt = getattr(jt, name)
    jt.manual_seed(0)
    x, w = jt.randn(300, 700).to(dt), jt.randn(500, 700).to(dt)
    runs, threads = [], jt.get_num_threads()
    for n in (1, 2):
        jt.set_num_threads(n)
        jt.manual_seed(1)
        runs.append([t.float().numpy() for t in (x.sum(), x.sum(0), x @ w.T, (x * 1.5).exp(),
                                                   x.softmax(1), jt.randn(1 << 17, dtype=dt))])
    jt.set_num_threads(threads)
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", NARROW)
def test_creation_and_host_memory(name):
    dt = getattr(jt, name)
    for t in (jt.zeros(2, 3, dtype=dt), jt.ones(4, dtype=dt), jt.full((2,), 0.1, dtype=dt),
              jt.empty(3, dtype=dt), jt.arange(5, dtype=dt), jt.linspace(0, 1, 5, dtype=dt),
              jt.randn(3, dtype=dt), jt.rand(3, dtype=dt), jt.eye(3, dtype=dt),
              jt.zeros_like(jt.ones(2), dtype=dt), jt.nn.Linear(2, 2, dtype=dt).weight):
        assert t.dtype is dt and t.detach().numpy().dtype == dt.np
    assert jt.full((1,), 0.1, dtype=dt).item() == torch.full((1,), 0.1,
                                                             dtype=getattr(torch, name)).item()
    host = np.arange(4, dtype=dt.np)
    shared = jt.from_numpy(host)
    shared[0] = 7
    assert host[0] == 7 and shared.dtype is dt
    assert jt.as_tensor(host).data_ptr() == shared.data_ptr()
    assert jt.tensor([[1.5, 2.25]], dtype=dt).tolist() == [[1.5, 2.25]]
    assert "dtype=jitensor." + name in repr(jt.ones(2, dtype=dt))
    assert jt.finfo(dt).eps == torch.finfo(getattr(torch, name)).eps
    assert jt.finfo(dt).max == torch.finfo(getattr(torch, name)).max
    assert jt.finfo(dt).tiny == torch.finfo(getattr(torch, name)).tiny


@pytest.mark.parametrize("name", NARROW)
def test_save_load_with_torch(name, tmp_path):
    rng = np.random.default_rng(8)
    want, got = _pair(name, rng.standard_normal((3, 5)))
    jt.save({"w": got, "v": got[:, 1:]}, tmp_path / "j.pt")
    back = torch.load(tmp_path / "j.pt")
    assert_ulps(back["w"], want, ulps=0)
    assert_ulps(back["v"], want[:, 1:], ulps=0)
    torch.save({"w": want}, tmp_path / "t.pt")
    assert_ulps(jt.load(tmp_path / "t.pt")["w"], want, ulps=0)
    buf = io.BytesIO()
    jt.save(got, buf)
    buf.seek(0)
    assert_ulps(jt.load(buf), want, ulps=0)


def test_dlpack_shares_bfloat16_memory_with_torch():
    t = torch.randn(2, 3).bfloat16()
    j = jt.from_dlpack(t)
    assert j.dtype is jt.bfloat16 and j.tolist() == t.tolist()
    t[0, 0] = 5
    assert j[0, 0].item() == 5
    k = jt.randn(3, 4).bfloat16()[:, 1:]
    back = torch.from_dlpack(k)
    assert back.dtype is torch.bfloat16 and back.tolist() == k.tolist()
    assert back.stride() == k.stride()
    back[1, 1] = 3
    assert k[1, 1].item() == 3
    assert jt.from_dlpack(np.ones(2, np.float16)).dtype is jt.float16


def test_narrow_memory_never_reaches_a_kernel_as_addresses():
    """A kernel given narrow memory as raw addresses would read it as float32: refused."""
    from jitensor.kernels.cpu import kernels
    for dtype in (np.float16, ml_dtypes.bfloat16):
        with pytest.raises(TypeError, match="reads addresses"):
            kernels.context(np.ones(2, np.float32), 3, np.ones(2, dtype))
    assert kernels.context(np.ones(2, np.int16), 3).size == 3


@pytest.mark.cuda
def test_cuda_refuses_bfloat16_and_keeps_float16():
    for make in (lambda: jt.ones(2, dtype=jt.bfloat16, device="cuda"),
                 lambda: jt.ones(2, dtype=jt.bfloat16).cuda(),
                 lambda: jt.tensor([1.0], dtype=jt.bfloat16, device="cuda")):
        with pytest.raises(TypeError, match="bfloat16 tensors live on the CPU only"):
            make()
    half = jt.tensor([1.5, 2.0], dtype=jt.float16, device="cuda")
    assert (half.cpu() * 2).tolist() == [3.0, 4.0]


@pytest.mark.parametrize("name, near, far", [("float16", 1.0005, 1.003),
                                             ("bfloat16", 1.01, 1.05)])
def test_assert_close_takes_torchs_tolerances(name, near, far):
    for lib in (torch, jt):
        x = lib.tensor([1.0, 2.0, -3.0]).to(getattr(lib, name))
        lib.testing.assert_close(x * near, x)
        with pytest.raises(AssertionError, match="not close"):
            lib.testing.assert_close(x * far, x)


@pytest.mark.parametrize("name", NARROW)
def test_user_kernels_compute_narrow_tensors_in_float32(name):
    import math

    @jt.elementwise
    def gelu(x):
        return 0.5 * x * (1.0 + math.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))

    @jt.reduction(identity=0.0)
    def sum_of_squares(acc, x):
        return acc + x * x

    x = jt.randn(3, 1000).to(getattr(jt, name))
    assert_ulps(gelu(x), gelu(x.float()).to(x.dtype), ulps=0)
    assert_ulps(sum_of_squares(x, dim=1), sum_of_squares(x.float(), dim=1).to(x.dtype), ulps=0)


def test_adamw_and_gradient_clipping_on_bfloat16_parameters_follow_torch():
    """(torch's float16 AdamW turns eps = 1e-8 to zero and divides by it: not compared)"""
    rng = np.random.default_rng(9)
    w0, x = rng.standard_normal((16, 8)).astype(np.float32), \
        rng.standard_normal((32, 8)).astype(np.float32)
    found = []
    for lib in (torch, jt):
        w = lib.tensor(w0).to(lib.bfloat16).requires_grad_()
        opt = lib.optim.AdamW([w], lr=1e-2)
        for _ in range(3):
            opt.zero_grad()
            (lib.tensor(x).to(lib.bfloat16) @ w.T).pow(2).mean().backward()
            lib.nn.utils.clip_grad_norm_([w], 0.5)
            opt.step()
        assert w.dtype is lib.bfloat16 and opt.state[w]["exp_avg"].dtype is lib.bfloat16
        found.append(w.detach().float().numpy())
    np.testing.assert_allclose(found[1], found[0], rtol=2e-2, atol=2e-2)

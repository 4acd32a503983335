"""Elementwise fusion under jitensor.compile (jitensor/fusion.py): a fused chain gives eager's
values bit for bit, its gradients agree with eager's and torch's, each chain is one kernel,
numbers are arguments (no recompiles), and pending expressions never read a tensor after it
was written."""
import numpy as np
import pytest
import torch
from conftest import run_python
from custom_ops_module import chain
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt
from jitensor import fusion

# (name, function of (lib, a, b)): each keeps values in a range where every op is defined
OPS = [
    ("add", lambda L, a, b: a + b), ("sub", lambda L, a, b: a - 0.5 * b),
    ("mul", lambda L, a, b: a * b), ("div", lambda L, a, b: a / (b * b + 1.0)),
    ("rsub", lambda L, a, b: 2.0 - a), ("rdiv", lambda L, a, b: 1.0 / (a * a + 1.5)),
    ("neg", lambda L, a, b: -a), ("exp", lambda L, a, b: L.exp(a * 0.25)),
    ("log", lambda L, a, b: L.log(a * a + 0.5)), ("log1p", lambda L, a, b: L.log1p(a * a)),
    ("expm1", lambda L, a, b: L.expm1(a * 0.5)), ("sqrt", lambda L, a, b: L.sqrt(a * a + 1)),
    ("rsqrt", lambda L, a, b: L.rsqrt(a * a + 1)), ("tanh", lambda L, a, b: L.tanh(a)),
    ("sigmoid", lambda L, a, b: L.sigmoid(a)), ("relu", lambda L, a, b: L.relu(a - 0.1)),
    ("square", lambda L, a, b: L.square(a)), ("pow3", lambda L, a, b: a ** 3),
    ("pow1.5", lambda L, a, b: (a * a + 1.0) ** 1.5), ("abs", lambda L, a, b: L.abs(a - 0.1)),
    ("erf", lambda L, a, b: L.erf(a)), ("recip", lambda L, a, b: L.reciprocal(a * a + 1.0)),
    ("gelu", lambda L, a, b: L.nn.functional.gelu(a)),
    ("gelu_tanh", lambda L, a, b: L.nn.functional.gelu(a, approximate="tanh")),
    ("silu", lambda L, a, b: L.nn.functional.silu(a)),
    ("add_alpha", lambda L, a, b: L.add(a, b, alpha=0.75)),
    ("maximum", lambda L, a, b: L.maximum(a, b * 0.5)),
    ("minimum", lambda L, a, b: L.minimum(a, b - 0.25)),
    ("clamp", lambda L, a, b: L.clamp(a, -0.5, 0.7)),
    ("clamp_min", lambda L, a, b: a.clamp(min=0.1)),
    ("clamp_max", lambda L, a, b: L.clamp(a, max=0.3)),
    ("where", lambda L, a, b: L.where(a > 0, a, b * 0.5)),
    ("where_number", lambda L, a, b: (a * 2).where(b > 0.2, -1.5)),
]


def _program(steps):
    """A function of (lib, x, y, z) applying `steps` (op index, operand indices) to a pool."""
    def run(lib, *inputs):
        pool = list(inputs)
        for op, i, j in steps:
            pool.append(OPS[op][1](lib, pool[i % len(pool)], pool[j % len(pool)]))
        return pool[-1] + pool[-2] * 0.5
    return run


_SHAPES = st.sampled_from([((5,), (5,), (5,)), ((3, 4), (4,), (3, 1)), ((2, 3, 4), (1, 4),
                                                                       (2, 1, 1)), ((), (6,), ())])
_STEPS = st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.integers(0, 9),
                            st.integers(0, 9)), min_size=1, max_size=8)


@settings(max_examples=12, deadline=None)
@given(_STEPS, _SHAPES, st.sampled_from(["float32", "float64"]))
def test_fused_values_are_eager_values_bit_for_bit(steps, shapes, dtype):
    program = _program(steps)
    rng = np.random.default_rng(len(steps))
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    eager = program(jt, *(jt.tensor(a) for a in arrays))
    fused = jt.compile(program)(jt, *(jt.tensor(a) for a in arrays))
    assert type(fused) is jt.Tensor and fused.dtype == eager.dtype == getattr(jt, dtype)
    assert fused.shape == eager.shape
    np.testing.assert_array_equal(fused.numpy(), eager.numpy())


@settings(max_examples=6, deadline=None)
@given(_STEPS, _SHAPES)
def test_fused_gradients_match_eager_and_torch(steps, shapes):
    program = _program(steps)
    rng = np.random.default_rng(len(steps) + 1)
    arrays = [rng.standard_normal(s) for s in shapes]  # float64: tight comparisons

    def grads(fn, lib, make):
        inputs = [make(a).requires_grad_() for a in arrays]
        out = fn(lib, *inputs)
        out.backward(make(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape))))
        return [np.zeros(a.shape) if t.grad is None else t.grad.numpy() for t, a
                in zip(inputs, arrays, strict=True)]
    fused = grads(jt.compile(program), jt, jt.tensor)
    for reference in (grads(program, jt, jt.tensor), grads(program, torch, torch.tensor)):
        for f, r in zip(fused, reference, strict=True):
            assert f.shape == r.shape
            np.testing.assert_allclose(f, r, rtol=1e-10, atol=1e-12)


def test_same_bits_at_one_thread_and_all_of_them():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((300, 400), np.float32), rng.standard_normal(400, np.float32)
    fused = jt.compile(chain)

    def run():
        xs, ys = jt.tensor(x, requires_grad=True), jt.tensor(y, requires_grad=True)
        out = fused(xs, ys)  # 120,000 elements: the parallel loop
        out.backward(jt.ones_like(out))
        return out.detach().numpy(), xs.grad.numpy(), ys.grad.numpy()
    threads = jt.get_num_threads()
    try:
        jt.set_num_threads(1)
        serial = run()
    finally:
        jt.set_num_threads(threads)
    for one, many in zip(serial, run(), strict=True):
        np.testing.assert_array_equal(one, many)


def test_a_chain_is_one_kernel_and_numbers_are_arguments():
    @jt.compile
    def gelu(x, c):
        return 0.5 * x * (1.0 + jt.tanh(c * (x + 0.044715 * x * x * x)))
    x = jt.randn(4, 8)
    before = dict(fusion.stats)
    y = gelu(x, 0.7978845608)
    assert fusion.stats["materialized"] - before["materialized"] == 1
    kernels = fusion.stats["kernels"]
    z = gelu(x, 0.5)  # another number: the same kernel
    assert fusion.stats["kernels"] == kernels
    np.testing.assert_array_equal(
        y.numpy(), (0.5 * x * (1.0 + jt.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))).numpy())
    assert not np.array_equal(y.numpy(), z.numpy())
    op = next(op for op in fusion._OPS.values() if op._map._dtypes)
    assert op._map.spec.key() is not None  # a disk-cache key: a second process loads it


def test_what_cannot_fuse_runs_eagerly_with_eager_results():
    @jt.compile
    def f(i, x, z):
        return i * 3 + 1, x.exp() + i, (z * 2).sum(), x.exp() > 1, z * 1j
    i, x, z = jt.arange(4), jt.randn(4), jt.randn(4, dtype=jt.float64)
    for got, want in zip(f(i, x, z), (i * 3 + 1, x.exp() + i, (z * 2).sum(), x.exp() > 1,
                                      z * 1j), strict=True):
        assert type(got) is jt.Tensor and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_an_op_alone_runs_its_eager_call_with_its_arguments():
    x = jt.randn(6, requires_grad=True)
    F = jt.nn.functional
    for fn in (lambda t: F.gelu(t, approximate="tanh"), lambda t: t ** 2, lambda t: t ** 2.5,
               lambda t: jt.sub(t, 1.5, alpha=2), lambda t: t / 3, lambda t: t.clamp(max=0.2)):
        fused, eager = jt.compile(fn)(x), fn(x)
        assert type(fused.grad_fn) is type(eager.grad_fn)  # the eager node, not a fused one
        np.testing.assert_array_equal(fused.detach().numpy(), eager.detach().numpy())


def test_a_call_eager_refuses_is_refused_the_same_way():
    x = jt.randn(4)
    f = jt.compile(lambda t, **kw: jt.clamp(t * 2, 0.1, **kw))
    with pytest.raises(TypeError):
        f(x, min=0.2)
    with pytest.raises(RuntimeError, match="At least one"):
        jt.compile(lambda t: jt.clamp(t * 2))(x)
    with pytest.raises(RuntimeError):
        jt.compile(lambda t: t * 2 + jt.ones(3))(x)


def test_lazy_tensors_know_their_shape_and_materialize_on_any_other_use():
    seen = {}

    @jt.compile
    def f(x):
        y = (x * 2).exp()
        seen["pending"] = type(y) is fusion.LazyTensor
        seen["shape"] = (y.shape, y.size(-1), y.dim(), y.ndim, y.numel(), y.dtype, y.device)
        seen["still"] = type(y) is fusion.LazyTensor
        return (y @ x.T).sum() if y.requires_grad else y.sum()
    x = jt.randn(3, 4, requires_grad=True)
    f(x).backward()
    assert seen == {"pending": True, "still": True,
                    "shape": ((3, 4), 4, 2, 2, 12, jt.float32, jt.device("cpu"))}
    ref = x.detach().clone().requires_grad_()
    ((ref * 2).exp() @ ref.T).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ref.grad.numpy(), rtol=1e-6)


def test_no_grad_and_grad_mode_are_kept():
    x = jt.randn(5, requires_grad=True)
    f = jt.compile(lambda x: (x * 3).tanh())
    with jt.no_grad():
        assert not f(x).requires_grad
    y = f(x)
    assert y.requires_grad and type(y.grad_fn).__name__ == "FusedBackward0"


def test_writes_never_reach_a_pending_expression():
    a = jt.tensor([10.0, 20.0])

    def f(x):
        y = x * 2.0
        x.add_(1)          # a tensor method
        z = x * 2.0
        jt.mul(a, 3.0, out=x)   # out=
        w = x * 2.0
        x[0] = 5.0         # indexing
        return y, z, w
    for got, want in zip(jt.compile(f)(jt.tensor([1.0, 2.0])), f(jt.tensor([1.0, 2.0])),
                         strict=True):
        assert got.tolist() == want.tolist()
    assert [t.tolist() for t in f(jt.tensor([1.0, 2.0]))] == [[2, 4], [4, 6], [60, 120]]


def test_a_write_by_a_kernel_makes_materializing_raise():
    from jitensor.autograd.versions import bump
    x = jt.ones(3)
    with fusion.region():
        y = x * 2.0
        bump(x._data)  # as an optimizer's kernel does after writing a parameter
        with pytest.raises(RuntimeError, match="modified in place"):
            y.tolist()
        fusion._region.made = []


def test_compiled_modules_and_disable():
    jt.manual_seed(0)
    model = jt.nn.Sequential(jt.nn.Linear(6, 8), jt.nn.GELU(approximate="tanh"),
                             jt.nn.Linear(8, 1), jt.nn.Sigmoid())
    x = jt.randn(4, 6)
    eager = model(x)
    eager.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    fused = jt.compile(model)(x)
    fused.sum().backward()
    np.testing.assert_array_equal(fused.detach().numpy(), eager.detach().numpy())
    for p, g in zip(model.parameters(), grads, strict=True):
        np.testing.assert_allclose(p.grad.numpy(), g.numpy(), rtol=1e-5, atol=1e-7)

    @jt.compiler.disable
    def eager_part(t):
        r = t * 2
        return type(r) is jt.Tensor
    assert jt.compile(lambda t: eager_part(t.exp()))(x)
    assert type(jt.compile(lambda t: t * 2, backend="eager")(x)) is jt.Tensor


@pytest.mark.parametrize("name", ["vae_step", "cnn_step", "dcgan_step", "char_mlp_step",
                                  "lstm_lm_step", "gpt_step"])
def test_training_steps_under_compile_match_eager(name):
    """The benchmark's training steps (model, loss, backward, optimizer), compiled whole: the
    second step's loss depends on the first step's gradients."""
    from jitensor.bench import autograd, compile_report
    make = getattr(autograd, name, None) or getattr(compile_report, name)
    eager = make(jt)  # (each builds its model from seed 0 and samples as it steps)
    losses = [eager().item() for _ in range(2)]
    fused = jt.compile(make(jt))
    np.testing.assert_allclose([fused().item() for _ in range(2)], losses, rtol=1e-6)


_CACHE_CHECK = """
import jitensor as jt
from jitensor import fusion
from jitensor.kernels.cpu import custom
f = jt.compile(lambda x, y: (x * y + 1.0).tanh() * 0.5)
x = jt.randn(8, requires_grad=True)
f(x, jt.randn(8)).sum().backward()
(op,) = fusion._OPS.values()
mods = [custom.kernels(s) for s in (op._map.spec, op._partial(0).spec)]
kernels = [getattr(m, k) for m in mods for k in ("result", "flat", "nd") if hasattr(m, k)]
print(sum(sum(k.stats.cache_hits.values()) for k in kernels),
      sum(sum(k.stats.cache_misses.values()) for k in kernels))
"""


def test_a_second_process_loads_fused_kernels_from_disk(tmp_path):
    env = {"JITENSOR_KERNEL_DIR": str(tmp_path)}
    hits, misses = map(int, run_python(_CACHE_CHECK, env).split())
    assert misses > 0
    hits, misses = map(int, run_python(_CACHE_CHECK, env).split())
    assert misses == 0 and hits >= 3
    assert any(p.name.startswith("jitensor_fusion_fused") for p in tmp_path.glob("*.py"))


def test_explain_reports_the_fused_expressions_and_the_dump_shows_their_source(
        monkeypatch, capsys):
    import jitensor._dynamo as dynamo
    monkeypatch.setenv("JITENSOR_COMPILE_DUMP", "1")

    def f(x, w):
        h = (x @ w).erf() * 2 + 1
        return h.expm1().sum() + x.exp().mean()
    report = dynamo.explain(f)(jt.randn(4, 5), jt.randn(5, 3))
    assert report.ops_per_graph == [("erf", "mul", "add", "expm1"), ("exp",)]
    assert report.graph_count == 2 and report.graph_break_count == 0 and report.op_count == 5
    assert report.kernels_generated == 1 and report.compile_seconds > 0
    assert "Ops 1: erf, mul, add, expm1" in str(report)
    source = capsys.readouterr().err
    assert "def fused(x0, c0, c1, c2):" in source and "libm.erf(x0)" in source

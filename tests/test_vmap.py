"""vmap's batching rules (jitensor/batching.py) against torch.vmap: each case runs once on the
whole batch (no per-element run, checked) and gives torch's values, shapes and dtypes; the
cases outside the rules fall back to running per element and still agree."""
import contextlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt
import jitensor.func as jfunc
from jitensor import batching

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(35)


@contextlib.contextmanager
def spying():
    """What the jitensor runs do: `fell_back` counts whole functions run per element,
    `per_element` names the ops run per element within a batched run."""
    seen = {"fell_back": 0, "per_element": []}
    run, element = jfunc._batched_run, batching._per_element

    def batched_run(*args):
        result = run(*args)
        seen["fell_back"] += result is None
        return result

    def per_element(call, name, *args):
        seen["per_element"].append(name)
        return element(call, name, *args)
    jfunc._batched_run, batching._per_element = batched_run, per_element
    try:
        yield seen
    finally:
        jfunc._batched_run, batching._per_element = run, element


@pytest.fixture
def spy():
    with spying() as seen:
        yield seen


def _same(mine, theirs, rtol=1e-9, atol=1e-12):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, jt.Tensor), type(mine)
        assert tuple(mine.shape) == tuple(theirs.shape)
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=rtol,
                                   atol=atol)
    elif isinstance(theirs, dict):
        for k in theirs:
            _same(mine[k], theirs[k], rtol, atol)
    elif isinstance(theirs, (tuple, list)):
        assert len(mine) == len(theirs)
        for m, t in zip(mine, theirs, strict=True):
            _same(m, t, rtol, atol)
    else:
        assert mine == theirs


def check(spy, fn, arrays, in_dims=0, out_dims=0, rtol=1e-9, atol=1e-12, batched=True):
    """vmap(fn(lib, ...)) on `arrays` (NumPy; others passed as they are) agrees with torch's;
    with `batched`, jitensor ran it once on the batch."""
    def run(lib):
        args = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
        return lib.func.vmap(lambda *xs: fn(lib, *xs), in_dims=in_dims, out_dims=out_dims)(*args)
    before = spy["fell_back"], len(spy["per_element"])
    _same(run(jt), run(torch), rtol, atol)
    if batched:
        assert (spy["fell_back"], len(spy["per_element"])) == before, spy


def _r(*shape):
    return RNG.standard_normal(shape)


UNARY = ["sin", "exp", "tanh", "sigmoid", "abs", "neg", "relu", "floor", "sqrt", "erf"]


@pytest.mark.parametrize("name", UNARY)
def test_elementwise(spy, name):
    check(spy, lambda lib, a: getattr(lib, name)(a.abs() + 0.1), [_r(4, 3)])


@given(st.lists(st.integers(1, 3), min_size=0, max_size=3),
       st.lists(st.integers(1, 3), min_size=0, max_size=3), st.booleans(), st.booleans())
def test_broadcasting_binary_ops(a_shape, b_shape, a_mapped, b_mapped):
    """Operands of any ranks, mapped or not, broadcast per element as torch's."""
    try:
        np.broadcast_shapes(tuple(a_shape), tuple(b_shape))
    except ValueError:
        return
    if not (a_mapped or b_mapped):
        a_mapped = True
    a = _r(*(([3] if a_mapped else []) + a_shape))
    b = _r(*(([3] if b_mapped else []) + b_shape))
    dims = (0 if a_mapped else None, 0 if b_mapped else None)
    with spying() as spy:  # (hypothesis runs a function-scoped fixture once for all examples)
        for name in ("add", "mul", "maximum", "atan2"):
            check(spy, lambda lib, x, y, n=name: getattr(lib, n)(x, y), [a, b], in_dims=dims)
        check(spy, lambda lib, x, y: lib.where(x > 0, x, y) - x / (y.abs() + 1), [a, b],
              in_dims=dims)


def test_operators_scalars_and_in_dims(spy):
    check(spy, lambda lib, a, b: (a + 1) * b - 2 / (b.abs() + 1) + a ** 2 > b, [_r(3, 4), _r(3)],
          in_dims=(1, None))
    check(spy, lambda lib, a, b: a.clamp(-0.5, 0.5) + a.masked_fill(b > 0, 3.0), [_r(2, 5),
                                                                               _r(2, 5)])
    check(spy, lambda lib, a: lib.lerp(a, a * 2, 0.25).type_as(a), [_r(3, 2)], out_dims=1)


REDUCTIONS = [
    lambda lib, a: a.sum(), lambda lib, a: a.sum(1), lambda lib, a: a.sum((0, -1), keepdim=True),
    lambda lib, a: a.mean(-1), lambda lib, a: a.prod(0), lambda lib, a: a.amax(1),
    lambda lib, a: a.max(), lambda lib, a: a.max(1), lambda lib, a: a.min(0, keepdim=True),
    lambda lib, a: a.argmax(1), lambda lib, a: a.var(1), lambda lib, a: a.std(),
    lambda lib, a: a.logsumexp(0), lambda lib, a: a.softmax(-1), lambda lib, a: a.log_softmax(0),
    lambda lib, a: a.cumsum(1), lambda lib, a: a.sort(1), lambda lib, a: a.topk(2),
    lambda lib, a: a.norm(dim=1), lambda lib, a: (a > 0).all(1), lambda lib, a: (a > 0).any(),
]


@pytest.mark.parametrize("fn", REDUCTIONS, ids=[str(i) for i in range(len(REDUCTIONS))])
def test_reductions(spy, fn):
    check(spy, fn, [_r(5, 3, 4)])
    check(spy, fn, [_r(3, 5, 4)], in_dims=1)


SHAPES = [
    lambda lib, a: a.reshape(4, 3), lambda lib, a: a.view(-1), lambda lib, a: a.t(),
    lambda lib, a: a.T, lambda lib, a: a.mT, lambda lib, a: a.permute(1, 0),
    lambda lib, a: a.transpose(0, 1), lambda lib, a: a.unsqueeze(-1), lambda lib, a: a.flatten(),
    lambda lib, a: a[None, 1:, ::2], lambda lib, a: a[..., 0], lambda lib, a: a[1],
    lambda lib, a: a.expand(2, 3, 4), lambda lib, a: a.repeat(2, 1), lambda lib, a: a.flip(0),
    lambda lib, a: a.split(2, 1), lambda lib, a: a.unbind(1), lambda lib, a: a.narrow(1, 1, 2),
    lambda lib, a: a.movedim(0, 1), lambda lib, a: a.diagonal(), lambda lib, a: a.squeeze(),
    lambda lib, a: a.unsqueeze(0).squeeze(0), lambda lib, a: lib.cat([a, a * 2], 1),
    lambda lib, a: lib.stack([a, a], -1), lambda lib, a: a.index_select(1, lib.tensor([3, 0])),
    lambda lib, a: a.gather(1, lib.tensor([[0], [2], [1]])), lambda lib, a: a.view_as(a.t()),
    lambda lib, a: a.chunk(2, 1), lambda lib, a: a.clone().contiguous().float(),
    lambda lib, a: a[lib.tensor([2, 0, 2])], lambda lib, a: a[lib.tensor([[1], [0]])],
]


def test_tensor_indices(spy):
    index = RNG.integers(0, 3, (4, 2))
    check(spy, lambda lib, a, i: a[i], [_r(4, 3, 5), index])  # both mapped
    check(spy, lambda lib, a, i: a[i] * 2, [_r(3, 5), index], in_dims=(None, 0))


@pytest.mark.parametrize("fn", SHAPES, ids=[str(i) for i in range(len(SHAPES))])
def test_shapes_and_indexing(spy, fn):
    check(spy, fn, [_r(2, 3, 4)])


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)),
                                    ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4))])
@pytest.mark.parametrize("dims", [(0, 0), (0, None), (None, 0)])
def test_matmul_every_rank(spy, shapes, dims):
    a, b = (_r(*(([3] if d is not None else []) + list(s))) for s, d in zip(shapes, dims,
                                                                             strict=True))
    check(spy, lambda lib, x, y: x @ y, [a, b], in_dims=dims)
    check(spy, lambda lib, x, y: lib.matmul(x, y), [a, b], in_dims=dims)


def test_products(spy):
    check(spy, lambda lib, x, y: lib.dot(x, y) + lib.outer(x, y).sum(), [_r(4, 3), _r(4, 3)])
    check(spy, lambda lib, x, y: lib.mm(x, y) + lib.bmm(x[None], y[None])[0], [_r(2, 3, 4),
                                                                              _r(4, 5)],
          in_dims=(0, None))
    check(spy, lambda lib, x, y: lib.mv(x, y), [_r(2, 3, 4), _r(2, 4)])


def test_einsum(spy):
    check(spy, lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [_r(3, 2, 4), _r(3, 4, 5)])
    check(spy, lambda lib, a, b: lib.einsum("...ij,jk->...ki", a, b), [_r(3, 6, 2, 4), _r(4, 5)],
          in_dims=(0, None))
    check(spy, lambda lib, a, b: lib.einsum("i,i->", a, b), [_r(3), _r(4, 3)], in_dims=(None, 0))


def test_nn_functions(spy):
    def F(lib):
        return lib.nn.functional
    check(spy, lambda lib, x, w, b: F(lib).linear(x, w, b), [_r(4, 2, 3), _r(5, 3), _r(5)],
          in_dims=(0, None, None))
    check(spy, lambda lib, x, w, b: F(lib).linear(x, w, b), [_r(4, 2, 3), _r(4, 5, 3), _r(4, 5)])
    check(spy, lambda lib, x, w: F(lib).conv2d(x, w, padding=1), [_r(3, 2, 2, 5, 5),
                                                                 _r(4, 2, 3, 3)],
          in_dims=(0, None), rtol=1e-7)
    check(spy, lambda lib, x: F(lib).max_pool2d(x, 2) + F(lib).avg_pool2d(x, 2), [_r(3, 2, 4, 4)])
    stats = [np.linspace(-1, 1, 2), np.linspace(1, 2, 2)]  # (running mean and variance: eval)
    check(spy, lambda lib, x, m, v: F(lib).batch_norm(x, m, v), [_r(3, 5, 2, 4), *stats],
          in_dims=(0, None, None), rtol=1e-7)
    # inputs with and without a batch dim of their own, per spatial rank
    check(spy, lambda lib, x, w: F(lib).conv1d(x, w), [_r(3, 2, 6), _r(4, 2, 3)],
          in_dims=(0, None), rtol=1e-7)
    check(spy, lambda lib, x, w: F(lib).conv3d(x, w), [_r(2, 2, 4, 4, 4), _r(3, 2, 2, 2, 2)],
          in_dims=(0, None), rtol=1e-7)
    check(spy, lambda lib, x: F(lib).max_pool1d(x, 2) + F(lib).adaptive_avg_pool1d(x, 3),
          [_r(2, 5, 2, 6)])
    check(spy, lambda lib, x, y: lib.max(x, y) - lib.min(x, y.t()), [_r(3, 2, 2), _r(2, 2)],
          in_dims=(0, None))
    check(spy, lambda lib, x: F(lib).layer_norm(x, (4,)) + F(lib).gelu(x) + F(lib).silu(x),
          [_r(3, 2, 4)], rtol=1e-7)
    check(spy, lambda lib, x, t: F(lib).cross_entropy(x, t), [_r(3, 5, 4),
                                                             RNG.integers(0, 4, (3, 5))])
    check(spy, lambda lib, x, t: F(lib).cross_entropy(x, t, reduction="sum") +
          F(lib).nll_loss(x.log_softmax(-1), t, ignore_index=2), [_r(3, 5, 4),
                                                                  RNG.integers(0, 4, (3, 5))])
    check(spy, lambda lib, x, t: F(lib).cross_entropy(x, t), [_r(3, 4), RNG.integers(0, 4, 3)])
    check(spy, lambda lib, x, y: F(lib).mse_loss(x, y) + F(lib).l1_loss(x, y, reduction="sum"),
          [_r(3, 2, 4), _r(3, 2, 4)])
    check(spy, lambda lib, i, w: F(lib).embedding(i, w), [RNG.integers(0, 6, (3, 2)), _r(6, 4)],
          in_dims=(0, None))


def test_per_sample_gradients_and_ensembles_run_batched(spy):
    data, targets = _r(6, 5), RNG.integers(0, 3, 6)

    def case(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.Tanh(), lib.nn.Linear(4, 3))
        model.double()
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(p.shape) + i))
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(params, x, t):
            out = lib.func.functional_call(model, params, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, t.unsqueeze(0))
        grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            params, lib.tensor(data), lib.tensor(targets))
        stacked = {k: lib.stack([v, v * 2]) for k, v in params.items()}
        ensemble = lib.func.vmap(lambda p, x: lib.func.functional_call(model, p, (x,)),
                                 in_dims=(0, None))(stacked, lib.tensor(data))
        return grads, ensemble
    _same(case(jt), case(torch), rtol=1e-7, atol=1e-10)
    assert spy == {"fell_back": 0, "per_element": []}


def test_transforms_inside_and_nested(spy):
    x, y = _r(4, 3), _r(4, 3)

    def case(lib):
        bx, by = lib.tensor(x), lib.tensor(y)
        vm = lib.func.vmap
        return (vm(lib.func.jacrev(lambda a: a.sin() * a.sum()))(bx),
                vm(lib.func.hessian(lambda a: a.exp().sum()))(bx),
                vm(vm(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))(bx, by),
                vm(lambda a, v: lib.func.jvp(lambda u: u.tanh(), (a,), (v,))[1])(bx, by))
    _same(case(jt), case(torch))
    assert spy["fell_back"] == 0 and "make_dual" not in spy["per_element"]


def test_what_the_rules_cannot_do_runs_per_element(spy):
    """Python values read from an element, random draws, and ops without a rule: the same
    results as torch's (which refuses some of them) or as the per-element loop."""
    bx = _r(4, 3)
    loop = [float(np.sin(r).sum()) if r[0] > 0 else 0.0 for r in bx]
    got = jt.func.vmap(lambda a: a.sin().sum() if a[0].item() > 0 else a.sum() * 0)(
        jt.tensor(bx))
    np.testing.assert_allclose(got.numpy(), loop)
    assert spy["fell_back"] == 1
    check(spy, lambda lib, a: lib.kron(a, a), [_r(3, 2)], batched=False)  # (no rule: per element)
    assert spy["per_element"][-1] == "kron" and spy["fell_back"] == 1
    def reads(a):
        return a * a[0].item()
    for _ in range(2):  # (the second call runs per element from the start)
        jt.func.vmap(reads)(jt.tensor(bx))
    assert spy["fell_back"] == 3
    different = jt.func.vmap(lambda a: jt.rand(()) + a.sum() * 0, randomness="different")(
        jt.tensor(bx))
    assert len(set(different.tolist())) == 4 and spy["fell_back"] == 3  # (batched: a draw each)
    same = jt.func.vmap(lambda a: jt.rand(()) + a.sum() * 0, randomness="same")(jt.tensor(bx))
    assert len(set(same.tolist())) == 1
    with pytest.raises(RuntimeError, match="randomness error mode"):
        jt.func.vmap(lambda a: a + jt.randn(3))(jt.tensor(bx))


@pytest.mark.cuda
def test_cuda_per_sample_gradients_equal_the_cpu_ones(spy):
    x, w = _r(3, 4).astype(np.float32), _r(4).astype(np.float32)
    got = []
    for device in ("cpu", "cuda"):
        grads = jt.func.vmap(jt.func.grad(lambda w, a: (a * w).tanh().sum()), in_dims=(None, 0))
        got.append(grads(jt.tensor(w, device=device), jt.tensor(x, device=device)).cpu().numpy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-5, atol=1e-6)
    assert spy["fell_back"] == 0


def test_random_draws_differ_per_element_in_the_batched_run(spy):
    """randomness="different": dropout of a batched tensor and draws without one (made once per
    element) run batched, each element with its own draws; a draw the batch cannot see (a
    plain tensor's method) runs per element."""
    x = jt.ones(6, 40)
    F = jt.nn.functional
    masks = jt.func.vmap(lambda a: F.dropout(a, 0.5) + jt.randn(3).sum() * 0 +
                         jt.randint(0, 5, ()) * 0, randomness="different")(x)
    assert spy["fell_back"] == 0
    assert len({tuple(m) for m in masks.tolist()}) == 6  # (each element its own mask)
    assert set(masks.flatten().tolist()) <= {0.0, 2.0}
    noise = jt.zeros(3)
    jt.func.vmap(lambda a: a + noise.uniform_(), randomness="different")(x[:, :3])
    assert spy["fell_back"] == 1
    with pytest.raises(RuntimeError, match="randomness error mode"):
        jt.func.vmap(lambda a: F.dropout(a, 0.5))(x)


def test_in_place_ops_and_unmapped_outputs(spy):
    x, y = _r(4, 3), _r(3)

    def case(lib):
        bx = lib.tensor(x)
        lib.func.vmap(lambda a: a.mul_(2).add_(1))(bx)
        return bx, lib.func.vmap(lambda a, b: (a * 2, b + 1), in_dims=(0, None),
                                 out_dims=(0, None))(bx, lib.tensor(y))
    _same(case(jt), case(torch))
    assert spy["fell_back"] == 0


def test_chunk_size_splits_the_batch(spy, monkeypatch):
    sizes = []
    run = jfunc._batched_run

    def seen(func, out_dims, size, *rest):
        sizes.append(size)
        return run(func, out_dims, size, *rest)
    monkeypatch.setattr(jfunc, "_batched_run", seen)

    x, y = _r(5, 3), _r(3, 2)

    def case(lib):
        bx, w = lib.tensor(x), lib.tensor(y)
        mapped = lib.func.vmap(lambda a: a @ w, out_dims=1, chunk_size=2)(bx)
        return mapped, lib.func.jacrev(lambda v: (v @ w).tanh(), chunk_size=1)(bx[0])
    _same(case(jt), case(torch))
    assert sizes == [2, 2, 1, 1, 1]
    # an unmapped output comes from the first chunk (torch 2.13 fails to concatenate it)
    w = jt.tensor(y)
    pair = jt.func.vmap(lambda a: (a @ w, w), out_dims=(1, None), chunk_size=2)(jt.tensor(x))
    assert pair[1] is w or bool((pair[1] == w).all())


def test_a_function_taken_before_the_first_vmap_dispatches(spy):
    dot = jt.dot  # (whatever jitensor.dot is now)
    got = jt.func.vmap(dot)(jt.tensor(_r(3, 4)), jt.tensor(_r(3, 4)))
    assert got.shape == (3,) and spy["fell_back"] == 0


def test_public_names_stay_the_same_objects_after_the_first_vmap():
    """install() binds forms in several namespaces: a name bound to the same function in two
    public modules before the first vmap still is after it."""
    script = """
import sys, jitensor as jt, jitensor.nn.functional, jitensor.linalg, jitensor.special
def public():
    mods = {n: m for n, m in sys.modules.items() if n.startswith("jitensor") and
            ".ops" not in n and ".kernels" not in n and "._" not in n}
    return {(n, k): id(v) for n, m in mods.items() for k, v in vars(m).items()
            if callable(v) and not k.startswith("_")}
before = public()
jt.func.vmap(jt.sin)(jt.ones(2, 3))
after = public()
same = {}
for key, i in before.items():
    same.setdefault(i, []).append(key)
broken = [keys for keys in same.values() if len({after[k] for k in keys}) > 1]
assert not broken, broken[:5]
assert jt.vmap is jt.func.vmap and jt.sin is not None
"""
    import subprocess
    import sys
    subprocess.run([sys.executable, "-c", script], check=True)

"""F.grid_sample and F.affine_grid (nn/functional.py) against torch: values and the gradients
by input, grid and theta for every mode, padding mode and align_corners, 4-D and 5-D, float32
and float64; torch's errors and warnings; a CUDA run (the simulator without a GPU)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt
from jitensor.nn import functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
needs_cuda = pytest.mark.skipif(not jt.cuda.is_available(),
                                reason="no CUDA: numba-cuda is not installed")
TOLERANCE = {"float64": 1e-8, "float32": 1e-3}


@given(st.sampled_from([2, 3]), st.sampled_from(["bilinear", "nearest", "bicubic"]),
       st.sampled_from(["zeros", "border", "reflection"]), st.booleans(),
       st.lists(st.integers(1, 5), min_size=3, max_size=3),
       st.lists(st.integers(1, 4), min_size=3, max_size=3),
       st.sampled_from(["float64", "float32"]), st.integers(0, 2 ** 32 - 1))
def test_grid_sample_matches_torch(dims, mode, padding_mode, align_corners, size, out, dtype,
                                   seed):
    if mode == "bicubic" and dims == 3:
        mode = "bilinear"
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 2, *size[:dims])).astype(dtype)
    grid = rng.uniform(-1.5, 1.5, (2, *out[:dims], dims)).astype(dtype)
    mine = [jt.tensor(a, requires_grad=True) for a in (x, grid)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, grid)]
    kwargs = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    got, want = F.grid_sample(*mine, **kwargs), TF.grid_sample(*theirs, **kwargs)
    rtol = TOLERANCE[dtype]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=rtol)
    g = rng.standard_normal(tuple(want.shape)).astype(dtype)
    got.backward(jt.tensor(g))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(mine[0].grad.numpy(), theirs[0].grad.numpy(), rtol=rtol,
                               atol=rtol)
    # (nearest's grid has no gradient path: torch's is zeros)
    grid_grad = mine[1].grad.numpy() if mine[1].grad is not None else np.zeros_like(grid)
    # near a tap's edge a float32 bicubic weight's derivative is ill-conditioned
    np.testing.assert_allclose(grid_grad, theirs[1].grad.numpy(), rtol=rtol * 10,
                               atol=rtol * 10)


@given(st.sampled_from([4, 5]), st.booleans(), st.lists(st.integers(1, 4), min_size=4,
                                                         max_size=4),
       st.sampled_from(["float64", "float32"]), st.integers(0, 2 ** 32 - 1))
def test_affine_grid_matches_torch(dims, align_corners, spatial, dtype, seed):
    size = (2, 3, *spatial[:dims - 2])
    theta = np.random.default_rng(seed).standard_normal((2, dims - 2, dims - 1)).astype(dtype)
    mine, theirs = jt.tensor(theta, requires_grad=True), torch.tensor(theta, requires_grad=True)
    with pytest.warns(UserWarning) if align_corners and min(spatial[:dims - 2]) == 1 else \
            _no_warning():
        got = F.affine_grid(mine, size, align_corners=align_corners)
    want = TF.affine_grid(theirs, size, align_corners=align_corners)
    rtol = TOLERANCE[dtype]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=rtol)
    (got * got).sum().backward()
    (want * want).sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=rtol, atol=rtol)


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_affine_grid_then_grid_sample_is_the_identity():
    x = jt.tensor(np.random.default_rng(1).standard_normal((1, 2, 4, 5)))
    theta = jt.tensor([[[1.0, 0, 0], [0, 1, 0]]], dtype=jt.float64)
    for align_corners in (False, True):
        grid = F.affine_grid(theta, (1, 2, 4, 5), align_corners=align_corners)
        np.testing.assert_allclose(F.grid_sample(x, grid, align_corners=align_corners).numpy(),
                                   x.numpy(), atol=1e-12)


def _raises_like_torch(fn, *arrays, **kwargs):
    with pytest.raises(Exception) as theirs:
        getattr(TF, fn)(*map(torch.tensor, arrays), **kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        getattr(F, fn)(*map(jt.tensor, arrays), **kwargs)
    # (the gist: up to torch's and jitensor's names of a shape or dtype)
    assert str(ours.value).split(":")[0].split(" Got")[0].split(", but")[0] == \
        str(theirs.value).split(":")[0].split(" Got")[0].split(", but")[0]


def test_errors_and_warnings_follow_torch():
    x, grid = np.zeros((1, 2, 4, 4)), np.zeros((1, 2, 2, 2))
    _raises_like_torch("grid_sample", x, np.zeros((2, 2, 2, 2)), align_corners=False)
    _raises_like_torch("grid_sample", x[None], np.zeros((1, 2, 2, 2, 3)), mode="bicubic",
                       align_corners=False)
    _raises_like_torch("grid_sample", x, grid, mode="foo")
    _raises_like_torch("grid_sample", x, grid, padding_mode="foo")
    _raises_like_torch("affine_grid", np.zeros((1, 2, 3)), size=(1, 1, 2, 2, 2),
                       align_corners=False)
    _raises_like_torch("affine_grid", np.zeros((1, 2, 3), np.int64), size=(1, 1, 2, 2),
                       align_corners=False)
    _raises_like_torch("affine_grid", np.zeros((1, 2, 3)), size=(1, 1, 0, 2),
                       align_corners=False)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(jt.tensor(x), jt.tensor(grid))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(jt.zeros(1, 2, 3), (1, 1, 2, 2))


@needs_cuda
def test_cuda_grid_sample_and_affine_grid():
    rng = np.random.default_rng(2)
    x, theta = rng.standard_normal((1, 1, 2, 3)), rng.standard_normal((1, 2, 3)) * 0.7
    for mode, padding_mode in (("bilinear", "zeros"), ("nearest", "border"),
                               ("bicubic", "reflection")):
        outs = []
        for device in ("cpu", "cuda"):
            a = jt.tensor(x, device=device, requires_grad=True)
            t = jt.tensor(theta, device=device, requires_grad=True)
            y = F.grid_sample(a, F.affine_grid(t, (1, 1, 2, 2), align_corners=False), mode=mode,
                              padding_mode=padding_mode, align_corners=False)
            (y * y).sum().backward()
            outs.append([y.detach().cpu().numpy(), a.grad.cpu().numpy(),
                         None if mode == "nearest" else t.grad.cpu().numpy()])
        for c, g in zip(*outs, strict=True):
            if c is not None:
                np.testing.assert_allclose(g, c, rtol=1e-10, atol=1e-12)

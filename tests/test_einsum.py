"""jt.einsum (ops/einsum.py): values, dtypes and shapes against np.einsum for random
equations (repeated subscripts, implicit and explicit outputs, ellipses, several operands),
gradients against torch, the sublist form, broadcasting, and torch's errors."""
import numpy as np
import pytest
from conftest import assert_grads_match_torch
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt


@st.composite
def equations(draw):
    """(equation, operand shapes, seed): up to 3 operands of up to 3 subscripts from a pool of
    4 letters of fixed sizes, an explicit output (some of the letters used, or none) or an
    implicit one, and sometimes a shared ellipsis."""
    lengths = draw(st.lists(st.integers(1, 3), min_size=4, max_size=4))
    sizes = dict(zip("abcd", lengths, strict=True))
    dots = draw(st.lists(st.integers(1, 3), max_size=2)) if draw(st.booleans()) else None
    terms, shapes = [], []
    for _ in range(draw(st.integers(1, 3))):
        term = "".join(draw(st.lists(st.sampled_from("abcd"), max_size=3)))
        shape = [sizes[ch] for ch in term]
        if dots is not None and draw(st.booleans()):
            cut = draw(st.integers(0, len(term)))
            term, shape = term[:cut] + "..." + term[cut:], shape[:cut] + dots + shape[cut:]
        terms.append(term)
        shapes.append(tuple(shape))
    used = sorted(set("".join(terms)) - {"."})
    equation = ",".join(terms)
    if draw(st.booleans()):
        out = draw(st.permutations(used))[:draw(st.integers(0, len(used)))]
        dotted = any("..." in t for t in terms)  # (NumPy refuses to sum them; torch: below)
        equation += "->" + ("..." if dotted else "") + "".join(out)
    return equation, shapes, draw(st.integers(0, 2 ** 32 - 1))


@given(equations(), st.sampled_from(["float64", "float32", "int64"]))
def test_einsum_matches_numpy(case, dtype):
    equation, shapes, seed = case
    rng = np.random.default_rng(seed)
    arrays = [rng.integers(-3, 4, s).astype(dtype) for s in shapes]
    want = np.einsum(equation, *arrays)
    got = jt.einsum(equation, *map(jt.tensor, arrays))
    assert got.dtype.name == dtype and tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@given(equations())
def test_einsum_gradients_match_torch(case):
    torch = pytest.importorskip("torch")
    equation, shapes, seed = case
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    mine = [jt.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    assert_grads_match_torch(torch, rng, jt.einsum(equation, *mine),
                             torch.einsum(equation, *theirs), mine, theirs, 1e-12, 1e-12)


def test_einsum_forms_broadcasting_and_errors_follow_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((5, 4, 2))
    pairs = [(jt.einsum("...ij,...jk->...ik", jt.tensor(a), jt.tensor(b)),
              torch.einsum("...ij,...jk->...ik", torch.tensor(a), torch.tensor(b))),
             (jt.einsum("...ij->j", jt.tensor(a)), torch.einsum("...ij->j", torch.tensor(a))),
             (jt.einsum("i,i", jt.ones(3), jt.ones(1)), torch.einsum("i,i", torch.ones(3),
                                                                     torch.ones(1))),
             (jt.einsum("ij,ij->ij", jt.tensor(a[0, 0]), jt.tensor(a[0, 0, :1])),
              torch.einsum("ij,ij->ij", torch.tensor(a[0, 0]), torch.tensor(a[0, 0, :1]))),
             (jt.einsum(jt.tensor(a), [0, 1, 2, 3], [3, 0]),
              torch.einsum(torch.tensor(a), [0, 1, 2, 3], [3, 0])),
             (jt.einsum(jt.tensor(a), [..., 3], jt.tensor(b[0, :, :1].T), [..., 3]),
              torch.einsum(torch.tensor(a), [..., 3], torch.tensor(b[0, :, :1].T), [..., 3])),
             (jt.einsum("ij , jk", [jt.tensor(a[0, 0]), jt.tensor(b[0])]),
              torch.einsum("ij , jk", [torch.tensor(a[0, 0]), torch.tensor(b[0])]))]
    for mine, theirs in pairs:
        assert tuple(mine.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12)
    for shapes in (((0, 3), (3, 4)), ((2, 3), (3, 0)), ((0, 2, 3), (3, 4))):  # empty results
        mine = jt.einsum("...ij,jk->...ik", *(jt.ones(s) for s in shapes))
        assert tuple(mine.shape) == tuple(torch.einsum("...ij,jk->...ik",
                                                       *(torch.ones(s) for s in shapes)).shape)
    a2 = rng.standard_normal((2, 3))  # sublist ints: 0-25 are 'A'-'Z', 26-51 'a'-'z', as torch's
    for sub in ([27, 0], [26, 25], [0, np.int64(1)]):
        np.testing.assert_array_equal(jt.einsum(jt.tensor(a2), sub).numpy(),
                                      torch.einsum(torch.tensor(a2), sub).numpy())
    with pytest.raises(ValueError, match="at least one operand"):
        jt.einsum("ij")
    x = jt.ones(2, 3)
    for equation, operands, match in (
            ("ab,bc->ac", (x, jt.ones(4, 5)), "subscript b has size 4"),
            ("ij", (x, x), "more operands were provided"),
            ("ij,jk", (x,), "fewer operands were provided"),
            ("i,j->ii", (jt.ones(2), jt.ones(2)), "output subscript i appears more than once"),
            ("i->j", (jt.ones(2),), "output subscript j does not appear"),
            ("i$", (jt.ones(2),), "invalid subscript given at index 1"),
            ("ijk", (x,), "number of subscripts in the equation \\(3\\) does not match"),
            ("i.j", (x,), "not part of any ellipsis"),
            ("ii", (x,), "subscript i is repeated for operand but the sizes don't match"),
            ("ij,jk", (x, jt.ones(3, 2, dtype=jt.float64)),
             "expected all operands to have the same dtype, got float32 and float64")):
        with pytest.raises(RuntimeError, match=match):
            jt.einsum(equation, *operands)


@pytest.mark.cuda  # skipped without CUDA (conftest.py)
def test_einsum_runs_on_cuda_as_on_the_cpu():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    got = jt.einsum("ij,jk->ki", jt.tensor(a, device="cuda"), jt.tensor(b, device="cuda"))
    assert got.device.type == "cuda"
    np.testing.assert_allclose(got.cpu().numpy(), np.einsum("ij,jk->ki", a, b))

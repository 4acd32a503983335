"""jitensor.fft against torch.fft: every function with its n/s/dim/norm forms, dtypes and
shapes, gradients (torch's convention for complex ones), frequencies and shifts, out= and
torch's errors. (The kernels themselves against NumPy, at many lengths: test_fft_kernels.py.)"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt

torch = pytest.importorskip("torch")

NORMS = [None, "backward", "forward", "ortho"]


def _data(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    return np.asarray(x, dtype)


def _same(mine, theirs, tol):
    theirs = theirs.detach().resolve_conj()
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(mine.shape) == tuple(theirs.shape)
    scale = max(1.0, float(np.abs(theirs.numpy()).max(initial=0)))
    np.testing.assert_allclose(mine.detach().numpy(), theirs.numpy(), rtol=0, atol=tol * scale)


def _tol(t):
    """A tolerance for results of t's precision."""
    return 1e-5 if t.dtype in (torch.float32, torch.complex64) else 1e-12


ONE_D = {  # name: the input dtypes it takes
    "fft": ["float32", "float64", "complex64", "complex128", "int64"],
    "ifft": ["float32", "complex64", "complex128"],
    "rfft": ["float32", "float64", "int64"],
    "irfft": ["complex64", "complex128", "float32"],
    "hfft": ["complex64", "complex128"],
    "ihfft": ["float32", "float64"],
}


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", list(ONE_D))
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_one_dimensional_matches_torch(name, norm, data):
    dtype = data.draw(st.sampled_from(ONE_D[name]))
    shape = data.draw(st.lists(st.integers(1, 12), min_size=1, max_size=3).map(tuple))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.one_of(st.none(), st.integers(1, 20)))
    if name in ("irfft", "hfft") and n is None and shape[dim] == 1:
        n = 3  # (the default, 2 (m - 1) points, is none)
    x = _data(np.random.default_rng(0), shape, dtype)
    if dtype == "int64":
        x = (x * 10).astype(np.int64)
    mine = getattr(jt.fft, name)(jt.tensor(x), n=n, dim=dim, norm=norm)
    theirs = getattr(torch.fft, name)(torch.tensor(x), n=n, dim=dim, norm=norm)
    _same(mine, theirs, _tol(theirs) * 10)
    assert mine.is_contiguous()


N_D = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2",
       "ihfft2", "hfftn", "ihfftn"]


@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("args", [{}, {"dim": (0, 2)}, {"s": (4, 6)}, {"s": (3, -1), "dim": (2, 0)},
                                  {"dim": (1,), "norm": "ortho"}, {"norm": "forward"}])
def test_n_dimensional_matches_torch(name, args):
    if name.endswith("2") and "dim" in args and len(args["dim"]) == 1:
        args = {"dim": (1, 2), "norm": "ortho"}
    real_in = name.startswith(("rfft", "ihfft"))
    dtype = "float64" if real_in else "complex128"
    x = _data(np.random.default_rng(1), (5, 3, 4), dtype)
    if name.endswith("2") and "dim" not in args and "s" in args:
        pass
    mine = getattr(jt.fft, name)(jt.tensor(x), **args)
    theirs = getattr(torch.fft, name)(torch.tensor(x), **args)
    _same(mine, theirs, 1e-11)


@pytest.mark.parametrize("n", [1, 2, 7, 64, 97, 100, 210, 1009, 4096])
def test_lengths_match_torch(n):
    x = _data(np.random.default_rng(2), (2, n), "complex64")
    _same(jt.fft.fft(jt.tensor(x)), torch.fft.fft(torch.tensor(x)), 1e-5 * max(1, np.log2(n)))
    r = x.real.copy()
    _same(jt.fft.irfft(jt.fft.rfft(jt.tensor(r)), n), torch.tensor(r), 1e-5 * max(1, np.log2(n)))


GRADS = {
    "fft": lambda m, x: m.fft.fft(x, norm="ortho").abs().sum(),
    "ifft_n": lambda m, x: m.view_as_real(m.fft.ifft(x, n=9)).pow(2).sum(),
    "rfft": lambda m, x: m.fft.rfft(x.real, n=7).abs().sum(),
    "rfft_even": lambda m, x: (m.fft.rfft(x.real, dim=0) * 1j).real.sum(),
    "irfft_odd": lambda m, x: m.fft.irfft(x, n=7).pow(3).sum(),
    "irfft_even": lambda m, x: m.fft.irfft(x, n=10, norm="forward").sin().sum(),
    "hfft": lambda m, x: m.fft.hfft(x, n=6).pow(2).sum(),
    "ihfft": lambda m, x: m.fft.ihfft(x.imag).abs().sum(),
    "fft2": lambda m, x: m.fft.fft2(x).real.pow(2).sum(),
    "rfftn": lambda m, x: m.fft.rfftn(x.real, s=(3, 8)).abs().sum(),
    "irfftn": lambda m, x: m.fft.irfftn(x, s=(5, 6)).pow(2).sum(),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_match_torch(name):
    x = _data(np.random.default_rng(3), (4, 5), "complex128")
    theirs, mine = torch.tensor(x, requires_grad=True), jt.tensor(x, requires_grad=True)
    GRADS[name](torch, theirs).backward()
    GRADS[name](jt, mine).backward()
    _same(mine.grad, theirs.grad, 1e-10)


def test_frequencies_and_shifts_match_torch():
    for n in (1, 4, 5):
        for d in (1.0, 0.1):
            _same(jt.fft.fftfreq(n, d), torch.fft.fftfreq(n, d), 1e-7)
            _same(jt.fft.rfftfreq(n, d, dtype=jt.float64),
                  torch.fft.rfftfreq(n, d, dtype=torch.float64), 1e-12)
    x = np.arange(30).reshape(5, 6)
    for dim in (None, 0, (1,), (0, 1)):
        for name in ("fftshift", "ifftshift"):
            _same(getattr(jt.fft, name)(jt.tensor(x), dim=dim),
                  getattr(torch.fft, name)(torch.tensor(x), dim=dim), 0)


def test_out_and_dtypes():
    x = jt.randn(8)
    out = jt.empty(5, dtype=jt.complex64)
    assert jt.fft.rfft(x, out=out) is out
    np.testing.assert_allclose(out.numpy(), np.fft.rfft(x.numpy()), atol=1e-5)
    assert jt.fft.fft(jt.ones(4, dtype=jt.float64)).dtype is jt.complex128
    assert jt.fft.irfft(jt.ones(4, dtype=jt.complex128)).dtype is jt.float64
    assert jt.has_spectral


@pytest.mark.parametrize("call", [
    lambda m: m.fft.rfft(m.ones(4, dtype=m.complex64)),
    lambda m: m.fft.fft(m.ones(4), n=0),
    lambda m: m.fft.fft(m.ones(4), norm="bad"),
    lambda m: m.fft.fft(m.ones(4), dim=1),
    lambda m: m.fft.fftn(m.ones(4, 4), s=(2,), dim=(0, 1)),
    lambda m: m.fft.fft2(m.ones(4, 4), dim=(0, 0)),
    lambda m: m.fft.irfft(m.ones(1, dtype=m.complex64)),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)):
        call(jt)


STFT = [
    {"n_fft": 16},
    {"n_fft": 16, "hop_length": 5, "win_length": 10, "window": "hann"},
    {"n_fft": 15, "center": False, "normalized": True},
    {"n_fft": 16, "onesided": False, "pad_mode": "constant"},
    {"n_fft": 8, "hop_length": 8, "pad_mode": "replicate"},
]


def _windowed(m, args):
    args = dict(args)
    if args.get("window") == "hann":
        args["window"] = m.hann_window(args.get("win_length", args["n_fft"]), dtype=m.float64)
    return args


@pytest.mark.parametrize("args", STFT)
@pytest.mark.parametrize("shape", [(100,), (2, 61)])
def test_stft_and_istft_match_torch(args, shape):
    x = _data(np.random.default_rng(4), shape, "float64")
    theirs, mine = torch.tensor(x, requires_grad=True), jt.tensor(x, requires_grad=True)
    st = torch.stft(theirs, **_windowed(torch, args), return_complex=True)
    sj = jt.stft(mine, **_windowed(jt, args), return_complex=True)
    _same(sj, st, 1e-12)
    inverse = {k: v for k, v in args.items() if k != "pad_mode"}
    if inverse.get("center", True) or inverse["n_fft"] == inverse.get("hop_length"):
        it = torch.istft(st, **_windowed(torch, inverse), length=shape[-1])
        ij = jt.istft(sj, **_windowed(jt, inverse), length=shape[-1])
        _same(ij, it, 1e-12)
        it.pow(2).sum().backward()
        ij.pow(2).sum().backward()
        _same(mine.grad, theirs.grad, 1e-10)
    assert jt.tensor(x).stft(8, return_complex=True).shape == \
        torch.tensor(x).stft(8, return_complex=True).shape


@pytest.mark.parametrize("call", [
    lambda m: m.stft(m.ones(40), 8),
    lambda m: m.stft(m.ones(2, 2, 40), 8, return_complex=True),
    lambda m: m.stft(m.ones(40), 8, hop_length=0, return_complex=True),
    lambda m: m.stft(m.ones(40), 8, win_length=9, return_complex=True),
    lambda m: m.istft(m.ones(5, 3), 8),
    lambda m: m.istft(m.ones(5, 3, dtype=m.complex64), 16),
    lambda m: m.istft(m.ones(5, 3, dtype=m.complex64), 8, window=m.zeros(8)),
])
def test_stft_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)):
        call(jt)


def _spectral_model(m):
    """A Fourier neural operator's block, written as the FNO papers' code writes it: the input's
    low modes (rfft2) mixed by complex weights (einsum), scattered into a zero spectrum,
    irfft2 back, plus a pointwise convolution."""
    class SpectralConv2d(m.nn.Module):
        def __init__(self, channels, modes):
            super().__init__()
            self.modes = modes
            self.weights1 = m.nn.Parameter(m.rand(channels, channels, modes, modes,
                                                  dtype=m.cfloat))
            self.weights2 = m.nn.Parameter(m.rand(channels, channels, modes, modes,
                                                  dtype=m.cfloat))

        def forward(self, x):
            x_ft = m.fft.rfft2(x)
            out_ft = m.zeros(x.shape[0], x.shape[1], x.size(-2), x.size(-1) // 2 + 1,
                             dtype=m.cfloat)
            k = self.modes
            out_ft[:, :, :k, :k] = m.einsum("bixy,ioxy->boxy", x_ft[:, :, :k, :k],
                                            self.weights1)
            out_ft[:, :, -k:, :k] = m.einsum("bixy,ioxy->boxy", x_ft[:, :, -k:, :k],
                                             self.weights2)
            return m.fft.irfft2(out_ft, s=(x.size(-2), x.size(-1)))

    class Block(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc0 = m.nn.Linear(3, 8)
            self.conv = SpectralConv2d(8, 4)
            self.w = m.nn.Conv2d(8, 8, 1)
            self.fc1 = m.nn.Linear(8, 1)

        def forward(self, x):
            x = self.fc0(x).permute(0, 3, 1, 2)
            x = m.nn.functional.gelu(self.conv(x) + self.w(x))
            return self.fc1(x.permute(0, 2, 3, 1))

    return Block()


@pytest.mark.parametrize("optimizer", ["Adam", "AdamW", "SGD"])
def test_spectral_convolution_training_matches_torch(optimizer):
    """Complex parameters through rfft2, einsum, a scattered spectrum and irfft2, trained by
    an optimizer that updates their parts as pairs of reals (torch's)."""
    rng = np.random.default_rng(5)
    theirs = _spectral_model(torch)
    mine = _spectral_model(jt)
    mine.load_state_dict({k: jt.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    x, y = rng.standard_normal((2, 8, 8, 3)), rng.standard_normal((2, 8, 8, 1))
    # Adam's step is lr-sized whatever the gradient's size: where a gradient is float32 noise,
    # the step's sign is too. An eps above that noise keeps such steps gradient-sized.
    kwargs = {"lr": 1e-2, "weight_decay": 1e-3} | ({"momentum": 0.9} if optimizer == "SGD"
                                                   else {"eps": 1e-3})
    losses = []
    for m, model in ((torch, theirs), (jt, mine)):
        opt = getattr(m.optim, optimizer)(model.parameters(), **kwargs)
        run = []
        for _ in range(3):
            opt.zero_grad()
            loss = m.nn.functional.mse_loss(model(m.tensor(x, dtype=m.float32)),
                                            m.tensor(y, dtype=m.float32))
            loss.backward()
            opt.step()
            run.append(loss.item())
        losses.append(run)
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)
    for (name, a), b in zip(theirs.named_parameters(), mine.parameters(), strict=True):
        assert b.dtype.name == str(a.dtype).split(".")[-1], name
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), atol=1e-5)


def test_optimizers_that_cannot_update_complex_parameters_say_so():
    p = jt.nn.Parameter(jt.ones(2, dtype=jt.complex64))
    with pytest.raises(NotImplementedError, match="RMSprop does not update complex"):
        jt.optim.RMSprop([p])

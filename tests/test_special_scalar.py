"""The scalar definitions of torch.special's functions (kernels/scalar/special.py), compiled
into small @njit loops over float32 and float64 arrays and compared with torch.special on grids
that cover each algorithm's branches and cut-offs, the poles, 0 and -0.0, +-inf and NaN; then
run once through the CUDA simulator and compiled to PTX for sm_90, where the CPU tests cannot
see a typing error of the CUDA target.

Tolerances: float64 results are compared with torch's float64 ones to a few eps (rtol, per
function below), plus an absolute term (atol) where a result passes through 0 and the rounding
of its larger terms sets the error. The float32 results of functions computed in float64 are
the float64 ones rounded, so they are compared with torch's float64 results rounded to float32,
to 1 ulp (the two roundings may fall on either side of a midpoint); their NaNs must be torch's
float32 NaNs. entr, xlog1py and sinc, computed in the argument's type as torch does, are
compared with torch in that type."""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO
from numba import njit

from jitensor.kernels.scalar import special

EPS64 = np.finfo(np.float64).eps
ULP32 = 2.0 ** -23  # float32's largest relative spacing
TINY32 = float(np.finfo(np.float32).smallest_subnormal)
SPECIALS = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -0.5, 1e-300, 5e-324,
            1e-40, 1e300, -1e300]
RNG = np.random.default_rng(0)


def _grid(*parts):
    """The values of parts (arrays, lists, or (lo, hi) pairs: 300 evenly spaced and 300 random
    values), SPECIALS included."""
    out = [np.asarray(SPECIALS)]
    for p in parts:
        if isinstance(p, tuple):
            lo, hi = p
            out += [np.linspace(lo, hi, 300), RNG.uniform(lo, hi, 300)]
        else:
            out.append(np.asarray(p, dtype=np.float64))
    return np.concatenate(out)


def _around(*points):
    """Each point and its neighbours 1 and 2 ulp away, on both sides."""
    p = np.asarray(points, dtype=np.float64)
    up, down = np.nextafter(p, np.inf), np.nextafter(p, -np.inf)
    return np.concatenate([p, up, down, np.nextafter(up, np.inf), np.nextafter(down, -np.inf)])


def _as(x, dtype):
    """x in dtype (1e300 and -1e300 become +-inf in float32, on purpose)."""
    with np.errstate(over="ignore"):
        return np.asarray(x).astype(dtype)


def _log_range(lo, hi, n=200):
    return np.logspace(lo, hi, n)


# name: (grid, rtol in float64 eps, atol). Where torch runs the same algorithm, the differences
# are those of the underlying exp/log/erf/sin (a few ulp); the larger ones are explained inline.
CASES = {
    "ndtr": (_grid((-40, 40), _around(-1.0, 1.0), -_log_range(-5, 2.6)), 4, 0),
    # (torch's ndtri is the same Cephes code)
    "ndtri": (_grid((0, 1), _around(0.1353352832366127, 1 - 0.1353352832366127, 1.2664165549e-14),
                    _log_range(-320, 0), 1 - _log_range(-17, -0.3)), 6, 0),
    "log_ndtr": (_grid((-50, 10), _around(-1.0), -_log_range(0, 300), _log_range(-5, 1.5)), 4,
                 0),
    "erfcx": (_grid((-27, 60), _around(50.0, 5e7, -6.1, -26.7), _log_range(-10, 300),
                    -_log_range(-10, 1.5)), 4, 0),
    "entr": (_grid((-2, 10), _log_range(-300, 300)), 2, 0),
    "sinc": (_grid((-20, 20), _log_range(-300, 10), np.arange(-5.0, 6.0)), 1, 0),
    # the Chebyshev recurrence amplifies rounding near the ends of its range, and torch's
    # values differ from these there by up to 10 ulp (both are within 11 ulp of the truth
    # there: checked with mpmath)
    "i0": (_grid((-720, 720), (-10, 10), _around(8.0, -8.0)), 8, 0),
    "i0e": (_grid((-720, 720), (-10, 10), _around(8.0, -8.0), _log_range(-5, 300)), 8, 0),
    "i1": (_grid((-720, 720), (-10, 10), _around(8.0, -8.0)), 16, 0),
    "i1e": (_grid((-720, 720), (-10, 10), _around(8.0, -8.0), _log_range(-5, 300)), 16, 0),
    # near the zeros of J0/J1, the rounding of terms of size ~1 (an absolute 1e-16)
    "bessel_j0": (_grid((-30, 30), _around(5.0, -5.0, 1e-5), _log_range(-8, 6)), 16,
                  8 * EPS64),
    "bessel_j1": (_grid((-30, 30), _around(5.0, -5.0), _log_range(-8, 6)), 16, 8 * EPS64),
    # near the root at 1.46 and for negative x (the reflection's cancellation): a few ulp of
    # the terms, which reach |x| + |pi / tan(pi x)|
    "digamma": (_grid((-20, 20), _around(10.0, 1e17, 1.4616321449683622),
                      _log_range(-300, 300), -_log_range(-5, 15), np.arange(-5.0, 0.0)), 8,
                None),
    # torch calls glibc's lgamma (within 1 ulp), these are a series and Stirling's: both close
    # in x > 0; below 0 the reflection cancels near lgamma's zeros (a few ulp of its terms)
    "lgamma": (_grid((-20, 20), _around(0.5, 1.0, 1.5, 2.0, 10.0), _log_range(-300, 300),
                     -_log_range(-5, 15), np.arange(-5.0, 0.0)), 8, None),
    # torch's CPU erfinv is MKL's (the exact values); these: two Newton steps on erf (on erfc in
    # the tails), within 2 ulp
    "erfinv": (_grid((-1, 1), _around(0.7, -0.7, 1.0, -1.0), 1 - _log_range(-16, -0.3),
                     _log_range(-320, -1)), 3, 0),
    "trigamma": (_grid((-20, 20), _log_range(-300, 300), -_log_range(-5, 15) + 0.25,
                       np.arange(-5.0, 0.0)), 2, 0),
}
IN_ITS_TYPE = {"entr", "sinc", "xlog1py"}  # computed in the argument's type, as torch does


def _torch_fn(name):
    import torch
    return {"lgamma": torch.lgamma, "trigamma": lambda t: torch.polygamma(1, t),
            "ndtr": _ndtr_oracle}.get(name) or getattr(torch.special, name)


def _ndtr_oracle(t):
    """torch's ndtr, (1 + erf(x / sqrt 2)) / 2, from -1 up; below, where it cancels (0.0 for
    x < -8.3, whose truth is up to 7.6e-24), torch's erfc(-x / sqrt 2) / 2."""
    import torch
    return torch.where(t < -1, torch.special.erfc(-t * math.sqrt(0.5)) / 2,
                       torch.special.ndtr(t))


_LOOPS = {}


def _loop(fn, arity=1):
    """fn applied element by element, compiled as the kernels are (a division by zero gives
    inf)."""
    if (fn, arity) not in _LOOPS:
        if arity == 1:
            def run(x):
                out = np.empty_like(x)
                for i in range(x.size):
                    out[i] = fn(x[i])
                return out
        else:
            def run(x, y):
                out = np.empty_like(x)
                for i in range(x.size):
                    out[i] = fn(x[i], y[i])
                return out
        _LOOPS[fn, arity] = njit(error_model="numpy")(run)
    return _LOOPS[fn, arity]


def _returns_its_type(fn, *args):
    """fn's compiled return type is its (last) argument's."""
    one = njit(error_model="numpy")(
        (lambda x: fn(x)) if len(args) == 1 else (lambda x, y: fn(x, y)))
    one(*args)
    (sig,) = one.nopython_signatures
    assert sig.return_type == sig.args[-1], sig


def _close(got, want, rtol, atol, what, *args):
    """Equal NaNs, infinities and signs of zero; elsewhere |got - want| <= atol + rtol |want|
    (atol an array or a number), plus 4 ulp of the denormals."""
    tiny = 4 * np.finfo(want.dtype).smallest_subnormal
    with np.errstate(all="ignore"):
        finite = np.isfinite(want)
        err = np.abs(got.astype(np.float64) - want)
        ok = np.where(finite, err <= atol + rtol * np.abs(want) + tiny,
                      (got == want) | (np.isnan(got) & np.isnan(want)))
    ok &= (want != 0) | (np.signbit(got) == np.signbit(want))
    bad = np.flatnonzero(~ok)
    assert not bad.size, f"{what}: {bad.size} of {got.size} differ; args, got, torch:\n" + \
        "\n".join(f"  {[a[i] for a in args]} {got[i]!r} {want[i]!r}" for i in bad[:12])


def _atol(name, x, dtype):
    """The absolute tolerance of digamma and lgamma: 8 eps of the size of their terms."""
    a = np.abs(x.astype(np.float64))
    with np.errstate(all="ignore"):
        if name == "digamma":  # psi(1 - x) and pi / tan(pi x) for x < 0, log(x) and 1/x above
            reflection = np.where(x < 0, np.pi / np.abs(np.tan(np.pi * (x - np.trunc(x)))), 0)
            scale = 1 + np.log1p(a) + np.where(a < 1, 1 / np.maximum(a, 1e-300), 0) + reflection
        else:  # log(pi) - log|sin(pi x)| - lgamma(1 - x)
            scale = 1 + np.where(x < 0, a * np.log1p(a) + np.abs(np.log(np.abs(
                np.sin(np.pi * (x - np.round(x)))) + 1e-300)), 0)
    return 8 * np.finfo(dtype).eps * np.where(np.isfinite(scale), scale, 0)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", sorted(CASES))
def test_unary_matches_torch(name, dtype):
    torch = pytest.importorskip("torch")
    grid, ulps, atol = CASES[name]
    fn = getattr(special, name)
    x = _as(grid, dtype)
    got = _loop(fn)(x)
    _returns_its_type(fn, dtype(0.5))
    oracle = _torch_fn(name)
    if dtype is np.float64 or name in IN_ITS_TYPE:
        want = oracle(torch.from_numpy(x)).numpy()
        if atol is None:
            atol = _atol(name, x, dtype)
        rtol = ulps * np.finfo(dtype).eps
        with np.errstate(all="ignore"):
            _close(got, want, rtol, atol, f"{name}({dtype.__name__})", x)
        return
    with np.errstate(over="ignore"):  # (float64 results beyond float32's range round to inf)
        want = oracle(torch.from_numpy(x.astype(np.float64))).numpy().astype(np.float32)
    _close(got, want, ULP32, TINY32, f"{name}(float32) vs torch's float64, rounded", x)
    torch32 = oracle(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(torch32), err_msg=name)


XLOG1PY_X = [0.0, -0.0, 1.0, -2.0, 3.0, 0.5, 1e-300, math.nan, math.inf, -math.inf]
XLOG1PY_Y = [math.nan, -1.0, -1.5, -0.5, 0.0, -0.0, 1e-20, 1.0, 5.0, 1e300, math.inf,
             -math.inf]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: d.__name__)
def test_xlog1py_matches_torch(dtype):
    """0 where x == 0 unless y is NaN (also at y = -1, where log1p is -inf); computed in the
    argument's type as torch's (log1p's ulp apart)."""
    torch = pytest.importorskip("torch")
    x, y = (_as(a.ravel(), dtype) for a in np.meshgrid(XLOG1PY_X, XLOG1PY_Y))
    grid = RNG.uniform(-0.99, 20, 500).astype(dtype)
    x, y = np.concatenate([x, grid[::-1] * 3]), np.concatenate([y, grid])
    got = _loop(special.xlog1py, 2)(x, y)
    want = torch.special.xlog1py(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    _close(got, want, 2 * np.finfo(dtype).eps, 0, "xlog1py", x, y)
    _returns_its_type(special.xlog1py, dtype(2), dtype(0.5))


ZETA_X = [1.0, 0.5, 0.0, -2.0, 1.0000001, 1.5, 2.0, 3.0, 4.5, 10.0, 50.0, 200.0, math.inf,
          -math.inf, math.nan]
ZETA_Q = [-3.0, -2.5, -1000.5, -0.0, 0.0, 5e-324, 1e-300, 1e-10, 0.5, 1.0, 2.5, 9.0, 9.5, 10.0,
          100.0, 1e10, math.inf, -math.inf, math.nan]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: d.__name__)
def test_zeta_matches_torch(dtype):
    """Cephes' zeta as torch runs it (in float64 for float32, as torch's CPU kernel): the same
    operations, so within 4 eps (pow's ulps), and torch's values at x <= 1, at the poles, for
    negative q and at +-inf."""
    torch = pytest.importorskip("torch")
    x, q = (a.ravel() for a in np.meshgrid(ZETA_X, ZETA_Q))
    x = np.concatenate([x, RNG.uniform(1, 30, 300), np.arange(2.0, 12.0)])
    q = np.concatenate([q, RNG.uniform(-20, 50, 300), np.full(10, -7.25)])
    x, q = _as(x, dtype), _as(q, dtype)
    got = _loop(special.zeta, 2)(x, q)
    if dtype is np.float64:
        want = torch.special.zeta(torch.from_numpy(x), torch.from_numpy(q)).numpy()
        with np.errstate(all="ignore"):
            # q < 0: the direct sum cancels (terms like +-2^x meet), and so does the rounding
            # of the two pows: a few eps of the largest term, |q - round(q)|^-x
            near = np.abs(q - np.round(q))
            atol = np.where(q < 0, 4 * EPS64 * np.where(near > 0, near ** -x, 0), 0)
        _close(got, want, 4 * EPS64, np.nan_to_num(atol, posinf=0), "zeta", x, q)
    else:
        want = torch.special.zeta(torch.from_numpy(x), torch.from_numpy(q)).numpy()
        _close(got, want, ULP32, TINY32, "zeta(float32)", x, q)  # torch's CPU zeta: in float64
    _returns_its_type(special.zeta, dtype(2), dtype(0.5))


def test_zeta_refuses_sums_longer_than_2_to_the_22_terms():
    """q below -(2^22 - 9) with an integer x: NaN, where Cephes' direct sum would take |q|
    terms per element."""
    z = _loop(special.zeta, 2)
    got = z(np.array([3.0, 3.0]), np.array([-5e6 - 0.5, -4e6 - 0.5]))
    assert np.isnan(got[0]) and np.isfinite(got[1])


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: d.__name__)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8])
def test_polygamma_matches_torch(n, dtype):
    """digamma, trigamma, then (-1)^(n+1) n! zeta(n + 1, x), zeta rounded to x's type first
    (torch: n! as exp(lgamma(n + 1)), an ulp or two from the exact one used here). Compared
    with torch in x's type: float32 in float32."""
    torch = pytest.importorskip("torch")
    x = _as(np.concatenate([SPECIALS, RNG.uniform(0, 30, 300), [-3.0, -2.0, -1.5, -0.25, 1e-20]]),
            dtype)
    if dtype is np.float32 and n == 1:
        # not at the poles, where torch's float32 sin(pi x) is 8.7e-8 (x = -1) and float64's
        # 1.2e-16: both finite stand-ins for the pole's inf
        x = x[(x >= 0) | ~np.isfinite(x) | (x != np.round(x))]
    if dtype is np.float32 and n >= 2:
        # not below 0: torch's float32 zeta takes its first term q^-x in float32 (std::pow of
        # two floats), whose rounding the cancellation of the sum magnifies (-1.5^-9 meets
        # +-512 at x = -1.5)
        x = x[(x >= 0) | ~np.isfinite(x)]
    got = _polygamma(n, x)
    want = torch.polygamma(n, torch.from_numpy(x)).numpy()
    tol = 4 * np.finfo(dtype).eps
    _close(got, want, tol, 0 if n else tol, f"polygamma({n})", x)
    _returns_its_type(special.polygamma, n, dtype(0.5))


@njit(error_model="numpy")
def _polygamma(n, x):
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = special.polygamma(n, x[i])
    return out


def test_returns_the_argument_type_in_python_too():
    """Run as Python (the CUDA simulator's way), the functions keep float32 too."""
    for name in CASES:
        assert type(getattr(special, name)(np.float32(0.25))) is np.float32, name
        assert type(getattr(special, name)(np.float64(0.25))) is np.float64, name
    assert type(special.zeta(np.float32(2), np.float32(0.5))) is np.float32
    assert type(special.xlog1py(np.float32(2), np.float32(0.5))) is np.float32
    assert type(special.polygamma(3, np.float32(0.5))) is np.float32


# -- CUDA -----------------------------------------------------------------------------------------
UNARY = sorted(CASES)
# A few float64 values across the functions' branches (NaN outside a domain, where both must
# give NaN), off the cut-offs, where NumPy's exp/log and the CPU's could round to either side
CUDA_VALUES = [-7.3, -2.6, -0.4, -0.0, 0.0, 0.3, 0.55, 0.93, 1.7, 6.2, 12.5, 60.0, math.inf,
               math.nan]

_CUDA_SCRIPT = r"""
import json, re, sys, types
import numpy as np
from numba import cuda, float32, float64, njit
from jitensor.kernels.scalar import special

UNARY, VALUES, MODE = json.loads(sys.argv[1])


def unary(fn):
    def kernel(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = fn(x[i])
    return kernel, njit(error_model="numpy")(lambda x: fn(x))


def binary(fn):
    def kernel(out, x, y):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = fn(x[i], y[i])
    return kernel, njit(error_model="numpy")(lambda x, y: fn(x, y))


def polygamma3(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = special.polygamma(3, x[i])


kernels = {name: unary(getattr(special, name)) for name in UNARY}
kernels["xlog1py"] = binary(special.xlog1py)
kernels["zeta"] = binary(special.zeta)
kernels["polygamma3"] = (polygamma3, njit(error_model="numpy")(
    lambda x: special.polygamma(3, x)))
report = {}
if MODE == "ptx":
    # device functions ask the current GPU for its compute capability; there is none here
    import numba.cuda.dispatcher
    numba.cuda.dispatcher.get_current_device = lambda: types.SimpleNamespace(
        compute_capability=(9, 0))
    for ty in (float64, float32):
        for name, (kernel, _) in kernels.items():
            arity = 3 if name in ("xlog1py", "zeta") else 2
            try:
                ptx, _ = cuda.compile_ptx(kernel, (ty[:],) * arity, cc=(9, 0))
            except Exception as e:
                report[f"{name}({ty})"] = repr(e)[-2000:]
                continue
            # an LLVM intrinsic NVVM did not lower stays a call of an undefined function
            undefined = re.findall(r"\.extern\s+\.func[^;]*?\b(llvm\.[\w.]+)", ptx)
            if undefined:
                report[f"{name}({ty})"] = f"calls {sorted(set(undefined))}"
else:  # the largest relative difference from the CPU's results, per function
    x = np.array(VALUES)
    y = np.array(VALUES[::-1]) + 2.0  # (zeta's x >= 1 mostly, xlog1py's y > -1)
    for name, (kernel, on_cpu) in kernels.items():
        args = (x, y) if name in ("xlog1py", "zeta") else (x,)
        out = np.empty_like(x)
        cuda.jit(kernel)[1, 32](out, *args)
        want = np.array([on_cpu(*[a[i] for a in args]) for i in range(x.size)])
        same = (out == want) | (np.isnan(out) & np.isnan(want))
        with np.errstate(all="ignore"):
            rel = np.where(same, 0.0, np.abs(out - want) / np.abs(want))
        report[name] = float(rel.max())
print("REPORT " + json.dumps(report))
"""


def _run_cuda_script(mode, simulator):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1" if simulator else "0",
               PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", _CUDA_SCRIPT,
                           json.dumps([UNARY, CUDA_VALUES, mode])],
                          capture_output=True, text=True, env=env, timeout=900)
    out = done.stdout + done.stderr
    if "NVVM" in out and "cannot be found" in out:
        pytest.skip("no NVVM here: install numba-cuda[cu13]")
    assert done.returncode == 0, out[-6000:]
    (line,) = [s for s in done.stdout.splitlines() if s.startswith("REPORT ")]
    return json.loads(line[len("REPORT "):])


@pytest.mark.cuda
def test_cuda_simulator_kernels_agree_with_the_cpu():
    """Each function in a @cuda.jit kernel, run by the simulator (as Python, libm's NumPy
    bodies): within a few ulp of the compiled CPU loops (whose exp and log are their own
    polynomials; measured: 2 ulp at most), NaNs and infinities equal."""
    pytest.importorskip("numba.cuda")
    report = _run_cuda_script("run", simulator=True)
    assert set(report) == set(UNARY) | {"xlog1py", "zeta", "polygamma3"}
    worst = {name: rel for name, rel in report.items() if not rel <= 1e-14}
    assert not worst, worst


@pytest.mark.cuda
def test_cuda_kernels_compile_to_ptx():
    """Every function types and compiles for sm_90 in float32 and float64 (no GPU needed), and
    calls no LLVM intrinsic NVVM leaves undefined."""
    pytest.importorskip("numba.cuda")
    report = _run_cuda_script("ptx", simulator=False)
    assert not report, report


@pytest.mark.cuda
def test_cuda_gpu_kernels_agree_with_the_cpu():
    """On a GPU (libdevice's exp, log, erf, sin): within 1e-13 of the CPU's results."""
    from jitensor.kernels.cuda import driver
    if driver.SIM:
        pytest.skip("no GPU: the simulator test covers the kernels' Python")
    report = _run_cuda_script("run", simulator=False)
    worst = {name: rel for name, rel in report.items() if not rel <= 1e-13}
    assert not worst, worst

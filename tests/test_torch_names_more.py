"""More of torch's names, each against torch: the functional recurrent forms (torch.lstm,
torch.gru_cell, ...), the native_* norms and dropout, the older norms, torch.convolution,
the SyncBatchNorm helpers, memory formats (channels_last), the autocast, anomaly and autograd
state, torch.range/asarray/frombuffer/empty_permuted/fill, and Tensor's set_, resize,
apply_/map_/map2_, dim_order, as_subclass and the conj/neg queries."""
import array
import warnings

import numpy as np
import pytest

import jitensor as jt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def J(t):
    return jt.tensor(t.detach().numpy())


def close(theirs, mine, tol=1e-5):
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=tol,
                               atol=tol)
    assert tuple(mine.shape) == tuple(theirs.shape)


# -- torch._VF's recurrent forms -------------------------------------------------------------
GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _params(gates, layers, directions, n_in, hidden, bias=True):
    g = torch.Generator().manual_seed(0)
    params = []
    for layer in range(layers):
        for _ in range(directions):
            width = n_in if layer == 0 else hidden * directions
            params += [torch.randn(gates * hidden, width, generator=g) * 0.5,
                       torch.randn(gates * hidden, hidden, generator=g) * 0.5]
            if bias:
                params += [torch.randn(gates * hidden, generator=g) * 0.5,
                           torch.randn(gates * hidden, generator=g) * 0.5]
    return params


@pytest.mark.parametrize("mode", list(GATES))
@pytest.mark.parametrize("bidirectional", [False, True])
def test_functional_recurrent_layers_match_torch(mode, bidirectional):
    directions = 2 if bidirectional else 1
    params = _params(GATES[mode], 2, directions, 3, 4)
    x, h = torch.randn(5, 2, 3), torch.randn(2 * directions, 2, 4)
    hx = (h, torch.randn(2 * directions, 2, 4)) if mode == "lstm" else h
    jhx = tuple(map(J, hx)) if mode == "lstm" else J(hx)
    jparams = [J(p) for p in params]
    for batch_first in (False, True):
        xs = x.transpose(0, 1) if batch_first else x
        theirs = getattr(torch, mode)(xs, hx, params, True, 2, 0.0, False, bidirectional,
                                      batch_first)
        mine = getattr(jt, mode)(J(xs), jhx, jparams, True, 2, 0.0, False, bidirectional,
                                 batch_first)
        assert len(mine) == len(theirs)
        for a, b in zip(theirs, mine, strict=True):
            close(a, b, 1e-4)
    # a packed batch's data and batch sizes
    data = torch.randn(7, 3)
    theirs = getattr(torch, mode)(data, torch.tensor([2, 2, 1, 1, 1]), hx, params, True, 2, 0.0,
                                  False, bidirectional)
    mine = getattr(jt, mode)(J(data), jt.tensor([2, 2, 1, 1, 1]), jhx, jparams, True, 2, 0.0,
                             False, bidirectional)
    for a, b in zip(theirs, mine, strict=True):
        close(a, b, 1e-4)


def test_functional_lstm_without_bias_and_its_gradient():
    params = _params(4, 1, 1, 3, 4, bias=False)
    x, h, c = torch.randn(4, 2, 3), torch.randn(1, 2, 4), torch.randn(1, 2, 4)
    tp = [p.clone().requires_grad_() for p in params]
    jp = [J(p).requires_grad_() for p in params]
    out, hn, cn = torch.lstm(x, (h, c), tp, False, 1, 0.0, False, False, False)
    (out.sum() + cn.sum()).backward()
    mo, mh, mc = jt.lstm(J(x), (J(h), J(c)), jp, False, 1, 0.0, False, False, False)
    (mo.sum() + mc.sum()).backward()
    close(out, mo, 1e-4)
    for a, b in zip(tp, jp, strict=True):
        close(a.grad, b.grad, 1e-4)
    with pytest.raises(RuntimeError):
        jt.lstm(J(x), (J(h), J(c)), jp[:1], False, 1, 0.0, False, False, False)


@pytest.mark.parametrize("mode", list(GATES))
def test_functional_cells_match_torch(mode):
    w_ih, w_hh = torch.randn(GATES[mode] * 4, 3), torch.randn(GATES[mode] * 4, 4)
    b_ih, b_hh = torch.randn(GATES[mode] * 4), torch.randn(GATES[mode] * 4)
    x, h = torch.randn(2, 3), torch.randn(2, 4)
    hx = (h, torch.randn(2, 4)) if mode == "lstm" else h
    jhx = tuple(map(J, hx)) if mode == "lstm" else J(hx)
    for biases in ((b_ih, b_hh), ()):
        theirs = getattr(torch, mode + "_cell")(x, hx, w_ih, w_hh, *biases)
        mine = getattr(jt, mode + "_cell")(J(x), jhx, J(w_ih), J(w_hh), *map(J, biases))
        if mode == "lstm":
            for a, b in zip(theirs, mine, strict=True):
                close(a, b, 1e-4)
        else:
            close(theirs, mine, 1e-4)


# -- native norms and dropout; the older norms; convolution ----------------------------------------
def test_native_norms_return_torch_tuples():
    x = torch.randn(2, 3, 4)
    w, b = torch.randn(4), torch.randn(4)
    for a, m in zip(torch.native_layer_norm(x, [4], w, b, 1e-5),
                    jt.native_layer_norm(J(x), [4], J(w), J(b), 1e-5), strict=True):
        close(a, m)
    for train in (True, False):
        rm, rv, jrm, jrv = torch.zeros(3), torch.ones(3), jt.zeros(3), jt.ones(3)
        theirs = torch.native_batch_norm(x, None, None, rm, rv, train, 0.1, 1e-5)
        mine = jt.native_batch_norm(J(x), None, None, jrm, jrv, train, 0.1, 1e-5)
        for a, m in zip((*theirs, rm, rv), (*mine, jrm, jrv), strict=True):
            close(a, m)
    for a, m in zip(torch.native_group_norm(x, None, None, 2, 3, 4, 3, 1e-5),
                    jt.native_group_norm(J(x), None, None, 2, 3, 4, 3, 1e-5), strict=True):
        close(a, m)


def test_native_dropout():
    x = jt.randn(20, 30) + 5
    out, mask = jt.native_dropout(x, 0.25, True)
    assert mask.dtype is jt.bool and 0.6 < float(mask.float().mean()) < 0.9
    np.testing.assert_allclose(out.numpy(), np.where(mask.numpy(), x.numpy() / 0.75, 0),
                               rtol=1e-6)
    out, mask = jt.native_dropout(x, 0.25, False)
    assert bool(mask.all()) and out is not x and bool((out == x).all())
    with pytest.raises(RuntimeError, match="bernoulli_ expects p"):
        jt.native_dropout(x, 1.5, True)


def test_older_norms_match_torch():
    x = torch.randn(2, 3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(torch.frobenius_norm(x, [1, 2]), jt.frobenius_norm(J(x), [1, 2]))
        close(torch.frobenius_norm(x, 1, True), jt.frobenius_norm(J(x), 1, True))
        close(torch.frobenius_norm(x, []), jt.frobenius_norm(J(x), []))
        close(torch.nuclear_norm(x), jt.nuclear_norm(J(x)), 1e-4)
        close(torch.nuclear_norm(x, [0, 2], True), jt.nuclear_norm(J(x), [0, 2], True), 1e-4)
        with pytest.raises(RuntimeError, match="at most 2 dimensions"):
            jt.frobenius_norm(J(x), [0, 1, 2])
        with pytest.raises(RuntimeError, match="2-tuple"):
            jt.nuclear_norm(J(x), [1])
    with pytest.warns(UserWarning, match="deprecated"):
        jt.frobenius_norm(J(x), [1])
    for dim in (0, 1, 2, -1):
        for p in (2, 3):
            close(torch.norm_except_dim(x, p, dim), jt.norm_except_dim(J(x), p, dim))


def test_convolution_matches_torch():
    x = torch.randn(2, 3, 5)
    w = torch.randn(2, 3, 3)
    close(torch.convolution(x, w, None, [1], [1], [1], False, [0], 1),
          jt.convolution(J(x), J(w), None, [1], [1], [1], False, [0], 1))
    wt, b = torch.randn(3, 2, 3), torch.randn(2)
    close(torch.convolution(x, wt, b, [2], [1], [1], True, [1], 1),
          jt.convolution(J(x), J(wt), J(b), [2], [1], [1], True, [1], 1))


def test_batch_norm_update_stats_matches_torch():
    x = torch.randn(4, 3, 5)
    rm, rv, jrm, jrv = torch.zeros(3), torch.ones(3), jt.zeros(3), jt.ones(3)
    theirs = torch.batch_norm_update_stats(x, rm, rv, 0.1)
    mine = jt.batch_norm_update_stats(J(x), jrm, jrv, 0.1)
    for a, m in zip((*theirs, rm, rv), (*mine, jrm, jrv), strict=True):
        close(a, m)


def test_sync_batch_norm_helpers_give_batch_norm_and_its_gradient():
    """torch runs these on CUDA only: checked against batch_norm (two 'processes' of one
    batch) and its gradient."""
    x = torch.randn(6, 3, 4, dtype=torch.float64)
    w, b = torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
    parts = [J(x[:4]), J(x[4:])]
    stats = [jt.batch_norm_stats(p, 1e-5) for p in parts]
    rm, rv = jt.zeros(3, dtype=jt.float64), jt.ones(3, dtype=jt.float64)
    mean, invstd = jt.batch_norm_gather_stats_with_counts(
        parts[0], jt.stack([s[0] for s in stats]), jt.stack([s[1] for s in stats]), rm, rv,
        0.1, 1e-5, jt.tensor([16.0, 8.0], dtype=jt.float64))
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    xr = x.clone().requires_grad_()
    expected = torch.nn.functional.batch_norm(xr, trm, trv, w, b, True, 0.1, 1e-5)
    close(trm, rm)
    close(trv, rv)
    out = jt.cat([jt.batch_norm_elemt(p, J(w), J(b), mean, invstd, 1e-5) for p in parts])
    close(expected, out, 1e-10)
    g = torch.randn_like(x)
    expected.backward(g)
    sums = [jt.batch_norm_backward_reduce(J(gp), p, mean, invstd, J(w), True, True, True)
            for gp, p in zip((g[:4], g[4:]), parts, strict=True)]
    sum_dy, sum_dy_xmu = sums[0][0] + sums[1][0], sums[0][1] + sums[1][1]
    grad = jt.cat([jt.batch_norm_backward_elemt(J(gp), p, mean, invstd, J(w), sum_dy,
                                                sum_dy_xmu, jt.tensor([16, 8], dtype=jt.int32))
                   for gp, p in zip((g[:4], g[4:]), parts, strict=True)])
    close(xr.grad, grad, 1e-10)
    none = jt.batch_norm_backward_reduce(J(g), J(x), mean, invstd, None, False, True, True)
    assert none[0].numel() == none[1].numel() == none[2].numel() == 0
    same = jt.batch_norm_gather_stats(parts[0], jt.stack([stats[0][0]] * 2),
                                      jt.stack([stats[0][1]] * 2), None, None, 0.1, 1e-5, 16)
    close(torch.tensor(stats[0][0].numpy()), same[0], 1e-10)


# -- memory formats ---------------------------------------------------------------------------
def test_channels_last_strides_match_torch():
    x = torch.randn(2, 3, 4, 5)
    jx = J(x)
    y, jy = x.contiguous(memory_format=torch.channels_last), \
        jx.contiguous(memory_format=jt.channels_last)
    assert jy.stride() == y.stride()
    assert not jy.is_contiguous() and jy.is_contiguous(memory_format=jt.channels_last)
    np.testing.assert_array_equal(jy.numpy(), x.numpy())
    assert jy.contiguous(memory_format=jt.channels_last) is jy
    assert jy.to(memory_format=jt.channels_last) is jy
    assert jx.to(memory_format=jt.channels_last).stride() == y.stride()
    assert jx.to(jt.float64, memory_format=jt.channels_last).stride() == y.stride()
    assert jx.clone(memory_format=jt.channels_last).stride() == y.stride()
    assert jy.contiguous().stride() == x.stride()
    assert jt.empty(2, 3, 4, 5, memory_format=jt.channels_last).stride() == y.stride()
    assert jt.zeros_like(jx, memory_format=jt.channels_last).stride() == y.stride()
    z = torch.randn(2, 3, 4, 5, 6)
    assert J(z).contiguous(memory_format=jt.channels_last_3d).stride() == \
        z.contiguous(memory_format=torch.channels_last_3d).stride()
    # size-1 dims are ignored, as torch's
    one = torch.randn(2, 1, 4, 5)
    assert J(one).contiguous(memory_format=jt.channels_last).stride() == \
        one.contiguous(memory_format=torch.channels_last).stride()
    t = torch.randn(3, 4).t()
    assert J(t.t()).t().to(memory_format=jt.contiguous_format).stride() == \
        t.to(memory_format=torch.contiguous_format).stride()
    for bad in (lambda m: m.randn(3, 4).contiguous(memory_format=m.channels_last),
                lambda m: m.randn(3, 4).to(memory_format=m.channels_last),
                lambda m: m.randn(3, 4, 5, 6).contiguous(memory_format=m.channels_last_3d),
                lambda m: m.empty(2, 3, memory_format=m.channels_last)):
        with pytest.raises(RuntimeError) as theirs:
            bad(torch)
        with pytest.raises(RuntimeError) as mine:
            bad(jt)
        assert str(mine.value) == str(theirs.value)
    assert not jt.randn(3, 4).is_contiguous(memory_format=jt.channels_last)
    w = jt.randn(4, 3, 3, 3)
    np.testing.assert_allclose(jt.nn.functional.conv2d(jy, w).numpy(),
                               jt.nn.functional.conv2d(jx, w).numpy(), atol=1e-5)


def test_memory_format_and_layout_types():
    assert isinstance(jt.channels_last, jt.memory_format)
    assert isinstance(jt.contiguous_format, jt.memory_format)
    assert isinstance(jt.strided, jt.layout) and not isinstance(jt.channels_last, jt.layout)
    assert jt.legacy_contiguous_format is jt.contiguous_format
    assert repr(jt.channels_last) == "jitensor.channels_last"


# -- process-wide state ----------------------------------------------------------------------------
def test_anomaly_state_follows_torch():
    try:
        for mod in (torch, jt):
            assert not mod.is_anomaly_enabled() and mod.is_anomaly_check_nan_enabled()
            assert mod.set_anomaly_enabled(True) is None
            assert mod.is_anomaly_enabled()
            mod.set_anomaly_enabled(False, False)
            assert not mod.is_anomaly_enabled() and not mod.is_anomaly_check_nan_enabled()
        jt.set_anomaly_enabled(True)
        x = jt.tensor([0.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="nan"):
            (x / x).sum().backward()
    finally:
        torch.set_anomaly_enabled(False)
        jt.set_anomaly_enabled(False)
    assert jt.autograd.detect_anomaly is not None and not jt.is_anomaly_enabled()


def test_autocast_state_follows_torch():
    for mod in (torch, jt):
        assert mod.get_autocast_dtype("cpu") is mod.bfloat16
        assert mod.get_autocast_dtype("cuda") is mod.float16
        assert not mod.is_autocast_enabled() and not mod.is_autocast_enabled("cpu")
        assert mod.is_autocast_cache_enabled()
        with mod.autocast("cpu", dtype=mod.float16, enabled=False, cache_enabled=False):
            assert mod.get_autocast_dtype("cpu") is mod.float16
            assert not mod.is_autocast_cache_enabled()
        assert mod.get_autocast_dtype("cpu") is mod.bfloat16 and mod.is_autocast_cache_enabled()
        mod.set_autocast_dtype("cpu", mod.float16)
        with pytest.warns(DeprecationWarning):
            assert mod.get_autocast_cpu_dtype() is mod.float16
        mod.set_autocast_dtype("cpu", mod.bfloat16)
        mod.set_autocast_cache_enabled(False)
        assert not mod.is_autocast_cache_enabled()
        mod.set_autocast_cache_enabled(True)
        mod.set_autocast_enabled("cpu", False)
        assert mod.clear_autocast_cache() is None
        with pytest.raises(TypeError):
            mod.set_autocast_enabled("cpu", 1)
        with pytest.raises(TypeError):
            mod.set_autocast_dtype("cpu", 3)
        mod.set_autocast_enabled("cpu", True)
        try:
            assert mod.is_autocast_enabled("cpu") and not mod.is_autocast_enabled()
        finally:
            mod.set_autocast_enabled("cpu", False)
        assert not mod.is_autocast_enabled("cpu")


def test_autograd_switches_follow_torch():
    for mod in (torch.autograd, jt.autograd):
        assert mod.is_multithreading_enabled() and not mod.is_view_replay_enabled()
        with mod.set_multithreading_enabled(False):
            assert not mod.is_multithreading_enabled()
        assert mod.is_multithreading_enabled()
    assert issubclass(jt.OutOfMemoryError, RuntimeError)
    assert jt.OutOfMemoryError is jt.cuda.OutOfMemoryError


# -- creation ------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:torch.range is deprecated")
def test_range_is_end_inclusive_as_torch():
    for args, kw in [((1, 4), {}), ((0, 1, 0.25), {}), ((1, 4), {"dtype": "int64"}),
                     ((4, 1, -1), {}), ((1, 1), {})]:
        theirs = torch.range(*args, **{k: getattr(torch, v) for k, v in kw.items()})
        mine = jt.range(*args, **{k: getattr(jt, v) for k, v in kw.items()})
        assert mine.dtype.name == str(theirs.dtype).split(".")[1]
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    for args in ((1, 4, 0), (4, 1)):
        with pytest.raises(RuntimeError):
            jt.range(*args)
    with pytest.raises(TypeError):
        jt.range(3)  # (torch's end has no default either)
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        jt.range(1, 2)


def test_asarray_shares_where_torch_does():
    a = np.arange(3.0)
    t = jt.asarray(a)
    a[0] = 9
    assert t[0].item() == 9 and t.dtype is jt.float64
    assert jt.asarray(t) is t and jt.asarray(t, copy=True) is not t
    assert jt.asarray(t, dtype=jt.float32).dtype is jt.float32
    assert jt.asarray([1, 2.0]).dtype is jt.float32 and jt.asarray(3).shape == ()
    assert jt.asarray(np.float32(2)).dtype is jt.float32
    for call in (lambda m: m.asarray(m.asarray(a), dtype=m.float32, copy=False),
                 lambda m: m.asarray([1, 2], copy=False),
                 lambda m: m.asarray(a, dtype=m.float32, copy=False),
                 lambda m: m.asarray(b"abc")):
        with pytest.raises(ValueError):
            call(torch)
        with pytest.raises(ValueError):
            call(jt)
    assert jt.asarray(t, requires_grad=True).requires_grad and not t.requires_grad


def test_frombuffer_matches_torch():
    b = bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00")
    x = jt.frombuffer(b, dtype=jt.int32)
    np.testing.assert_array_equal(x.numpy(), torch.frombuffer(b, dtype=torch.int32).numpy())
    assert jt.frombuffer(b, dtype=jt.int32, count=1, offset=4).tolist() == [2]
    x[0] = 7
    assert b[0] == 7  # shares the buffer
    np.testing.assert_array_equal(jt.frombuffer(array.array("f", [1, 2, 3]),
                                                dtype=jt.float32).numpy(), [1, 2, 3])
    for kw in ({"dtype": "int32", "buffer": b""}, {"dtype": "int32", "offset": 9},
               {"dtype": "int32", "count": 3}, {"dtype": "int64", "offset": 1}):
        kw = dict(kw)
        buf = kw.pop("buffer", b)
        with pytest.raises(ValueError) as theirs:
            torch.frombuffer(buf, **{k: getattr(torch, v) if k == "dtype" else v
                                     for k, v in kw.items()})
        with pytest.raises(ValueError) as mine:
            jt.frombuffer(buf, **{k: getattr(jt, v) if k == "dtype" else v
                                  for k, v in kw.items()})
        assert str(mine.value) == str(theirs.value)


def test_empty_permuted_and_fill_match_torch():
    assert jt.empty_permuted((2, 3, 4, 5), (0, 2, 3, 1)).stride() == \
        torch.empty_permuted((2, 3, 4, 5), (0, 2, 3, 1)).stride()
    for layout in ((0, 0), (0,)):
        with pytest.raises(RuntimeError):
            jt.empty_permuted((2, 3), layout)
    x = torch.randn(2, 3)
    close(torch.fill(x, 2.0), jt.fill(J(x), 2.0))
    close(torch.fill(x, torch.tensor(3.0)), jt.fill(J(x), jt.tensor(3.0)))
    with pytest.raises(RuntimeError, match="0-dimension"):
        jt.fill(J(x), jt.tensor([3.0, 4.0]))
    v = jt.tensor(3.0, requires_grad=True)
    jt.fill(J(x), v).sum().backward()
    assert v.grad.item() == 6


# -- Tensor methods -------------------------------------------------------------------------------
def test_conj_neg_queries_and_small_methods():
    x = jt.randn(2, 3)
    assert not x.is_conj() and not x.is_neg() and not jt.is_conj(x) and not jt.is_neg(x)
    assert x.resolve_conj() is x and jt.resolve_neg(x) is x and not jt.is_inference(x)
    assert x.const_data_ptr() == x.data_ptr()
    a, ta = jt.randn(4, requires_grad=True), torch.randn(4, requires_grad=True)
    assert a.chunk(2)[1].output_nr == ta.chunk(2)[1].output_nr == 1
    assert (a * 2).output_nr == 0 and a.output_nr == 0
    for make in (lambda m: m.randn(2, 3, 4), lambda m: m.randn(2, 3, 4).permute(2, 0, 1),
                 lambda m: m.randn(2, 3, 4, 5).contiguous(memory_format=m.channels_last)):
        assert make(jt).dim_order() == make(torch).dim_order()
    t = torch.randn(2, 3)
    close(t.hardshrink(0.3), J(t).hardshrink(0.3))
    close(t.prelu(torch.tensor([0.25])), J(t).prelu(jt.tensor([0.25])))
    i, ti = jt.tensor([1, 2, 3]), torch.tensor([1, 2, 3])
    i.bitwise_left_shift_(1).bitwise_right_shift_(jt.tensor([1, 1, 2]))
    ti.bitwise_left_shift_(1).bitwise_right_shift_(torch.tensor([1, 1, 2]))
    assert i.tolist() == ti.tolist()


def test_resize_set_and_is_set_to():
    x = jt.randn(2, 3)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        y = x.resize(3, 2)
    assert y.shape == (3, 2) and y.data_ptr() == x.data_ptr()
    with pytest.raises(RuntimeError) as mine, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x.resize(4)
    with pytest.raises(RuntimeError) as theirs, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.randn(2, 3).resize(4)
    assert str(mine.value) == str(theirs.value)
    with pytest.warns(UserWarning, match="resize_as"):
        assert x.resize_as(jt.empty(6)).shape == (6,)
    s, ts = jt.arange(6.0), torch.arange(6.0)
    t, tt = jt.empty(0), torch.empty(0)
    t.set_(s)
    tt.set_(ts)
    assert t.is_set_to(s) and tt.is_set_to(ts) and not t.is_set_to(s[1:])
    s[0] = 5
    assert t[0].item() == 5
    t.set_(s, 1, (2, 2), (2, 1))
    tt.set_(ts.untyped_storage(), 1, (2, 2), (2, 1))
    ts[0] = 5
    np.testing.assert_array_equal(t.numpy(), tt.numpy())
    assert t.set_().shape == tt.set_().shape == (0,)
    with pytest.raises(RuntimeError):
        jt.empty(0).set_(jt.arange(3))  # another dtype


def test_apply_map_map2_match_torch():
    for mod in (torch, jt):
        z = mod.arange(6.0).reshape(2, 3)
        z.apply_(lambda v: v * v)
        z.map_(mod.tensor([1.0, 2, 3]), lambda a, b: a + b)
        z.map2_(mod.ones(2, 3), mod.tensor([10.0, 20, 30]), lambda a, b, c: a + b + c)
        if mod is torch:
            expected = z.numpy()
        else:
            np.testing.assert_array_equal(z.numpy(), expected)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        jt.ones(2, requires_grad=True).apply_(lambda v: v)


def test_as_subclass_keeps_the_graph():
    class Sub(jt.Tensor):
        pass

    a = jt.randn(3, requires_grad=True)
    q = a.as_subclass(Sub)
    assert isinstance(q, Sub) and q.data_ptr() == a.data_ptr()
    (q * 2).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [2, 2, 2])
    with pytest.raises(TypeError):
        a.as_subclass(int)

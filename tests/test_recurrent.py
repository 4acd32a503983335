"""nn.RNN / LSTM / GRU, their cells, and the Transformer decoder and full model, against torch
(skipped where it is not installed): torch's module is built with a seed, its state dict copied
into jitensor's, and outputs, final states, and the gradients of the inputs, initial states and
every parameter compared in float64 -- layers 1-2, bidirectional, batch_first, unbatched,
proj_size, relu RNN, no bias, cells with and without a state. Also state-dict keys and order,
repr, init, dropout between layers, errors (type and message as torch's) and one CUDA test."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitensor as jt
from jitensor import nn
from jitensor.nn import functional as F

torch = pytest.importorskip("torch")

needs_cuda = pytest.mark.skipif(not jt.cuda.is_available(),
                                reason="no CUDA: numba-cuda is not installed")

TOL = dict(rtol=1e-9, atol=1e-11)


def twins(name, *args, seed=0, **kwargs):
    """(jitensor module, torch module) of class `name`, float64, torch's weights copied into
    jitensor's after checking that the state dicts have the same keys, order and shapes.
    activation="callable" passes each library's functional gelu."""
    torch.manual_seed(seed)
    mine_kwargs = dict(kwargs)
    if kwargs.get("activation") == "callable":
        kwargs["activation"], mine_kwargs["activation"] = torch.nn.functional.gelu, F.gelu
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    mine = getattr(nn, name)(*args, **mine_kwargs).double()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for (k, a), b in zip(mine.state_dict().items(), theirs.state_dict().values(), strict=False):
        assert tuple(a.shape) == tuple(b.shape), k
    mine.load_state_dict({k: jt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return mine, theirs


def pair(array):
    """The same float64 data as a jitensor and a torch leaf that require grad."""
    return jt.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def flat(result):
    """The tensors of a (output, h) / (output, (h, c)) / (h, c) / h result, in order."""
    if isinstance(result, tuple):
        return [t for part in result for t in flat(part)]
    return [result]


def check_against_torch(rng, mine_out, theirs_out, leaves):
    """Same values, dtypes and shapes; then one random upstream gradient for every output
    tensor and the same gradients of every (jitensor, torch) leaf pair."""
    a, b = flat(mine_out), flat(theirs_out)
    assert len(a) == len(b)
    loss_a, loss_b = 0, 0
    for x, y in zip(a, b, strict=False):
        assert tuple(x.shape) == tuple(y.shape) and x.dtype is jt.float64
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), **TOL)
        g = rng.standard_normal(tuple(y.shape))
        loss_a, loss_b = loss_a + (x * jt.tensor(g)).sum(), loss_b + (y * torch.tensor(g)).sum()
    loss_a.backward()
    loss_b.backward()
    for x, y in leaves:
        assert x.grad is not None and x.grad.dtype is x.dtype
        assert tuple(x.grad.shape) == tuple(y.grad.shape)
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), **TOL)


def parameter_pairs(mine, theirs):
    return list(zip(mine.parameters(), theirs.parameters(), strict=False))


# -- RNN, LSTM, GRU ----------------------------------------------------------------------------
LAYER_CASES = [
    ("LSTM", {}), ("LSTM", dict(num_layers=2)), ("LSTM", dict(bidirectional=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict(proj_size=2)), ("LSTM", dict(proj_size=3, num_layers=2, bidirectional=True)),
    ("LSTM", dict(bias=False, num_layers=2)),
    ("GRU", {}), ("GRU", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(batch_first=True, bias=False)),
    ("RNN", {}), ("RNN", dict(nonlinearity="relu", num_layers=2)),
    ("RNN", dict(bidirectional=True, batch_first=True, nonlinearity="relu")),
]


@pytest.mark.parametrize("state", ["none", "given"])
@pytest.mark.parametrize("unbatched", [False, True])
@pytest.mark.parametrize("name, options", LAYER_CASES)
def test_layers_match_torch(name, options, unbatched, state):
    rng = np.random.default_rng(len(name) + len(options))
    mine, theirs = twins(name, 3, 5, **options)
    seq, batch = 4, 3
    shape = (seq, 3) if unbatched else (batch, seq, 3) if options.get("batch_first") else \
        (seq, batch, 3)
    x, tx = pair(rng.standard_normal(shape))
    leaves = [(x, tx)] + parameter_pairs(mine, theirs)
    args, targs = (x,), (tx,)
    if state == "given":
        states = theirs.num_layers * (2 if theirs.bidirectional else 1)
        widths = (theirs.proj_size or 5, 5) if name == "LSTM" else (5,)
        made = [pair(rng.standard_normal((states, width) if unbatched else
                                         (states, batch, width))) for width in widths]
        leaves += made
        if name == "LSTM":
            args, targs = (x, tuple(m[0] for m in made)), (tx, tuple(m[1] for m in made))
        else:
            args, targs = (x, made[0][0]), (tx, made[0][1])
    check_against_torch(rng, mine(*args), theirs(*targs), leaves)


@settings(max_examples=12, deadline=None)
@given(name=st.sampled_from(["LSTM", "GRU", "RNN"]), layers=st.integers(1, 2),
       bidirectional=st.booleans(), batch_first=st.booleans(), seq=st.integers(1, 5),
       batch=st.integers(1, 3), hidden=st.integers(2, 6), features=st.integers(1, 4))
def test_layers_match_torch_over_shapes(name, layers, bidirectional, batch_first, seq, batch,
                                        hidden, features):
    rng = np.random.default_rng(seq * 7 + batch)
    mine, theirs = twins(name, features, hidden, layers, batch_first=batch_first,
                         bidirectional=bidirectional)
    shape = (batch, seq, features) if batch_first else (seq, batch, features)
    x, tx = pair(rng.standard_normal(shape))
    check_against_torch(rng, mine(x), theirs(tx), [(x, tx)] + parameter_pairs(mine, theirs))


def test_repr_names_all_weights_and_flatten_parameters():
    for name, options in LAYER_CASES + [("LSTM", dict(dropout=0.5, num_layers=2))]:
        mine, theirs = twins(name, 3, 5, **options)
        assert repr(mine) == repr(theirs)
        assert mine._flat_weights_names == theirs._flat_weights_names
        assert mine._all_weights == theirs._all_weights
        assert [[tuple(p.shape) for p in ps] for ps in mine.all_weights] == \
            [[tuple(p.shape) for p in ps] for ps in theirs.all_weights]
        assert all(a is b for a, b in zip(mine._flat_weights, mine.parameters(), strict=False))
        assert mine.flatten_parameters() is None
    assert repr(nn.RNN(3, 4, nonlinearity="relu")) == "RNN(3, 4)"  # (torch's omits it too)


def test_init_is_uniform_within_one_over_sqrt_hidden_and_seeded():
    jt.manual_seed(3)
    m = nn.LSTM(3, 16, 2, bidirectional=True, proj_size=4, dtype=jt.float64)
    bound = 1 / math.sqrt(16)
    values = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert all(p.dtype is jt.float64 and p.requires_grad for p in m.parameters())
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.9 * bound
    assert abs(values.mean()) < 0.01 and len(np.unique(values)) == len(values)
    jt.manual_seed(3)
    again = nn.LSTM(3, 16, 2, bidirectional=True, proj_size=4, dtype=jt.float64)
    assert all(np.array_equal(a.detach().numpy(), b.detach().numpy())
               for a, b in zip(m.parameters(), again.parameters(), strict=False))
    cell = nn.GRUCell(2, 9)
    assert np.abs(cell.weight_hh.detach().numpy()).max() <= 1 / 3


def test_dropout_only_between_layers_and_only_in_training():
    rng = np.random.default_rng(5)
    x = jt.tensor(rng.standard_normal((4, 2, 3)))
    m = nn.LSTM(3, 5, 2, dropout=1.0).double()
    m.eval()
    out_eval, (h_eval, c_eval) = m(x)
    m.train()
    out, (h, c) = m(x)  # p = 1: the second layer sees zeros
    # the first layer is untouched: its final state is eval mode's
    np.testing.assert_allclose(h[0].detach().numpy(), h_eval[0].detach().numpy(), **TOL)
    np.testing.assert_allclose(c[0].detach().numpy(), c_eval[0].detach().numpy(), **TOL)
    # the second layer alone on zero input, with its own weights
    second = nn.LSTM(5, 5).double()
    second.load_state_dict({k.replace("l1", "l0"): v for k, v in m.state_dict().items()
                            if k.endswith("l1")})
    want, _ = second(jt.zeros(4, 2, 5, dtype=jt.float64))
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), **TOL)
    assert not np.allclose(out.detach().numpy(), out_eval.detach().numpy())
    # the output of the last layer is never dropped: p = 0.5 in training keeps no zeros there
    half = nn.GRU(3, 5, 2, dropout=0.5).double()
    assert (half(x)[0].detach().numpy() != 0).all()
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.RNN(3, 4, dropout=0.2)


def test_empty_batch_and_float32():
    mine, theirs = twins("GRU", 3, 4, 2)
    out, h = mine(jt.zeros(3, 0, 3, dtype=jt.float64))
    assert tuple(out.shape) == (3, 0, 4) and tuple(h.shape) == (2, 0, 4)
    jt.manual_seed(0)
    m32 = nn.LSTM(3, 4)
    out, (h, c) = m32(jt.randn(2, 3))
    assert out.dtype is h.dtype is c.dtype is jt.float32
    assert tuple(out.shape) == (2, 4) and tuple(h.shape) == tuple(c.shape) == (1, 4)


def assert_same_error(mine_fn, theirs_fn):
    """Both raise the same exception type, with torch's message (torch. -> jitensor.)."""
    with pytest.raises(Exception) as theirs:
        theirs_fn()
    with pytest.raises(type(theirs.value)) as mine:
        mine_fn()
    assert str(mine.value) == str(theirs.value).replace("torch.", "jitensor."), \
        (str(mine.value), str(theirs.value))


def test_layer_errors_match_torch():
    mine, theirs = twins("LSTM", 3, 4)
    gru, tgru = twins("GRU", 3, 4)
    rnn, trnn = twins("RNN", 3, 4)

    def both(module, tmodule, *shapes, dtype="float64"):
        a = [jt.zeros(*s, dtype=getattr(jt, dtype)) for s in shapes]
        b = [torch.zeros(*s, dtype=getattr(torch, dtype)) for s in shapes]
        if module is mine and len(shapes) == 3:
            return (lambda: module(a[0], (a[1], a[2]))), (lambda: tmodule(b[0], (b[1], b[2])))
        return (lambda: module(*a)), (lambda: tmodule(*b))
    for shapes in [((5, 2, 3), (1, 3, 4), (1, 2, 4)), ((5, 2, 3), (1, 2, 4), (1, 2, 5)),
                   ((5, 2, 3), (2, 4), (1, 2, 4)), ((5, 3), (1, 2, 4), (1, 2, 4)),
                   ((5, 2, 4),), ((5, 2, 3, 1),), ((0, 2, 3),)]:
        assert_same_error(*both(mine, theirs, *shapes))
    assert_same_error(*both(mine, theirs, (5, 2, 3), dtype="float32"))
    for module, tmodule in ((gru, tgru), (rnn, trnn)):
        for shapes in [((5, 2, 3), (1, 3, 4)), ((5, 3), (1, 2, 4)), ((5, 2, 3), (2, 4)),
                       ((5, 2), (1, 4)), ((5, 2, 3, 1),)]:
            assert_same_error(*both(module, tmodule, *shapes))
    for args, kwargs in [((3, 4), dict(nonlinearity="x")), ((3, 4), dict(proj_size=2)),
                         ((3, 4), dict(dropout=2)), ((3, 4), dict(dropout=True)),
                         ((3, 0), {}), ((3, 4, 0), {}), ((3, 4), dict(bias=1))]:
        assert_same_error(lambda args=args, kwargs=kwargs: nn.RNN(*args, **kwargs),
                          lambda args=args, kwargs=kwargs: torch.nn.RNN(*args, **kwargs))
    for kwargs in [dict(proj_size=4), dict(proj_size=-1)]:
        assert_same_error(lambda kwargs=kwargs: nn.LSTM(3, 4, **kwargs),
                          lambda kwargs=kwargs: torch.nn.LSTM(3, 4, **kwargs))
    assert_same_error(lambda: nn.GRU(3, 4, proj_size=2), lambda: torch.nn.GRU(3, 4, proj_size=2))
    with pytest.raises(TypeError, match="or a PackedSequence, got ndarray"):
        mine(np.zeros((5, 2, 3)))
    with pytest.raises(TypeError, match="unexpected keyword argument 'hidden'"):
        nn.GRU(3, 4, hidden=2)


# -- cells -------------------------------------------------------------------------------------
CELL_CASES = [("RNNCell", {}), ("RNNCell", dict(nonlinearity="relu")),
              ("RNNCell", dict(bias=False)), ("LSTMCell", {}), ("LSTMCell", dict(bias=False)),
              ("GRUCell", {}), ("GRUCell", dict(bias=False))]


@pytest.mark.parametrize("state", ["none", "given"])
@pytest.mark.parametrize("unbatched", [False, True])
@pytest.mark.parametrize("name, options", CELL_CASES)
def test_cells_match_torch(name, options, unbatched, state):
    rng = np.random.default_rng(len(name))
    mine, theirs = twins(name, 3, 5, **options)
    assert repr(mine) == repr(theirs)
    x, tx = pair(rng.standard_normal((3,) if unbatched else (2, 3)))
    leaves = [(x, tx)] + parameter_pairs(mine, theirs)
    args, targs = (x,), (tx,)
    if state == "given":
        made = [pair(rng.standard_normal((5,) if unbatched else (2, 5)))
                for _ in range(2 if name == "LSTMCell" else 1)]
        leaves += made
        if name == "LSTMCell":
            args, targs = (x, tuple(m[0] for m in made)), (tx, tuple(m[1] for m in made))
        else:
            args, targs = (x, made[0][0]), (tx, made[0][1])
    check_against_torch(rng, mine(*args), theirs(*targs), leaves)


def test_cell_errors_match_torch():
    lstm, tlstm = twins("LSTMCell", 3, 4)
    gru, tgru = twins("GRUCell", 3, 4)

    def z(shape):
        return jt.zeros(*shape, dtype=jt.float64), torch.zeros(*shape, dtype=torch.float64)
    for x, h, c in [((2, 4), None, None), ((2, 3), (3, 4), (2, 4)), ((2, 3), (2, 4), (2, 5)),
                    ((3,), (2, 4), (2, 4)), ((2, 3, 3), None, None), ((2, 3), (2, 4, 1), (2, 4))]:
        a, b = z(x)
        if h is None:
            assert_same_error(lambda a=a: lstm(a), lambda b=b: tlstm(b))
        else:
            (h1, h2), (c1, c2) = z(h), z(c)
            assert_same_error(lambda a=a, h1=h1, c1=c1: lstm(a, (h1, c1)),
                              lambda b=b, h2=h2, c2=c2: tlstm(b, (h2, c2)))
    for x, h in [((2, 3), (2, 5)), ((2, 3), (3, 4)), ((2, 3, 1), (2, 4)), ((2, 3), (1, 2, 4))]:
        (a, b), (h1, h2) = z(x), z(h)
        assert_same_error(lambda a=a, h1=h1: gru(a, h1), lambda b=b, h2=h2: tgru(b, h2))
    (a, b) = z((2, 3))
    with pytest.raises(RuntimeError, match="same dtype"):  # torch: mat1 and mat2 ... dtype
        tgru(b.float())
    with pytest.raises(RuntimeError, match="same dtype"):
        gru(a.float())
    assert_same_error(lambda: nn.RNNCell(3, 4, nonlinearity="x")(jt.zeros(2, 3)),
                      lambda: torch.nn.RNNCell(3, 4, nonlinearity="x")(torch.zeros(2, 3)))


def test_cell_steps_compose_to_the_layer():
    """An LSTMCell stepped over a sequence gives LSTM's output (same weights)."""
    rng = np.random.default_rng(9)
    layer, cell = nn.LSTM(3, 4).double(), nn.LSTMCell(3, 4).double()
    cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
    x = jt.tensor(rng.standard_normal((5, 2, 3)))
    out, (h, c) = layer(x)
    state = None
    for t in range(5):
        state = cell(x[t], state)
        np.testing.assert_allclose(state[0].detach().numpy(), out[t].detach().numpy(), **TOL)
    np.testing.assert_allclose(state[1].detach().numpy(), c[0].detach().numpy(), **TOL)


# -- Transformer decoder and model -----------------------------------------------------------
DECODER_OPTIONS = [dict(), dict(norm_first=True, activation="gelu", batch_first=True),
                   dict(bias=False, activation="callable")]


def masks(tgt_len, src_len, batch, kind):
    """Causal target mask, a memory mask and padding masks, as NumPy arrays."""
    rng = np.random.default_rng(4)
    tgt_pad = np.zeros((batch, tgt_len), bool)
    tgt_pad[0, -1] = True
    mem_pad = np.zeros((batch, src_len), bool)
    mem_pad[-1, :2] = True
    causal = np.triu(np.ones((tgt_len, tgt_len), bool), 1)
    if kind == "bool":
        return dict(tgt_mask=causal, memory_mask=np.zeros((tgt_len, src_len), bool),
                    tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=mem_pad)
    return dict(tgt_mask=np.where(causal, -np.inf, 0.0),
                memory_mask=rng.standard_normal((tgt_len, src_len)))


def as_both(kw):
    return ({k: jt.tensor(v) for k, v in kw.items()},
            {k: torch.tensor(v) for k, v in kw.items()})


@pytest.mark.parametrize("kind", ["none", "bool", "float"])
@pytest.mark.parametrize("options", DECODER_OPTIONS)
def test_decoder_layer_and_stack_match_torch(options, kind):
    rng = np.random.default_rng(6)
    mine_layer, theirs_layer = twins("TransformerDecoderLayer", 8, 2, 12, dropout=0.0,
                                     **options)
    assert repr(mine_layer) == repr(theirs_layer).replace("torch.", "jitensor.")
    first = options.get("batch_first", False)
    tgt = rng.standard_normal((3, 4, 8) if first else (4, 3, 8))
    mem = rng.standard_normal((3, 5, 8) if first else (5, 3, 8))
    kw, tkw = as_both({} if kind == "none" else masks(4, 5, 3, kind))
    (a, ta), (m, tm) = pair(tgt), pair(mem)
    check_against_torch(rng, mine_layer(a, m, **kw), theirs_layer(ta, tm, **tkw),
                        [(a, ta), (m, tm)] + parameter_pairs(mine_layer, theirs_layer))
    theirs = torch.nn.TransformerDecoder(theirs_layer, 2, norm=torch.nn.LayerNorm(8)).double()
    mine = nn.TransformerDecoder(mine_layer, 2, norm=nn.LayerNorm(8)).double()
    assert repr(mine) == repr(theirs).replace("torch.", "jitensor.")
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({k: jt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    assert mine.layers[0] is not mine.layers[1]
    (a, ta), (m, tm) = pair(tgt), pair(mem)
    check_against_torch(rng, mine(a, m, **kw), theirs(ta, tm, **tkw),
                        [(a, ta), (m, tm)] + parameter_pairs(mine, theirs))


@pytest.mark.parametrize("options", [dict(), dict(batch_first=True, norm_first=True),
                                     dict(activation="gelu", bias=False)])
def test_transformer_matches_torch(options):
    rng = np.random.default_rng(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note on nested tensors
        mine, theirs = twins("Transformer", 8, 2, 2, 1, 12, dropout=0.0, **options)
    assert repr(mine) == repr(theirs).replace("torch.", "jitensor.")
    mine.eval()
    theirs.eval()
    first = options.get("batch_first", False)
    src = rng.standard_normal((2, 5, 8) if first else (5, 2, 8))
    tgt = rng.standard_normal((2, 4, 8) if first else (4, 2, 8))
    for kind in ("none", "bool", "float"):
        kw, tkw = as_both({} if kind == "none" else masks(4, 5, 2, kind))
        if kind == "bool":
            pad = np.zeros((2, 5), bool)
            pad[1, 3:] = True
            kw["src_key_padding_mask"], tkw["src_key_padding_mask"] = jt.tensor(pad), \
                torch.tensor(pad)
        mine.zero_grad()
        theirs.zero_grad()
        (a, ta), (b, tb) = pair(src), pair(tgt)
        check_against_torch(rng, mine(a, b, **kw), theirs(ta, tb, **tkw),
                            [(a, ta), (b, tb)] + parameter_pairs(mine, theirs))
    # unbatched
    a, ta = pair(src[0] if first else src[:, 0])
    b, tb = pair(tgt[0] if first else tgt[:, 0])
    mine.zero_grad()
    theirs.zero_grad()
    check_against_torch(rng, mine(a, b), theirs(ta, tb), [(a, ta), (b, tb)])


def test_transformer_init_masks_custom_parts_and_errors():
    jt.manual_seed(0)
    m = nn.Transformer(8, 2, 1, 1, 12)
    w = m.decoder.layers[0].linear1.weight.detach().numpy()
    assert np.abs(w).max() <= math.sqrt(6 / (8 + 12))  # xavier_uniform_ for every matrix
    assert np.abs(m.encoder.norm.weight.detach().numpy() - 1).max() == 0  # 1-D: untouched
    for size, kw in ((3, {}), (1, dict(dtype=jt.float64)), (0, {})):
        mask = nn.Transformer.generate_square_subsequent_mask(size, **kw)
        want = torch.nn.Transformer.generate_square_subsequent_mask(
            size, **({k: torch.float64 for k in kw}))
        assert mask.dtype is kw.get("dtype", jt.float32)
        np.testing.assert_array_equal(mask.numpy(), want.numpy())
    # custom parts are used as given
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 12), 1)
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 12), 1)
    custom = nn.Transformer(8, 2, custom_encoder=enc, custom_decoder=dec)
    assert custom.encoder is enc and custom.decoder is dec
    layer = nn.TransformerDecoderLayer(8, 2, 12, activation=nn.GELU())
    assert "(activation): GELU(approximate='none')" in repr(layer)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerDecoderLayer(8, 2, activation="tanh")
    x, y = jt.zeros(5, 2, 8), jt.zeros(4, 3, 8)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        m(x, y)
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal"):
        m(x, jt.zeros(4, 2, 6))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, jt.zeros(4, 2, 8), tgt_is_causal=True)
    causal = nn.Transformer.generate_square_subsequent_mask(4)
    m.eval()
    hinted = m(x + 1, jt.ones(4, 2, 8), tgt_mask=causal, tgt_is_causal=True)
    plain = m(x + 1, jt.ones(4, 2, 8), tgt_mask=causal)
    np.testing.assert_array_equal(hinted.detach().numpy(), plain.detach().numpy())


# -- CUDA --------------------------------------------------------------------------------------
@needs_cuda
def test_lstm_and_decoder_layer_on_cuda():
    rng = np.random.default_rng(8)
    jt.manual_seed(0)
    cpu = nn.LSTM(2, 2, bidirectional=True).double()
    gpu = nn.LSTM(2, 2, bidirectional=True, device="cuda", dtype=jt.float64)
    gpu.load_state_dict(cpu.state_dict())
    data = rng.standard_normal((2, 1, 2))
    x = jt.tensor(data, requires_grad=True)
    xc = jt.tensor(data, device="cuda", requires_grad=True)
    out, (h, c) = cpu(x)
    out_c, (h_c, c_c) = gpu(xc)
    assert out_c.device.type == "cuda" and h_c.device.type == "cuda"
    for a, b in ((out, out_c), (h, h_c), (c, c_c)):
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), **TOL)
    (out.sum() + c.sum()).backward()
    (out_c.sum() + c_c.sum()).backward()
    np.testing.assert_allclose(xc.grad.cpu().numpy(), x.grad.numpy(), **TOL)
    for p, q in zip(cpu.parameters(), gpu.parameters(), strict=False):
        assert q.grad.device.type == "cuda"
        np.testing.assert_allclose(q.grad.cpu().numpy(), p.grad.numpy(), **TOL)
    layer = nn.TransformerDecoderLayer(4, 2, 4, dropout=0.0).double()
    layer_c = nn.TransformerDecoderLayer(4, 2, 4, dropout=0.0, device="cuda",
                                         dtype=jt.float64)
    layer_c.load_state_dict(layer.state_dict())
    tgt, mem = rng.standard_normal((2, 1, 4)), rng.standard_normal((3, 1, 4))
    mask = nn.Transformer.generate_square_subsequent_mask(2, dtype=jt.float64)
    want = layer(jt.tensor(tgt), jt.tensor(mem), tgt_mask=mask)
    got = layer_c(jt.tensor(tgt, device="cuda"), jt.tensor(mem, device="cuda"),
                  tgt_mask=mask.to("cuda"))
    assert got.device.type == "cuda"
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), **TOL)


# -- the fused recurrence (ops/recurrent.py) --------------------------------------------------
FUSED_CASES = [("LSTM", {}), ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
               ("LSTM", dict(proj_size=2, num_layers=2, bidirectional=True)),
               ("GRU", dict(num_layers=2, bidirectional=True)), ("GRU", dict(bias=False)),
               ("RNN", dict(num_layers=2, bidirectional=True)),
               ("RNN", dict(nonlinearity="relu", batch_first=True))]


def _layer_nodes(output):
    """The names of the nodes of output's graph."""
    seen, stack, names = set(), [output.grad_fn], []
    while stack:
        node = stack.pop()
        if not hasattr(node, "next_functions") or id(node) in seen:  # (None, or a leaf)
            continue
        seen.add(id(node))
        names.append(node.name())
        stack.extend(n for n, _ in node.next_functions)
    return names


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("name, options", FUSED_CASES)
def test_fused_layers_match_torch_with_states_and_packing(name, options, packed):
    """Outputs, h_n/c_n and every gradient (input, h0/c0, weights, biases) against torch, with
    given initial states, padded or packed input (lengths 5, 3, 2: the batch shrinks); one
    recorded recurrence per layer and direction, where the composed path recorded ~10 ops a
    step."""
    rng = np.random.default_rng(len(options) + packed)
    mine, theirs = twins(name, 3, 4, **options)
    first, lengths = options.get("batch_first", False), [5, 3, 2]
    shape = (3, 5, 3) if first else (5, 3, 3)
    x, tx = pair(rng.standard_normal(shape))
    states = theirs.num_layers * (2 if theirs.bidirectional else 1)
    widths = (theirs.proj_size or 4, 4) if name == "LSTM" else (4,)
    made = [pair(rng.standard_normal((states, 3, w))) for w in widths]
    hx, thx = (tuple(m[0] for m in made), tuple(m[1] for m in made)) if name == "LSTM" else \
        made[0]
    if packed:
        pack, tpack = nn.utils.rnn.pack_padded_sequence, torch.nn.utils.rnn.pack_padded_sequence
        out, state = mine(pack(x, lengths, batch_first=first), hx)
        tout, tstate = theirs(tpack(tx, lengths, batch_first=first), thx)
        mine_out, theirs_out = (out.data, state), (tout.data, tstate)
    else:
        mine_out, theirs_out = mine(x, hx), theirs(tx, thx)
    assert _layer_nodes(mine_out[0]).count("RecurrenceBackward0") == states
    check_against_torch(rng, mine_out, theirs_out,
                        [(x, tx)] + made + parameter_pairs(mine, theirs))


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_fused_float32_matches_torch(name):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(6, 8, 2, bidirectional=True)
    mine = getattr(nn, name)(6, 8, 2, bidirectional=True)
    mine.load_state_dict({k: jt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    data = np.random.default_rng(1).standard_normal((7, 3, 6)).astype(np.float32)
    x, tx = jt.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    out, tout = mine(x)[0], theirs(tx)[0]
    assert out.dtype is jt.float32
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    for a, b in [(x, tx)] + parameter_pairs(mine, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


def _run_all(make, x_data):
    """The output, final states and every gradient of one forward and backward, as arrays."""
    mine = make()
    x = jt.tensor(x_data, requires_grad=True)
    out, state = mine(x)
    (out.sum() + sum(s.sum() for s in (state if isinstance(state, tuple) else (state,)))) \
        .backward()
    return [out.detach().numpy(), x.grad.numpy()] + [p.grad.numpy() for p in mine.parameters()]


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_fused_same_bits_at_one_and_two_threads(name):
    def make():
        jt.manual_seed(0)
        return getattr(nn, name)(32, 48, 2, bidirectional=True)
    # (32 input features: at 40, the input's gradient, a product of linear's backward, differs
    # at 1 and 2 threads whatever the recurrence -- kernels/cpu/linalg.py's column slabs)
    data = np.random.default_rng(2).standard_normal((9, 16, 32)).astype(np.float32)
    before = jt.get_num_threads()
    try:
        jt.set_num_threads(1)
        one = _run_all(make, data)
        jt.set_num_threads(2)
        two = _run_all(make, data)
    finally:
        jt.set_num_threads(before)
    for a, b in zip(one, two, strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("name, options", FUSED_CASES)
def test_fused_and_composed_paths_agree(name, options, monkeypatch):
    from jitensor.ops import recurrent
    data = np.random.default_rng(3).standard_normal((4, 3, 3))

    def make():
        jt.manual_seed(0)
        return getattr(nn, name)(3, 4, dtype=jt.float64, **options)
    fused = _run_all(make, data)
    monkeypatch.setattr(recurrent, "fused", lambda t: False)
    composed = _run_all(make, data)
    for a, b in zip(fused, composed, strict=True):
        np.testing.assert_allclose(a, b, **TOL)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_fused_double_backward_runs_the_composed_steps(name):
    """create_graph=True: the rule differentiates the composed steps, so gradients of
    gradients match torch's."""
    mine, theirs = twins(name, 2, 3)
    rng = np.random.default_rng(4)
    x, tx = pair(rng.standard_normal((3, 2, 2)))
    (g,) = jt.autograd.grad(mine(x)[0].pow(2).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(theirs(tx)[0].pow(2).sum(), tx, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), **TOL)
    g.sum().backward()
    tg.sum().backward()
    for a, b in [(x, tx)] + parameter_pairs(mine, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **TOL)


@pytest.mark.parametrize("name", ["LSTMCell", "GRUCell", "RNNCell"])
def test_fused_cells_record_one_recurrence(name):
    mine, theirs = twins(name, 3, 4)
    rng = np.random.default_rng(5)
    x, tx = pair(rng.standard_normal((2, 3)))
    out, tout = mine(x), theirs(tx)
    assert "RecurrenceBackward0" in _layer_nodes(out[0] if isinstance(out, tuple) else out)
    check_against_torch(rng, out, tout, [(x, tx)] + parameter_pairs(mine, theirs))

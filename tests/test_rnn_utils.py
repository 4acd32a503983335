"""nn.utils.rnn's PackedSequence, pack_padded_sequence, pad_packed_sequence, pack_sequence,
unpack_sequence, and nn.RNN/LSTM/GRU on packed input, against torch: values, lengths, the
sorted/unsorted indices, gradients of the inputs, initial states and parameters, errors."""
import numpy as np
import pytest

import jitensor as jt
from jitensor import nn
from jitensor.nn.utils import rnn

torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn

TOL = dict(rtol=1e-9, atol=1e-11)


def close(a, b, **tol):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **(tol or TOL))


def pair(array):
    return jt.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def same_error(mine, theirs):
    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(expected.type) as got:
        mine()
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths", [[4, 4, 2], [3, 1, 4, 2], [1]])
def test_pack_and_pad_roundtrip_with_grads(batch_first, lengths):
    rng = np.random.default_rng(0)
    steps, batch = max(lengths), len(lengths)
    shape = (batch, steps, 3) if batch_first else (steps, batch, 3)
    x, tx = pair(rng.standard_normal(shape))
    enforce = lengths == sorted(lengths, reverse=True)
    p = rnn.pack_padded_sequence(x, lengths, batch_first, enforce_sorted=enforce)
    tp = trnn.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted=enforce)
    close(p.data, tp.data)
    assert p.batch_sizes.tolist() == tp.batch_sizes.tolist()
    assert p.batch_sizes.dtype == jt.int64 and p.batch_sizes.device.type == "cpu"
    for a, b in ((p.sorted_indices, tp.sorted_indices), (p.unsorted_indices, tp.unsorted_indices)):
        assert (a is None) == (b is None) and (a is None or a.tolist() == b.tolist())
    out, lens = rnn.pad_packed_sequence(p, batch_first, padding_value=-2.0, total_length=steps + 1)
    tout, tlens = trnn.pad_packed_sequence(tp, batch_first, padding_value=-2.0,
                                           total_length=steps + 1)
    close(out, tout)
    assert lens.tolist() == tlens.tolist() and lens.dtype == jt.int64
    g = rng.standard_normal(tuple(tout.shape))
    (out * jt.tensor(g)).sum().backward()
    (tout * torch.tensor(g)).sum().backward()
    close(x.grad, tx.grad)


def test_pack_sequence_unpack_sequence_and_packed_sequence_methods():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((n, 2)) for n in (2, 5, 3)]
    p = rnn.pack_sequence([jt.tensor(a) for a in arrays], enforce_sorted=False)
    tp = trnn.pack_sequence([torch.tensor(a) for a in arrays], enforce_sorted=False)
    close(p.data, tp.data)
    assert p.sorted_indices.tolist() == tp.sorted_indices.tolist()
    for a, b in zip(rnn.unpack_sequence(p), trnn.unpack_sequence(tp), strict=True):
        close(a, b)
    assert isinstance(p, tuple) and p._fields == tp._fields
    f = p.float()
    assert f.data.dtype == jt.float32 and f.batch_sizes is p.batch_sizes
    assert p.to(jt.float64) is p and not p.is_cuda and not p.is_pinned()
    assert rnn.PackedSequence((p.data, p.batch_sizes)).data is p.data
    assert rnn.invert_permutation(jt.tensor([2, 0, 1])).tolist() == \
        trnn.invert_permutation(torch.tensor([2, 0, 1])).tolist()
    assert rnn.invert_permutation(None) is None


def test_pack_errors_match_torch():
    x, tx = jt.zeros(3, 2, 1), torch.zeros(3, 2, 1)
    for lengths in ([3, 0], [2, 3], [3, 2, 1]):
        same_error(lambda lengths=lengths: rnn.pack_padded_sequence(x, lengths),
                   lambda lengths=lengths: trnn.pack_padded_sequence(tx, lengths))
    same_error(lambda: rnn.pack_padded_sequence(jt.zeros(0, 2, 1), [1, 1]),
               lambda: trnn.pack_padded_sequence(torch.zeros(0, 2, 1), [1, 1]))
    p, tp = rnn.pack_padded_sequence(x, [3, 2]), trnn.pack_padded_sequence(tx, [3, 2])
    same_error(lambda: rnn.pad_packed_sequence(p, total_length=2),
               lambda: trnn.pad_packed_sequence(tp, total_length=2))
    same_error(lambda: rnn.pack_sequence([]), lambda: trnn.pack_sequence([]))
    with pytest.raises(RuntimeError, match="exceeds"):
        rnn.pack_padded_sequence(x, [4, 2])


def twins(name, seed=0, **kwargs):
    torch.manual_seed(seed)
    theirs = getattr(torch.nn, name)(3, 4, **kwargs).double()
    mine = getattr(nn, name)(3, 4, **kwargs).double()
    mine.load_state_dict({k: jt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return mine, theirs


CASES = [("RNN", {}), ("GRU", dict(num_layers=2)), ("LSTM", dict(bidirectional=True)),
         ("GRU", dict(bidirectional=True, num_layers=2, batch_first=True)),
         ("LSTM", dict(proj_size=2, num_layers=2, bidirectional=True)),
         ("RNN", dict(nonlinearity="relu", bidirectional=True, bias=False))]


@pytest.mark.parametrize("state", [False, True])
@pytest.mark.parametrize("name, options", CASES)
def test_layers_on_packed_input_match_torch(name, options, state):
    rng = np.random.default_rng(2)
    mine, theirs = twins(name, **options)
    lengths = [3, 5, 1, 4]
    batch_first = options.get("batch_first", False)
    shape = (4, 5, 3) if batch_first else (5, 4, 3)
    x, tx = pair(rng.standard_normal(shape))
    p = rnn.pack_padded_sequence(x, lengths, batch_first, enforce_sorted=False)
    tp = trnn.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted=False)
    dirs = 2 if options.get("bidirectional") else 1
    layers = options.get("num_layers", 1)
    leaves = [(x, tx)]
    hx = thx = None
    if state:
        width = options.get("proj_size") or 4
        h, th = pair(rng.standard_normal((layers * dirs, 4, width)))
        hx, thx, leaves = h, th, leaves + [(h, th)]
        if name == "LSTM":
            c, tc = pair(rng.standard_normal((layers * dirs, 4, 4)))
            hx, thx, leaves = (h, c), (th, tc), leaves + [(c, tc)]
    out, hidden = mine(p, hx)
    tout, thidden = theirs(tp, thx)
    assert isinstance(out, rnn.PackedSequence)
    assert out.sorted_indices.tolist() == tout.sorted_indices.tolist()
    assert out.batch_sizes.tolist() == tout.batch_sizes.tolist()
    close(out.data, tout.data)
    hs = hidden if isinstance(hidden, tuple) else (hidden,)
    ths = thidden if isinstance(thidden, tuple) else (thidden,)
    loss, tloss = 0, 0
    for a, b in zip((out.data, *hs), (tout.data, *ths), strict=True):
        close(a, b)
        g = rng.standard_normal(tuple(b.shape))
        loss = loss + (a * jt.tensor(g)).sum()
        tloss = tloss + (b * torch.tensor(g)).sum()
    loss.backward()
    tloss.backward()
    for a, b in leaves:
        close(a.grad, b.grad)
    for a, b in zip(mine.parameters(), theirs.parameters(), strict=True):
        close(a.grad, b.grad)


def test_packed_output_pads_to_the_padded_run():
    """A batch of equal lengths packed gives the padded run's output and final state."""
    rng = np.random.default_rng(3)
    mine, _ = twins("LSTM", bidirectional=True)
    x = jt.tensor(rng.standard_normal((4, 2, 3)))
    out, (h, c) = mine(rnn.pack_padded_sequence(x, [4, 4]))
    ref, (rh, rc) = mine(x)
    close(rnn.pad_packed_sequence(out)[0], ref)
    close(h, rh)
    close(c, rc)


def test_packed_input_errors_match_torch():
    mine, theirs = twins("GRU")
    p = rnn.pack_sequence([jt.zeros(2, 3, dtype=jt.float64)])
    tp = trnn.pack_sequence([torch.zeros(2, 3, dtype=torch.float64)])
    same_error(lambda: mine(p, jt.zeros(1, 2, 4, dtype=jt.float64)),
               lambda: theirs(tp, torch.zeros(1, 2, 4, dtype=torch.float64)))
    p = rnn.pack_sequence([jt.zeros(2, 5, dtype=jt.float64)])
    tp = trnn.pack_sequence([torch.zeros(2, 5, dtype=torch.float64)])
    same_error(lambda: mine(p), lambda: theirs(tp))

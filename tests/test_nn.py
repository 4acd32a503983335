"""jt.nn: Parameter, the Module API (registration, traversal, state dicts, modes, conversions,
repr), containers, layers, nn.init and nn.functional. NumPy is the oracle for values and
statistics; torch (skipped where not installed) for reprs, error texts, fans and gains, and the
values and gradients of every functional op."""
import copy
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import jitensor as jt
from jitensor import nn
from jitensor.nn import functional as F
from jitensor.nn import init


def values(t):
    return t.detach().numpy()


def to_torch(t, requires_grad=False):
    import torch
    return torch.from_numpy(values(t).copy()).requires_grad_(requires_grad)


def close(t, expected, rtol=1e-6, atol=1e-6):
    expected = expected.detach().numpy() if hasattr(expected, "detach") else np.asarray(expected)
    assert tuple(t.shape) == expected.shape, (tuple(t.shape), expected.shape)
    np.testing.assert_allclose(values(t), expected, rtol=rtol, atol=atol)


class Net(nn.Module):
    """A module with every kind of member: parameters (one absent), persistent and
    non-persistent buffers, children (one shared twice), a plain attribute."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(jt.ones(3))
        self.register_parameter("unused", None)
        self.register_buffer("running", jt.zeros(3))
        self.register_buffer("scratch", jt.zeros(2), persistent=False)
        self.body = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        self.alias = self.body[0]
        self.name = "net"

    def forward(self, x):
        return self.body(x * self.scale)


# -- Parameter ---------------------------------------------------------------------------------
def test_parameter_is_a_leaf_sharing_memory():
    t = jt.arange(6.0).reshape(2, 3)
    p = nn.Parameter(t)
    assert isinstance(p, nn.Parameter) and isinstance(p, jt.Tensor) and type(p) is nn.Parameter
    assert not isinstance(t, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad is None
    p.numpy(force=True)[0, 0] = 7.0
    assert t[0, 0].item() == 7.0
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(jt.tensor([1, 2]))
    with pytest.raises(TypeError, match="must be a Tensor"):
        nn.Parameter([1.0, 2.0])


def test_parameter_in_ops_is_read_as_a_tensor():
    a = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    p, x = nn.Parameter(jt.tensor(a)), jt.tensor(a * 3)
    np.testing.assert_array_equal(values(2 * p), 2 * a)
    np.testing.assert_array_equal(values(x + p), a * 4)
    np.testing.assert_array_equal(values(x - p), a * 2)
    np.testing.assert_array_equal(values(jt.where(x > 0, p, x)), np.where(a * 3 > 0, a, a * 3))
    np.testing.assert_array_equal(values(jt.clamp(x, p, None)), np.maximum(a * 3, a))
    np.testing.assert_allclose(values(x @ p.T), (a * 3) @ a.T)
    ops = [lambda q: q * q, lambda q: q.exp(), lambda q: q.sum(0), lambda q: q[1]]
    for op in ops:
        assert type(op(p)) is jt.Tensor  # results are plain tensors, as in torch


def test_parameter_repr_copy_and_pickle():
    p = nn.Parameter(jt.tensor([[1.5, -2.0]]))
    assert repr(p) == "Parameter containing:\ntensor([[ 1.5000, -2.0000]], requires_grad=True)"
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(q) is nn.Parameter and q.requires_grad
        np.testing.assert_array_equal(values(q), values(p))
        assert not np.may_share_memory(values(q), values(p))


def test_parameter_repr_matches_torch():
    torch = pytest.importorskip("torch")
    for a in (np.array([[0.25, -1.0, 3.0]], np.float32), np.array([1.0, 2.0], np.float64)):
        for requires_grad in (True, False):
            mine = repr(nn.Parameter(jt.tensor(a), requires_grad=requires_grad))
            theirs = repr(torch.nn.Parameter(torch.tensor(a), requires_grad=requires_grad))
            assert mine == theirs.replace("torch.", "jitensor.")


# -- Module: registration and traversal ----------------------------------------------------------
def test_named_members_and_traversal():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "scale", "body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias"]
    assert [p for p in net.parameters()][1] is net.body[0].weight
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert len(list(net.named_parameters(remove_duplicate=False))) == 7  # alias counted again
    assert [n for n, _ in net.named_buffers()] == ["running", "scratch"]
    assert list(net.buffers())[0] is net.running
    assert [n for n, _ in net.named_children()] == ["body", "alias"]
    assert list(net.children()) == [net.body, net.body[0]]
    assert [n for n, _ in net.named_modules()] == ["", "body", "body.0", "body.1", "body.2"]
    assert list(net.modules())[0] is net
    assert net.get_submodule("body.2") is net.body[2] and net.get_submodule("") is net
    with pytest.raises(AttributeError, match="no attribute `nope`"):
        net.get_submodule("body.nope")
    assert {"scale", "body", "running", "forward"} <= set(dir(net))
    assert net.unused is None and net.name == "net"


def test_state_dict_keys_match_torch():
    torch = pytest.importorskip("torch")

    class TorchNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.ones(3))
            self.register_parameter("unused", None)
            self.register_buffer("running", torch.zeros(3))
            self.register_buffer("scratch", torch.zeros(2), persistent=False)
            self.body = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                                            torch.nn.Linear(4, 2))
            self.alias = self.body[0]

    mine, theirs = Net().state_dict(), TorchNet().state_dict()
    assert isinstance(mine, OrderedDict)
    assert list(mine) == list(theirs)
    assert [tuple(v.shape) for v in mine.values()] == [tuple(v.shape) for v in theirs.values()]


def test_setattr_registers_and_checks():
    m = nn.Module()
    m.w = nn.Parameter(jt.zeros(2))
    m.child = nn.Linear(2, 2)
    m.plain = jt.zeros(2)  # a plain tensor is an ordinary attribute, as in torch
    assert list(m._parameters) == ["w"] and list(m._modules) == ["child"]
    assert "plain" in m.__dict__
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'w'"):
        m.w = jt.zeros(2)
    m.w = None
    assert m.w is None and list(m.parameters()) == list(m.child.parameters())
    with pytest.raises(TypeError, match="as child module 'child'"):
        m.child = 3
    m.child = nn.Parameter(jt.ones(1))  # re-registered as a parameter
    assert "child" not in m._modules and m.child.shape == (1,)
    m.register_buffer("buf", jt.ones(2))
    m.buf = jt.zeros(3)
    assert m._buffers["buf"].shape == (3,)
    with pytest.raises(TypeError, match="as buffer 'buf'"):
        m.buf = [1, 2]
    del m.buf, m.child, m.plain
    assert "buf" not in m._buffers and "child" not in m._parameters
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'buf'"):
        _ = m.buf


def test_registration_errors_match_torch():
    torch = pytest.importorskip("torch")

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(jt.zeros(1))

    with pytest.raises(AttributeError, match=r"before Module.__init__\(\) call"):
        Early()
    cases = [
        (lambda m, t: m.register_buffer("a.b", t.zeros(1)), KeyError),
        (lambda m, t: m.register_buffer("", t.zeros(1)), KeyError),
        (lambda m, t: m.register_buffer("training", t.zeros(1)), KeyError),
        (lambda m, t: m.register_parameter("forward", None), KeyError),
        (lambda m, t: m.register_buffer("x", [1.0]), TypeError),
        (lambda m, t: m.add_module(1, None), TypeError),
    ]
    for fn, error in cases:
        with pytest.raises(error):
            fn(torch.nn.Module(), torch)
        with pytest.raises(error):
            fn(nn.Module(), jt)
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        nn.Module().add_module("x", 3)
    with pytest.raises(TypeError, match="to parameter 'x'"):
        nn.Module().register_parameter("x", jt.zeros(1))
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


def test_shared_module_counted_once_and_apply():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, lin)
    assert len(list(seq.parameters())) == 2 and len(list(seq.modules())) == 2
    seen = []
    assert seq.apply(lambda m: seen.append(type(m).__name__)) is seq
    assert seen == ["Linear", "Sequential"]  # children first, shared child once


# -- Module: state dicts ------------------------------------------------------------------------
def test_state_dict_round_trip():
    jt.manual_seed(1)
    a, b = Net(), Net()
    params_before = list(b.parameters())
    sd = a.state_dict()
    assert all(not v.requires_grad and type(v) is jt.Tensor for v in sd.values())
    assert np.shares_memory(values(sd["scale"]), values(a.scale))
    assert list(a.state_dict(keep_vars=True).values())[0] is a.scale
    result = b.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values(), strict=False):
        np.testing.assert_array_equal(values(x), values(y), err_msg=name)
    # copied in place
    assert all(p is q for p, q in zip(params_before, b.parameters(), strict=False))
    b.load_state_dict(OrderedDict((k, v.double()) for k, v in sd.items()))  # dtype converted
    assert b.scale.dtype is jt.float32


def test_load_state_dict_errors_match_torch():
    torch = pytest.importorskip("torch")

    def errors(m, sd, strict=True):
        with pytest.raises(RuntimeError) as info:
            m.load_state_dict(sd, strict=strict)
        return str(info.value)

    mine, theirs = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    sd_mine = {"weight": jt.zeros(2, 3), "extra": jt.zeros(1), "more.x": jt.zeros(1)}
    sd_theirs = {"weight": torch.zeros(2, 3), "extra": torch.zeros(1),
                 "more.x": torch.zeros(1)}
    assert errors(mine, sd_mine) == errors(theirs, sd_theirs)
    sd_mine["weight"], sd_theirs["weight"] = jt.zeros(3, 3), torch.zeros(3, 3)
    expected = errors(theirs, sd_theirs, strict=False).replace("torch.", "jitensor.")
    assert errors(mine, sd_mine, strict=False) == expected
    got = mine.load_state_dict({"weight": jt.ones(2, 3), "junk": jt.ones(1)}, strict=False)
    assert got == (["bias"], ["junk"]) and values(mine.weight).sum() == 6
    with pytest.raises(RuntimeError, match="expected jitensor.Tensor"):
        mine.load_state_dict({"weight": [[0.0] * 3] * 2, "bias": jt.zeros(2)})
    with pytest.raises(TypeError, match="dict-like"):
        mine.load_state_dict([1, 2])


# -- Module: modes, gradients, conversions -------------------------------------------------------
def test_train_eval_and_requires_grad():
    net = Net()
    assert net.training and net.body[1].training
    assert net.eval() is net and not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="boolean"):
        net.train("no")
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())


def test_zero_grad():
    net = Net()
    for p in net.parameters():
        p.grad = jt.ones_like(p)
    grad = net.scale.grad
    net.zero_grad(set_to_none=False)
    assert net.scale.grad is grad and values(grad).sum() == 0
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_to_converts_in_place():
    net = Net()
    net.register_buffer("steps", jt.tensor([3]))
    params = list(net.parameters())
    net.scale.grad = jt.ones(3)
    assert net.double() is net
    # optimizers keep working
    assert all(p is q for p, q in zip(params, net.parameters(), strict=False))
    assert all(p.dtype is jt.float64 and p.requires_grad for p in net.parameters())
    assert net.scale.grad.dtype is jt.float64 and net.running.dtype is jt.float64
    assert net.steps.dtype is jt.int64  # dtype conversions skip integer tensors
    net.to(jt.float32).to("cpu").cpu().to(jt.zeros(1, dtype=jt.float64))
    assert net.scale.dtype is jt.float64
    assert net.float().scale.dtype is jt.float32
    assert isinstance(net.scale, nn.Parameter) and net.scale.is_leaf
    with pytest.raises(TypeError, match="floating point"):
        net.to(jt.int32)


# -- containers --------------------------------------------------------------------------------
def test_sequential_list_behaviour():
    layers = [nn.Linear(2, 2), nn.ReLU(), nn.Tanh(), nn.Identity()]
    seq = nn.Sequential(*layers)
    assert len(seq) == 4 and list(seq) == layers
    assert seq[-1] is layers[3] and seq[1] is layers[1]
    with pytest.raises(IndexError, match="index 4 is out of range"):
        seq[4]
    part = seq[1:3]
    assert isinstance(part, nn.Sequential) and list(part._modules) == ["1", "2"]
    assert seq.append(nn.Sigmoid()) is seq and len(seq) == 5
    seq[0] = nn.Linear(2, 2)
    assert seq[0] is not layers[0]
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2", "3"] and seq[1] is layers[2]
    seq.insert(0, layers[1])
    assert seq[0] is layers[1] and list(seq._modules) == ["0", "1", "2", "3", "4"]
    assert seq.pop(0) is layers[1] and len(seq) == 4
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.ReLU())]))
    assert [n for n, _ in named.named_parameters()] == ["fc.weight", "fc.bias"]
    x = jt.randn(5, 2)
    close(named(x), values(named.act(named.fc(x))))


def test_module_list():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    ml.extend([nn.ReLU()])
    ml += [nn.Tanh()]
    assert len(ml) == 5 and isinstance(ml[:2], nn.ModuleList) and len(ml[:2]) == 2
    assert len(list(ml.parameters())) == 6
    del ml[0]
    assert list(ml._modules) == ["0", "1", "2", "3"]
    with pytest.raises(NotImplementedError):
        ml(jt.zeros(2))


def test_module_dict_and_parameter_containers():
    d = nn.ModuleDict({"a": nn.Linear(2, 3), "b": nn.ReLU()})
    d["c"] = nn.Linear(3, 1)
    d.update([("e", nn.Tanh())])
    assert list(d) == ["a", "b", "c", "e"] and len(d) == 4 and "a" in d and d["b"] is d.b
    assert [n for n, _ in d.named_parameters()] == ["a.weight", "a.bias", "c.weight", "c.bias"]
    assert isinstance(d.pop("e"), nn.Tanh) and "e" not in d
    with pytest.raises(ValueError, match="element #0 has length 1"):
        d.update([("x",)])
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        d["x"] = 3

    params = nn.ParameterList([jt.ones(2), nn.Parameter(jt.zeros(3))])
    params.append(jt.ones(1))
    assert len(params) == 3 and all(isinstance(p, nn.Parameter) for p in params)
    assert params[-1].requires_grad and params[0] is params._parameters["0"]
    params[1] = jt.full((2,), 5.0)
    assert params[1].tolist() == [5.0, 5.0] and isinstance(params[:2], nn.ParameterList)
    with pytest.raises(IndexError, match="index 3 is out of range for ParameterList"):
        params[3]
    table = nn.ParameterDict({"w": jt.ones(2)})
    table["v"] = jt.zeros(1)
    assert list(table) == ["w", "v"] and isinstance(table["v"], nn.Parameter)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads, self.scales = nn.ModuleDict({"x": nn.Linear(2, 2)}), params
            self.table = table
    model = Model()
    assert list(model.state_dict()) == ["heads.x.weight", "heads.x.bias", "scales.0",
                                        "scales.1", "scales.2", "table.w", "table.v"]
    assert len(list(model.parameters())) == 7
    torch = pytest.importorskip("torch")
    theirs = torch.nn.ParameterList([torch.ones(2), torch.nn.Parameter(torch.zeros(3, 2))])
    mine = nn.ParameterList([jt.ones(2), nn.Parameter(jt.zeros(3, 2))])
    assert repr(mine) == repr(theirs).replace("torch.", "jitensor.")


def test_repr_matches_torch():
    torch = pytest.importorskip("torch")

    def build(nn):
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.act = nn.ReLU(inplace=True)
                self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)] + [nn.Tanh()])
                self.head = nn.Sequential(
                    nn.Flatten(), nn.Dropout(0.1), nn.Linear(4, 2, bias=False),
                    nn.Softmax(dim=1), nn.LogSoftmax(dim=-1), nn.Identity(), nn.Sigmoid())
                self.losses = nn.Sequential(nn.CrossEntropyLoss(), nn.MSELoss(), nn.NLLLoss())
                self.empty = nn.ModuleList()
        return Block()

    assert repr(build(nn)) == repr(build(torch.nn))
    assert repr(nn.Sequential()) == repr(torch.nn.Sequential())


# -- layers ------------------------------------------------------------------------------------
def test_linear_default_init_distribution():
    jt.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) and the bias bound coincide
    w, b = values(lin.weight), values(lin.bias)
    assert lin.weight.shape == (300, 400) and lin.bias.shape == (300,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.mean()) < 0.02 * bound and abs(w.var() / (bound ** 2 / 3) - 1) < 0.02
    assert abs(b.mean()) < 0.15 * bound
    assert lin.in_features == 400 and lin.out_features == 300
    lin64 = nn.Linear(3, 2, bias=False, dtype=jt.float64, device="cpu")
    assert lin64.bias is None and lin64.weight.dtype is jt.float64
    assert [n for n, _ in lin64.named_parameters()] == ["weight"]


def test_linear_forward_matches_torch():
    torch = pytest.importorskip("torch")
    jt.manual_seed(3)
    for bias in (True, False):
        lin = nn.Linear(5, 3, bias=bias)
        ref = torch.nn.Linear(5, 3, bias=bias)
        ref.load_state_dict({k: to_torch(v) for k, v in lin.state_dict().items()})
        for shape in ((5,), (4, 5), (2, 4, 5)):
            x = jt.randn(*shape)
            close(lin(x), ref(to_torch(x)), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("rows, n_in, n_out", [(1, 7, 5), (9, 7, 1), (1, 7, 1), (300, 16, 20),
                                               (20, 16, 300), (256, 64, 192), (3, 2, 4)])
def test_linear_bias_added_by_the_product_matches_torch(rows, n_in, n_out, dtype):
    """The bias is where the BLAS product starts (beta = 1): across its single-row, single-column,
    row-slab and column-slab paths, as torch's addmm; integers add it after their product.
    The same bits at one thread and at all of them."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(rows + n_in + n_out)
    x, w, b = (rng.integers(-5, 5, shape).astype(dtype) for shape in
               ((rows, n_in), (n_out, n_in), (n_out,)))
    from conftest import at_thread_counts
    got = at_thread_counts(lambda: F.linear(jt.tensor(x), jt.tensor(w), jt.tensor(b)).numpy())
    want = torch.nn.functional.linear(*map(torch.tensor, (x, w, b))).numpy()
    for g in got:
        assert g.dtype == want.dtype and g.shape == want.shape
        np.testing.assert_allclose(g, want, rtol=1e-6)
    assert all(np.array_equal(g, got[0]) for g in got)
    # a bias that is not its own row of out's dtype (a broadcast (1, n) one) is added after
    close(F.linear(jt.tensor(x), jt.tensor(w), jt.tensor(b[None])),
          torch.nn.functional.linear(*map(torch.tensor, (x, w, b[None]))))


def test_linear_shape_error_names_both_shapes():
    with pytest.raises(RuntimeError, match=r"input of shape \(2, 4\).*weight of shape \(3, 5\)"):
        nn.Linear(5, 3)(jt.zeros(2, 4))
    with pytest.raises(RuntimeError, match=r"shape \(\)"):
        F.linear(jt.tensor(1.0), jt.zeros(3, 1))


# -- Embedding ---------------------------------------------------------------------------------
def test_embedding_rows_and_gradient_match_numpy():
    jt.manual_seed(0)
    emb = nn.Embedding(7, 3, padding_idx=-2, dtype=jt.float64)
    w = values(emb.weight).copy()
    assert emb.padding_idx == 5 and (w[5] == 0).all() and w.std() > 0.5  # N(0, 1), row 5 zero
    for dtype in (jt.int64, jt.int32):
        idx = np.array([[1, 5, 6], [5, 1, 1]])
        out = emb(jt.tensor(idx, dtype=dtype))
        assert out.dtype is jt.float64
        close(out, w[idx], rtol=0, atol=0)
        emb.weight.grad = None
        g = np.arange(18.0).reshape(2, 3, 3)
        out.backward(jt.from_numpy(g))
        want = np.zeros_like(w)
        np.add.at(want, idx.reshape(-1), g.reshape(-1, 3))
        want[5] = 0  # padding_idx gets no gradient
        close(emb.weight.grad, want, rtol=0, atol=0)


def test_embedding_options_match_torch():
    torch = pytest.importorskip("torch")
    idx = np.array([[0, 3, 3], [4, 0, 3]])
    w = np.random.default_rng(4).standard_normal((5, 4)) * 3
    for kwargs in ({"padding_idx": 3}, {"max_norm": 1.5}, {"max_norm": 2.0, "norm_type": 1.0},
                   {"scale_grad_by_freq": True, "padding_idx": 0}):
        x, tx = jt.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
        out = F.embedding(jt.tensor(idx), x, **kwargs)
        tout = torch.nn.functional.embedding(torch.tensor(idx), tx, **kwargs)
        close(out, tout, rtol=1e-12, atol=1e-12)
        close(x.detach(), tx.detach(), rtol=1e-12, atol=1e-12)  # max_norm renormalises in place
        (out ** 3).sum().backward()
        (tout ** 3).sum().backward()
        close(x.grad, tx.grad, rtol=1e-12, atol=1e-12)
    assert repr(nn.Embedding(5, 2, padding_idx=1, max_norm=1.0)) == \
        repr(torch.nn.Embedding(5, 2, padding_idx=1, max_norm=1.0))


def test_embedding_from_pretrained_and_errors():
    table = jt.arange(6.0).reshape(3, 2)
    frozen = nn.Embedding.from_pretrained(table)
    assert not frozen.weight.requires_grad and frozen.weight.data_ptr() == table.data_ptr()
    assert frozen(jt.tensor([2])).tolist() == [[4.0, 5.0]]
    assert nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad
    assert [p.shape for p in nn.Embedding(4, 2).parameters()] == [(4, 2)]
    with pytest.raises(RuntimeError, match="expected indices of dtype int64 or int32, got "
                                           "jitensor.float32; convert them with .long()"):
        F.embedding(jt.tensor([1.0]), table)
    with pytest.raises(TypeError, match="argument 'input' must be a Tensor of indices, not list"):
        F.embedding([1], table)
    with pytest.raises(RuntimeError, match=r"'weight' must be 2-D.*got \[6\]"):
        F.embedding(jt.tensor([1]), table.reshape(-1))
    for bad in (3, -1):  # no negative positions, as in torch
        with pytest.raises(IndexError, match=f"index {bad} is out of bounds for dimension 0 "
                                             f"with size 3"):
            F.embedding(jt.tensor([[0, bad]]), table)
    with pytest.raises(AssertionError, match=r"padding_idx 3 must be within num_embeddings \(3\)"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(RuntimeError, match="no sparse tensors; use sparse=False"):
        nn.Embedding(3, 2, sparse=True)
    with pytest.raises(AssertionError, match="expected to be 2-dimensional"):
        nn.Embedding.from_pretrained(jt.ones(3))
    with pytest.raises(AssertionError, match=r"Shape of weight \[3, 2\] does not match"):
        nn.Embedding(4, 2, _weight=table)


def test_embedding_trains_with_an_optimizer():
    """A bag of embeddings and a linear head learn a separable task (loss falls tenfold)."""
    jt.manual_seed(1)
    emb, head = nn.Embedding(20, 8), nn.Linear(8, 2)
    opt = jt.optim.Adam(list(emb.parameters()) + list(head.parameters()), lr=0.05)
    idx = jt.randint(0, 20, (64, 5))
    labels = (idx < 10).long().sum(1).gt(2).long()
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = F.cross_entropy(head(emb(idx).mean(1)), labels)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] / 10


# -- LayerNorm ---------------------------------------------------------------------------------
@pytest.mark.parametrize("normalized", [4, (3, 4)])
def test_layer_norm_matches_numpy_and_its_gradients_torch(normalized):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((2, 3, 4)) * 5 + 3
    dims = (-1,) if normalized == 4 else (-2, -1)
    norm = nn.LayerNorm(normalized, dtype=jt.float64)
    assert values(norm.weight).tolist() == np.ones(norm.normalized_shape).tolist()
    w = rng.standard_normal(norm.normalized_shape)
    b = rng.standard_normal(norm.normalized_shape)
    norm.weight.data.copy_(jt.from_numpy(w))
    norm.bias.data.copy_(jt.from_numpy(b))
    x = jt.tensor(a, requires_grad=True)
    out = norm(x)
    mean, var = a.mean(dims, keepdims=True), a.var(dims, keepdims=True)
    close(out, (a - mean) / np.sqrt(var + 1e-5) * w + b, rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(a.shape)
    out.backward(jt.from_numpy(g))
    torch = pytest.importorskip("torch")
    ref = torch.nn.LayerNorm(normalized, dtype=torch.float64)
    ref.load_state_dict({k: to_torch(v) for k, v in norm.state_dict().items()})
    tx = torch.tensor(a, requires_grad=True)
    ref(tx).backward(torch.from_numpy(g))
    close(x.grad, tx.grad, rtol=1e-10, atol=1e-12)
    close(norm.weight.grad, ref.weight.grad, rtol=1e-10, atol=1e-12)
    close(norm.bias.grad, ref.bias.grad, rtol=1e-10, atol=1e-12)
    assert repr(norm) == repr(ref)


def test_layer_norm_options_and_errors():
    x = jt.randn(3, 5)
    plain = nn.LayerNorm(5, elementwise_affine=False)
    assert list(plain.parameters()) == [] and plain.weight is None
    close(plain(x), F.layer_norm(x, (5,)))
    assert [n for n, _ in nn.LayerNorm(5, bias=False).named_parameters()] == ["weight"]
    with pytest.raises(RuntimeError, match=r"normalized_shape=\[4\], expected input with shape "
                                           r"\[\*, 4\], but got input of size \[3, 5\]"):
        F.layer_norm(x, 4)
    with pytest.raises(RuntimeError, match=r"weight of shape \[4\] does not match"):
        F.layer_norm(x, 5, jt.ones(4))


def test_activation_modules():
    x = jt.randn(3, 4)
    close(nn.ReLU()(x), np.maximum(values(x), 0))
    close(nn.Sigmoid()(x), 1 / (1 + np.exp(-values(x))))
    close(nn.Tanh()(x), np.tanh(values(x)))
    e = np.exp(values(x) - values(x).max(0))
    close(nn.Softmax(dim=0)(x), e / e.sum(0))
    close(nn.LogSoftmax(dim=0)(x), np.log(e / e.sum(0)), atol=1e-5)
    assert nn.Identity(3, key=4)(x) is x
    assert nn.Flatten()(jt.zeros(2, 3, 4)).shape == (2, 12)
    assert nn.Flatten(0, 1)(jt.zeros(2, 3, 4)).shape == (6, 4)
    y = x.clone()
    assert nn.ReLU(inplace=True)(y) is y and values(y).min() >= 0


def test_dropout():
    jt.manual_seed(0)
    x = jt.ones(200, 500)
    for p in (0.1, 0.5, 0.8):
        y = values(F.dropout(x, p))
        zero = (y == 0).mean()
        assert abs(zero - p) < 0.01, (p, zero)
        np.testing.assert_allclose(y[y != 0], 1 / (1 - p), rtol=1e-6)
    assert values(F.dropout(x, 1.0)).max() == 0
    np.testing.assert_array_equal(values(F.dropout(x, 0.0)), 1)
    assert F.dropout(x, 0.5, training=False) is x
    drop = nn.Dropout(0.5)
    assert drop.eval()(x) is x
    y = jt.ones(100)
    assert F.dropout(y, 0.5, inplace=True) is y and (values(y) == 0).any()
    a, b = values(F.dropout(x, 0.5)), values(F.dropout(x, 0.5))
    assert (a != b).any()  # every call draws a new mask
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match=f"between 0 and 1, but got {bad}"):
            nn.Dropout(bad)
        with pytest.raises(ValueError, match="between 0 and 1"):
            F.dropout(x, bad)


# -- nn.init -----------------------------------------------------------------------------------
def test_gain_and_fans_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("linear", "conv2d", "conv_transpose3d", "sigmoid", "tanh", "relu", "selu",
                 "leaky_relu"):
        assert init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    for param in (0, 0.2, 3):
        assert init.calculate_gain("leaky_relu", param) == \
            torch.nn.init.calculate_gain("leaky_relu", param)
    for name, param, error in (("leaky_relu", True, "negative_slope True not a valid number"),
                               ("gelu", None, "Unsupported nonlinearity gelu")):
        with pytest.raises(ValueError, match=error):
            init.calculate_gain(name, param)
        with pytest.raises(ValueError, match=error):
            torch.nn.init.calculate_gain(name, param)
    for shape in ((2, 3), (4, 3, 5), (6, 2, 3, 3), (5, 0)):
        assert init._calculate_fan_in_and_fan_out(jt.empty(*shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(jt.zeros(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(jt.zeros(3, 4), mode="fan_avg")


def _drawn(fn, shape=(300, 200), **kwargs):
    """values of a parameter filled by `fn`, which must fill it in place and leave it a leaf."""
    p = nn.Parameter(jt.zeros(*shape))
    assert fn(p, **kwargs) is p
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    return values(p).astype(np.float64)


def test_init_distributions():
    g = jt.Generator().manual_seed(0)
    fan_in, fan_out = 200, 300
    u = _drawn(init.uniform_, a=-2.0, b=3.0, generator=g)
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.03
    assert abs(u.var() / (25 / 12) - 1) < 0.02
    n = _drawn(init.normal_, mean=1.0, std=2.0, generator=g)
    assert abs(n.mean() - 1) < 0.02 and abs(n.std() / 2 - 1) < 0.01
    uniform_std = {  # (fn, kwargs, expected std)
        "xavier": (init.xavier_uniform_, dict(gain=2.0), 2 * math.sqrt(2 / (fan_in + fan_out))),
        "kaiming": (init.kaiming_uniform_, dict(nonlinearity="relu"), math.sqrt(2 / fan_in)),
        "kaiming_out": (init.kaiming_uniform_, dict(mode="fan_out", a=0.5),
                        math.sqrt(2 / 1.25 / fan_out)),
    }
    for name, (fn, kwargs, std) in uniform_std.items():
        v = _drawn(fn, generator=g, **kwargs)
        assert np.abs(v).max() <= math.sqrt(3) * std * (1 + 1e-6), name
        assert abs(v.std() / std - 1) < 0.02 and abs(v.mean()) < 0.02 * std, name
    normal_std = {
        "xavier": (init.xavier_normal_, dict(), math.sqrt(2 / (fan_in + fan_out))),
        "kaiming": (init.kaiming_normal_, dict(mode="fan_out", nonlinearity="tanh"),
                    5 / 3 / math.sqrt(fan_out)),
    }
    for name, (fn, kwargs, std) in normal_std.items():
        v = _drawn(fn, generator=g, **kwargs)
        assert abs(v.std() / std - 1) < 0.02 and abs(v.mean()) < 0.02 * std, name
        assert abs(((v / std) ** 4).mean() - 3) < 0.15, name  # normal, not uniform, tails


def test_init_reproducible_and_constant():
    a = _drawn(init.kaiming_normal_, generator=jt.Generator().manual_seed(5))
    b = _drawn(init.kaiming_normal_, generator=jt.Generator().manual_seed(5))
    np.testing.assert_array_equal(a, b)
    jt.manual_seed(5)
    c = _drawn(init.xavier_uniform_)
    jt.manual_seed(5)
    np.testing.assert_array_equal(c, _drawn(init.xavier_uniform_))
    np.testing.assert_array_equal(_drawn(init.constant_, (2, 3), val=0.5), 0.5)
    np.testing.assert_array_equal(_drawn(init.ones_, (2, 3)), 1)
    np.testing.assert_array_equal(_drawn(init.zeros_, (2, 3)), 0)
    view = jt.zeros(4, 6)[:, ::2]  # non-contiguous targets are filled too
    init.uniform_(view, 1.0, 2.0)
    assert values(view).min() >= 1.0
    f64 = jt.zeros(3, 3, dtype=jt.float64)
    assert init.normal_(f64).dtype is jt.float64
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(jt.zeros(0, 3))


# -- nn.functional versus torch ------------------------------------------------------------------
@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_activations_match_torch(torch):
    x = jt.randn(3, 4, 5)
    tx = to_torch(x)
    tF = torch.nn.functional
    close(F.relu(x), tF.relu(tx))
    close(F.sigmoid(x), torch.sigmoid(tx))
    close(F.tanh(x), torch.tanh(tx))
    for dim in (0, 1, -1):
        close(F.softmax(x, dim), tF.softmax(tx, dim))
        close(F.log_softmax(x, dim), tF.log_softmax(tx, dim), atol=1e-5)
    close(F.softmax(x, 1, dtype=jt.float64), tF.softmax(tx, 1, dtype=torch.float64), rtol=1e-12)
    for shape in ((4,), (3, 4), (2, 3, 4)):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
            mine = F.softmax(jt.ones(*shape))
        with pytest.warns(UserWarning):
            close(mine, tF.softmax(torch.ones(*shape)))


def test_mse_loss_matches_torch(torch):
    x, y = jt.randn(4, 3), jt.randn(4, 3)
    for reduction in ("mean", "sum", "none"):
        close(F.mse_loss(x, y, reduction=reduction),
              torch.nn.functional.mse_loss(to_torch(x), to_torch(y), reduction=reduction),
              rtol=1e-5)
        close(nn.MSELoss(reduction=reduction)(x, y),
              torch.nn.MSELoss(reduction=reduction)(to_torch(x), to_torch(y)), rtol=1e-5)
    with pytest.warns(UserWarning, match="different to the input size"):
        close(F.mse_loss(x, y[0]), torch.nn.functional.mse_loss(to_torch(x), to_torch(y[0])))
    with pytest.raises(ValueError, match="'avg' is not a valid value for reduction"):
        F.mse_loss(x, y, reduction="avg")
    with pytest.raises(ValueError, match="'total' is not a valid value"):
        nn.CrossEntropyLoss(reduction="total")


CLASS_CASES = [  # (input shape, target shape)
    ((6, 5), (6,)),
    ((5,), ()),
    ((3, 4, 2, 2), (3, 2, 2)),
]


def _class_inputs(in_shape, t_shape, seed, n_classes, ignore=None):
    rng = np.random.default_rng(seed)
    x = jt.tensor(rng.standard_normal(in_shape).astype(np.float32) * 2)
    target = rng.integers(0, n_classes, t_shape)
    if ignore is not None and target.ndim:
        target.reshape(-1)[::3] = ignore
    return x, jt.tensor(target)


@pytest.mark.parametrize("in_shape,t_shape", CLASS_CASES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_class_losses_match_torch(torch, in_shape, t_shape, reduction):
    tF = torch.nn.functional
    n_classes = in_shape[0 if len(in_shape) == 1 else 1]
    weight = jt.tensor(np.linspace(0.5, 2.0, n_classes).astype(np.float32))
    for seed, (w, ignore, smoothing) in enumerate([(None, None, 0.0), (weight, None, 0.0),
                                                   (None, 2, 0.0), (weight, 1, 0.2),
                                                   (None, -100, 0.3), (weight, None, 1.0)]):
        x, t = _class_inputs(in_shape, t_shape, seed, n_classes,
                             None if ignore == -100 else ignore)
        kw = dict(reduction=reduction, ignore_index=-100 if ignore is None else ignore)
        tw = None if w is None else to_torch(w)
        expected = tF.cross_entropy(to_torch(x), to_torch(t), tw, label_smoothing=smoothing,
                                    **kw)
        close(F.cross_entropy(x, t, w, label_smoothing=smoothing, **kw), expected, rtol=1e-5)
        close(nn.CrossEntropyLoss(w, label_smoothing=smoothing, **kw)(x, t), expected, rtol=1e-5)
        logp = F.log_softmax(x, 0 if len(in_shape) == 1 else 1)
        expected = tF.nll_loss(to_torch(logp), to_torch(t), tw, **kw)
        close(F.nll_loss(logp, t, w, **kw), expected, rtol=1e-5)
        close(nn.NLLLoss(w, **kw)(logp, t), expected, rtol=1e-5)


@pytest.mark.parametrize("in_shape", [(6, 5), (5,), (3, 4, 2)])
def test_cross_entropy_probability_targets_match_torch(torch, in_shape):
    rng = np.random.default_rng(0)
    x = jt.tensor(rng.standard_normal(in_shape).astype(np.float32))
    d = 0 if len(in_shape) == 1 else 1
    probs = F.softmax(jt.tensor(rng.standard_normal(in_shape).astype(np.float32)), d)
    weight = jt.tensor(np.linspace(0.5, 2.0, in_shape[d]).astype(np.float32))
    for reduction in ("mean", "sum", "none"):
        for w, smoothing in ((None, 0.0), (weight, 0.25)):
            expected = torch.nn.functional.cross_entropy(
                to_torch(x), to_torch(probs), None if w is None else to_torch(w),
                reduction=reduction, label_smoothing=smoothing)
            close(F.cross_entropy(x, probs, w, reduction=reduction, label_smoothing=smoothing),
                  expected, rtol=1e-5)


def test_class_loss_errors():
    x = jt.randn(4, 3)
    with pytest.raises(ValueError, match=r"expected a target of shape \(4,\).*got \(3,\)"):
        F.cross_entropy(x, jt.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="class indices"):
        F.nll_loss(x, jt.tensor([True, False, True, True]))
    with pytest.raises(ValueError, match="must have input's shape"):
        F.cross_entropy(x, jt.rand(4, 2))
    with pytest.raises(RuntimeError, match="for all 3 classes or no classes"):
        F.cross_entropy(x, jt.tensor([0, 1, 2, 0]), jt.ones(4))
    with pytest.raises(IndexError, match=r"target 3 is out of bounds for 3 classes.*\[0, 2\]"):
        F.cross_entropy(x, jt.tensor([0, 1, 2, 3]))
    with pytest.raises(ValueError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(x, jt.tensor([0, 1, 2, 0]), label_smoothing=1.5)
    with pytest.raises(ValueError, match="'batchmean' is not a valid value"):
        F.nll_loss(x, jt.tensor([0, 1, 2, 0]), reduction="batchmean")
    all_ignored = F.cross_entropy(x, jt.full((4,), -100))
    assert math.isnan(all_ignored.item())  # 0 / 0, as in torch
    small = F.cross_entropy(x, jt.tensor([0, 1, 2, 0], dtype=jt.int32))
    close(small, values(F.cross_entropy(x, jt.tensor([0, 1, 2, 0]))))


def test_loss_modules_keep_weight_as_buffer(torch):
    w = jt.tensor([1.0, 2.0, 0.5])
    assert list(nn.CrossEntropyLoss(w).state_dict()) == \
        list(torch.nn.CrossEntropyLoss(to_torch(w)).state_dict())
    assert list(nn.NLLLoss().state_dict()) == []


# -- gradients and training (need autograd) ------------------------------------------------------
def _grads_match(torch, fn, torch_fn, *inputs, rtol=1e-5):
    """fn(*jt inputs) and torch_fn(*torch inputs): same value and gradient for every input."""
    mine = [t.detach().requires_grad_() for t in inputs]
    theirs = [to_torch(t, requires_grad=True) for t in inputs]
    out, ref = fn(*mine), torch_fn(*theirs)
    close(out, ref, rtol=rtol)
    out.sum().backward()
    ref.sum().backward()
    for m, t in zip(mine, theirs, strict=False):
        close(m.grad, t.grad, rtol=rtol, atol=1e-6)


def test_functional_gradients_match_torch(torch):
    tF = torch.nn.functional
    x, w, b = jt.randn(4, 5), jt.randn(3, 5), jt.randn(3)
    _grads_match(torch, F.linear, tF.linear, x, w, b)
    _grads_match(torch, lambda a: F.log_softmax(a, 1), lambda a: tF.log_softmax(a, 1), x)
    y = jt.randn(4, 5)
    for reduction in ("mean", "sum", "none"):
        _grads_match(torch, lambda a, c, r=reduction: F.mse_loss(a, c, reduction=r),
                     lambda a, c, r=reduction: tF.mse_loss(a, c, reduction=r), x, y)
    t = jt.tensor([0, 4, -100, 2])
    weight = jt.tensor([1.0, 2.0, 0.5, 1.5, 1.0])
    for reduction in ("mean", "sum", "none"):
        _grads_match(torch,
                     lambda a, r=reduction: F.cross_entropy(a, t, weight, reduction=r,
                                                            label_smoothing=0.1),
                     lambda a, r=reduction: tF.cross_entropy(a, to_torch(t), to_torch(weight),
                                                             reduction=r, label_smoothing=0.1),
                     x)
    probs = F.softmax(jt.randn(4, 5), 1)
    _grads_match(torch, lambda a: F.cross_entropy(a, probs),
                 lambda a: tF.cross_entropy(a, to_torch(probs)), x)


def test_dropout_gradient_is_the_mask():
    x = jt.ones(1000, requires_grad=True)
    y = F.dropout(x, 0.25)
    y.sum().backward()
    np.testing.assert_allclose(values(x.grad), values(y))


def test_training_matches_torch(torch):
    """Forward, backward and optimizer steps of a small MLP, from the same weights and data."""
    jt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    ref = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    ref.load_state_dict({k: to_torch(v) for k, v in model.state_dict().items()})
    x, t = jt.randn(16, 4), jt.randint(0, 3, (16,))
    opt = jt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for _ in range(5):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), t)
        loss.backward()
        opt.step()
        ref_opt.zero_grad()
        ref_loss = torch.nn.functional.cross_entropy(ref(to_torch(x)), to_torch(t))
        ref_loss.backward()
        ref_opt.step()
        close(loss, ref_loss, rtol=1e-5)
    for p, q in zip(model.parameters(), ref.parameters(), strict=False):
        close(p, q, rtol=1e-4, atol=1e-5)


def test_training_converges():
    """An MLP learns XOR-like labels with Adam, dropout in training, eval without it."""
    jt.manual_seed(0)
    x = jt.rand(256, 2) * 2 - 1
    labels = ((x[:, 0] > 0) != (x[:, 1] > 0)).long()
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 2))
    opt = jt.optim.Adam(model.parameters(), lr=0.02)
    loss_fn = nn.CrossEntropyLoss()
    first = None
    for _ in range(300):
        opt.zero_grad()
        loss = loss_fn(model(x), labels)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    model.eval()
    with jt.no_grad():
        accuracy = (model(x).argmax(1) == labels).float().mean().item()
    assert loss.item() < first / 4 and accuracy > 0.95

"""torch.nn's recurrent layers: RNN (tanh or relu), LSTM (with proj_size), GRU and their
single-step cells, with torch's constructor arguments, parameter names, shapes and order
(state dicts load from torch's), initialisation, repr, checks and gate order.

Each layer and direction projects the input of all time steps in one product, then runs the
recurrence of ops/recurrent.py: one fused op (one kernel for the whole time loop each way, one
recorded node) where the device has its kernels, else the steps composed from ops. A
PackedSequence input runs the same steps on the sequences still running at each step (the
others keep their last state, which is their h_n/c_n) and gives a PackedSequence back."""
import math
import warnings
from numbers import Number

from ...creation import empty, zeros
from ...ops import recurrent
from ...ops.shape import cat, stack
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = recurrent.GATES


class _Recurrent(Module):
    """What the layers and the cells share, as torch repeats it in RNNBase and RNNCellBase:
    every parameter drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), and a repr of
    the sizes followed by the settings that differ from their defaults."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _extra_repr(self, *fields):
        """The two sizes, then name=value for each (name, shown) pair that is shown."""
        return ", ".join([f"{self.input_size}, {self.hidden_size}"] +
                         [f"{name}={getattr(self, name)}" for name, shown in fields if shown])


class RNNBase(_Recurrent):
    """What RNN, LSTM and GRU share: their parameters -- for layer k and each direction
    ("_reverse" for the backward one), weight_ih_l{k} (gates * hidden_size, input features),
    weight_hh_l{k} (gates * hidden_size, hidden features), bias_ih_l{k}, bias_hh_l{k} (with
    bias) and, for an LSTM with proj_size > 0, weight_hr_l{k} (proj_size, hidden_size), which
    makes the hidden state proj_size wide -- all drawn from U(-1/sqrt(hidden_size),
    1/sqrt(hidden_size)), and the multi-layer, bidirectional forward pass."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0, device=None,
                 dtype=None):
        super().__init__()
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        if not isinstance(dropout, Number) or isinstance(dropout, bool) \
                or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, \
            proj_size
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so "
                          f"non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int),
                                  ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                                f"{type(value).__name__}")
            if kind is int and value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gates = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        options = dict(device=device, dtype=dtype)
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            for direction in range(2 if bidirectional else 1):
                layer_input = input_size if layer == 0 else real_hidden * (2 if bidirectional
                                                                           else 1)
                shapes = [("weight_ih_l{}{}", (gates, layer_input)),
                          ("weight_hh_l{}{}", (gates, real_hidden))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gates,)), ("bias_hh_l{}{}", (gates,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = [name.format(layer, suffix) for name, _ in shapes]
                for name, (_, shape) in zip(names, shapes, strict=False):
                    setattr(self, name, Parameter(empty(shape, **options)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        """The parameters in registration order (torch's attribute of that name)."""
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """One list of parameters per layer and direction, in torch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op: torch packs the weights into one buffer for cuDNN, and jitensor's forward
        reads the parameters as they are."""

    def extra_repr(self):
        return self._extra_repr(
            ("proj_size", self.proj_size != 0), ("num_layers", self.num_layers != 1),
            ("bias", self.bias is not True), ("batch_first", self.batch_first is not False),
            ("dropout", self.dropout != 0), ("bidirectional", self.bidirectional is not False))

    # -- checks (torch's) ---------------------------------------------------------------------
    def check_input(self, input, batch_sizes=None):
        weight = self._flat_weights[0]
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes=None):
        batch = self._batch(input, batch_sizes)
        width = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1), batch, width)

    def check_hidden_size(self, hx, expected_hidden_size,
                          msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def _batch(self, input, batch_sizes):
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def permute_hidden(self, hx, permutation):
        """hx with its batch (dim 1) in the order `permutation` (None: as it is)."""
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def _check_tensor_input(self, input):
        """The input's dim, 2 (unbatched) or 3; a non-tensor raises."""
        name = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: expected input to be a jitensor Tensor of shape (L, N, "
                            f"H_in), (N, L, H_in) with batch_first, unbatched (L, H_in), or a "
                            f"PackedSequence, got {type(input).__name__}")
        if input.dim() not in (2, 3):
            tail = " tensor instead" if self.mode.startswith("RNN") else " instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail}")
        return input.dim()

    def _zeros(self, input, width, batch_sizes=None):
        return zeros(self.num_layers * (2 if self.bidirectional else 1),
                     self._batch(input, batch_sizes), width, dtype=input.dtype,
                     device=input.device)

    # -- the recurrence ---------------------------------------------------------------------
    def _run(self, input, states, batch_sizes=None):
        """(output, final states): input (L, N, H_in) -- (N, L, H_in) with batch_first --,
        or a packed batch's data (sum of lengths, H_in) with its `batch_sizes` (a list), and
        `states` a tuple of (layers * directions, N, width) tensors (h, or h and c)."""
        packed = batch_sizes is not None
        if not packed and input.size(1 if self.batch_first else 0) == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        x = input.transpose(0, 1) if self.batch_first and not packed else input
        directions = 2 if self.bidirectional else 1
        initial = [s.unbind(0) for s in states]
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                names = self._all_weights[index]
                out, state = self._direction(x, tuple(s[index] for s in initial), names,
                                             direction == 1, batch_sizes)
                outputs.append(out)
                for store, value in zip(finals, state, strict=False):
                    store.append(value)
            x = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        output = x.transpose(0, 1) if self.batch_first and not packed else x
        return output, tuple(stack(store) for store in finals)

    def _direction(self, x, state, names, reverse, batch_sizes):
        """One layer in one direction over x (L, N, features), or packed data with its
        batch_sizes: the input projection of every step in one product, then the recurrence."""
        p = dict(zip((n.split("_l")[0] for n in names), (getattr(self, n) for n in names),
                     strict=False))
        b_hh = p.get("bias_hh")
        projected = recurrent.project(self.mode, x, p["weight_ih"], p.get("bias_ih"), b_hh)
        return recurrent.run(self.mode, projected, state, p["weight_hh"], b_hh,
                             p.get("weight_hr"), reverse, batch_sizes)


def _reject_proj_size(cls, kwargs):
    """RNN and GRU take no proj_size (torch's ValueError), nor any other unknown keyword."""
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")


class _SingleState(RNNBase):
    """RNN and GRU: one hidden state hx (layers * directions, N, hidden_size)."""

    def forward(self, input, hx=None):
        """(output (L, N, directions * hidden_size) -- batch first with batch_first, (L, ...)
        unbatched, a PackedSequence for one --, h_n (layers * directions, N, hidden_size));
        hx defaults to zeros."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            hx = self._zeros(data, self.hidden_size, batch_sizes) if hx is None else \
                self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(data, hx, batch_sizes)
            output, (hidden,) = self._run(data, (hx,), batch_sizes.tolist())
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        batched = self._check_tensor_input(input) == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                                       f"{hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                               f"{hx.dim()}-D tensor")
        if hx is None:
            hx = self._zeros(input, self.hidden_size)
        self.check_forward_args(input, hx)
        output, (hidden,) = self._run(input, (hx,))
        if not batched:
            output, hidden = output.squeeze(batch_dim), hidden.squeeze(1)
        return output, hidden


class RNN(_SingleState):
    """Elman RNN: h_t = nonlinearity(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), nonlinearity
    'tanh' or 'relu', over num_layers layers (dropout between them while training), in both
    directions when bidirectional (outputs concatenated, forward first)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None,
                 **kwargs):
        _reject_proj_size(type(self), kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class GRU(_SingleState):
    """Gated recurrent unit (gates r, z, n as torch orders them in weight_ih and weight_hh):
    r = sigmoid(W_ir x + b_ir + W_hr h + b_hr), z likewise, n = tanh(W_in x + b_in +
    r (W_hn h + b_hn)), h' = (1 - z) n + z h; layers, dropout and directions as RNN's."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _reject_proj_size(type(self), kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, device=device, dtype=dtype)


class LSTM(RNNBase):
    """Long short-term memory (gates i, f, g, o as torch orders them): c' = f c + i g,
    h' = o tanh(c'), projected to proj_size features by weight_hr when proj_size > 0; layers,
    dropout and directions as RNN's. State (h, c): h is proj_size (else hidden_size) wide, c
    hidden_size."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device=device, dtype=dtype)

    def get_expected_cell_size(self, input, batch_sizes=None):
        return (self.num_layers * (2 if self.bidirectional else 1),
                self._batch(input, batch_sizes), self.hidden_size)

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def forward(self, input, hx=None):
        """(output (L, N, directions * H_out), (h_n (layers * directions, N, H_out), c_n
        (layers * directions, N, hidden_size))), H_out = proj_size or hidden_size; hx = (h_0,
        c_0) defaults to zeros. A PackedSequence input gives a PackedSequence output."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is None:
                width = self.proj_size if self.proj_size > 0 else self.hidden_size
                hx = (self._zeros(data, width, batch_sizes),
                      self._zeros(data, self.hidden_size, batch_sizes))
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(data, hx, batch_sizes)
            output, hidden = self._run(data, tuple(hx), batch_sizes.tolist())
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        batched = self._check_tensor_input(input) == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
        if hx is None:
            hx = (self._zeros(input, self.proj_size if self.proj_size > 0 else self.hidden_size),
                  self._zeros(input, self.hidden_size))
        else:
            want = 3 if batched else 2
            if hx[0].dim() != want or hx[1].dim() != want:
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx)
        output, (h, c) = self._run(input, tuple(hx))
        if not batched:
            output, h, c = output.squeeze(batch_dim), h.squeeze(1), c.squeeze(1)
        return output, (h, c)


# -- cells -------------------------------------------------------------------------------------
class RNNCellBase(_Recurrent):
    """A single step: weight_ih (chunks * hidden_size, input_size), weight_hh (chunks *
    hidden_size, hidden_size), bias_ih and bias_hh (with bias), drawn from
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)). Inputs (N, input_size) or unbatched
    (input_size,)."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        options = dict(device=device, dtype=dtype)
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, **options))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, **options))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **options))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **options))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        nonlinearity = self.__dict__.get("nonlinearity", "tanh")
        return self._extra_repr(("bias", self.bias is not True),
                                ("nonlinearity", nonlinearity != "tanh"))

    def _batched(self, input, hidden, what):
        """Whether input is 2-D (else 1-D: unbatched); torch's ValueError for other dims."""
        name = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: expected input to be a jitensor Tensor, got "
                            f"{type(input).__name__}")
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             f"instead")
        for label, h in zip(what, hidden, strict=False):
            if h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {h.dim()}D "
                                 f"instead")
        return input.dim() == 2

    def _step(self, mode, input, state):
        """One step of `mode` from state (each (N, hidden_size)), with torch's checks of the
        input and hidden sizes."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        for i, h in enumerate(state):
            if h.dim() and h.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} "
                                   f"batch size {h.size(0)}")
            if h.dim() > 1 and h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, "
                                   f"expected {self.hidden_size}")
            if h.dim() != 2:
                want = (input.size(0), self.hidden_size)
                raise RuntimeError(f"hidden{i} should be of shape {want} (batch, hidden_size), "
                                   f"got {tuple(h.shape)}")
        projected = recurrent.project(mode, input, self.weight_ih, self.bias_ih, self.bias_hh)
        return recurrent.run(mode, projected, state, self.weight_hh, self.bias_hh, None, False,
                             (input.size(0),))[1]

    def _zeros(self, input):
        return zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)


class _SingleStateCell(RNNCellBase):
    """RNNCell and GRUCell: one hidden state; _mode() names the step."""

    def forward(self, input, hx=None):
        """h' (N, hidden_size), or (hidden_size,) unbatched; hx defaults to zeros."""
        batched = self._batched(input, () if hx is None else (hx,), ("hidden",))
        if not batched:
            input = input.unsqueeze(0)
        hx = self._zeros(input) if hx is None else hx if batched else hx.unsqueeze(0)
        (h,) = self._step(self._mode(), input, (hx,))
        return h if batched else h.squeeze(0)


class RNNCell(_SingleStateCell):
    """h' = nonlinearity(x W_ih^T + b_ih + h W_hh^T + b_hh), nonlinearity 'tanh' or 'relu'."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def _mode(self):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"


class LSTMCell(RNNCellBase):
    """(h', c'): gates i, f, g, o of x W_ih^T + b_ih + h W_hh^T + b_hh; c' = f c + i g,
    h' = o tanh(c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        """(h', c'), each (N, hidden_size) or (hidden_size,) unbatched; hx = (h, c) defaults
        to zeros."""
        batched = self._batched(input, () if hx is None else hx, ("hx[0]", "hx[1]"))
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = (self._zeros(input),) * 2
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = self._step("LSTM", input, tuple(hx))
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(_SingleStateCell):
    """h': gates r, z, n; n = tanh(W_in x + b_in + r (W_hn h + b_hn)), h' = (1 - z) n + z h."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def _mode(self):
        return "GRU"

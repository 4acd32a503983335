"""torch.nn.utils.rnn: PackedSequence and the packing and padding of variable-length sequences.

A packed batch keeps, time step after time step, the elements of the sequences still running at
that step: ``data`` (sum of the lengths, *) and ``batch_sizes`` (how many sequences run at each
step, non-increasing, an int64 CPU tensor), the sequences ordered longest first
(``sorted_indices`` gives that order when the caller's was another, ``unsorted_indices`` undoes
it). Packing and padding are composed from slicing, cat and indexing, so both differentiate."""
from collections import namedtuple
from collections.abc import Iterable

from ... import dtypes
from ...creation import arange, as_tensor, empty_like, full
from ...dtypes import int64
from ...ops.shape import cat
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence",
           "pad_packed_sequence", "pad_sequence", "unpack_sequence", "unpad_sequence"]


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (None for None)."""
    if permutation is None:
        return None
    output = empty_like(permutation)
    output.scatter_(0, permutation, arange(permutation.numel(), device=permutation.device))
    return output


class PackedSequence(namedtuple("PackedSequence_",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A packed batch of sequences (see the module docstring). Build it with
    pack_padded_sequence or pack_sequence; the recurrent layers take and return it."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes)), as torch allows
            data, batch_sizes = data
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence "
                             "should never be created manually. They should be instantiated by "
                             "functions like pack_sequence and pack_padded_sequences in "
                             "nn.utils.rnn. "
                             "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The data converted by Tensor.to (the indices follow it to its device); self when
        nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def move(t):
            return None if t is None else t.to(data.device)
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def cuda(self, *args, **kwargs):
        return self.to(*args, device="cuda", **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to(*args, device="cpu", **kwargs)

    def double(self):
        return self.to(dtype=dtypes.float64)

    def float(self):
        return self.to(dtype=dtypes.float32)

    def half(self):
        return self.to(dtype=dtypes.float16)

    def long(self):
        return self.to(dtype=dtypes.int64)

    def int(self):
        return self.to(dtype=dtypes.int32)

    def short(self):
        return self.to(dtype=dtypes.int16)

    def char(self):
        return self.to(dtype=dtypes.int8)

    def byte(self):
        return self.to(dtype=dtypes.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False  # jitensor never pins host memory


def _lengths_tensor(lengths):
    lengths = as_tensor(lengths, dtype=int64, device="cpu") if not isinstance(lengths, Tensor) \
        else lengths.to("cpu")
    if lengths.dim() != 1 or lengths.dtype != int64:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D cpu {lengths.dtype} tensor")
    return lengths


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack `input` (T, B, *) -- (B, T, *) with batch_first --, whose sequence b is
    lengths[b] long. With enforce_sorted the lengths must not increase; otherwise the batch is
    sorted first and the order kept in sorted_indices."""
    lengths = _lengths_tensor(lengths)
    batch_dim = 0 if batch_first else 1
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = lengths.sort(descending=True, stable=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(batch_dim, sorted_indices)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch = input.size(batch_dim)
    if lengths.size(0) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lengths.size(0)} (batch_size={batch})")
    values = lengths.tolist()
    if values[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(b > a for a, b in zip(values, values[1:], strict=False)):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    steps = input.size(1 - batch_dim)
    if values[0] > steps:
        raise RuntimeError(f"a length ({values[0]}) exceeds the padded sequence length "
                           f"({steps})")
    if batch_first:
        input = input.transpose(0, 1)
    batch_sizes = [sum(1 for n in values if n > t) for t in range(values[0])]
    data = cat([input[t, :size] for t, size in enumerate(batch_sizes)])
    return PackedSequence(data, as_tensor(batch_sizes, dtype=int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded (T, B, *) -- (B, T, *) with batch_first
    --, lengths, an int64 CPU tensor), the batch in the caller's order, T = total_length or
    the longest length."""
    batch_sizes = sequence.batch_sizes.tolist()
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    data = sequence.data
    batch = batch_sizes[0]
    out = full((steps, batch, *data.shape[1:]), padding_value, dtype=data.dtype,
               device=data.device)
    offset = 0
    for t, size in enumerate(batch_sizes):
        out[t, :size] = data[offset:offset + size]
        offset += size
    lengths = as_tensor([sum(1 for size in batch_sizes if size > b) for b in range(batch)],
                        dtype=int64)
    if batch_first:
        out = out.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        out = out.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return out, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of shape (L_i, *) into (T, B, *) (or (B, T, *) with batch_first),
    T = max L_i, filling the rest with padding_value. Differentiable in the sequences; the
    result has the first sequence's dtype and device."""
    if isinstance(sequences, Tensor):  # torch takes a tensor as the sequences it unbinds to
        sequences = sequences.unbind(0)
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    first = sequences[0]
    max_len = max(s.size(0) for s in sequences)
    shape = (len(sequences), max_len) if batch_first else (max_len, len(sequences))
    out = full(shape + tuple(first.shape[1:]), padding_value, dtype=first.dtype,
               device=first.device)
    for i, seq in enumerate(sequences):
        length = seq.size(0)
        steps = slice(0, length) if padding_side == "right" else slice(max_len - length, max_len)
        out[(i, steps) if batch_first else (steps, i)] = seq
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences pad_sequence was given back, sequence i cut to lengths[i]. Unlike
    torch's, it leaves padded_sequences as it was (torch transposes it in place)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    idx = arange(padded_sequences.shape[1], device=lengths.device)
    # boolean masks copy, as torch's do: the results do not alias the padded tensor
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences (L_i, *) (longest first with enforce_sorted)."""
    lengths = as_tensor([v.size(0) for v in sequences], dtype=int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in the caller's order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

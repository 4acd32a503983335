"""Padding of variable-length sequences (torch.nn.utils.rnn's pad_sequence, unpad_sequence)."""
from collections.abc import Iterable

from ...creation import arange, full

__all__ = ["pad_sequence", "unpad_sequence"]


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of shape (L_i, *) into (T, B, *) (or (B, T, *) with batch_first),
    T = max L_i, filling the rest with padding_value. Differentiable in the sequences; the
    result has the first sequence's dtype and device."""
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

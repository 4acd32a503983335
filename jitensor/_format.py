"""Tensor repr as torch prints it (a port of the rules in torch/_tensor_str.py).

Values are formatted from a host NumPy copy of the (summarised) data: no kernel is involved."""
import math
from dataclasses import dataclass

import numpy as np


@dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: object = None


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """torch.set_printoptions: ``profile`` is "default", "short" or "full"."""
    if profile is not None:
        presets = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
                   "full": (4, math.inf, 3, 80)}
        if profile not in presets:
            raise ValueError(f"set_printoptions(): profile must be one of {list(presets)}, "
                             f"got {profile!r}")
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = presets[profile]
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


class _Formatter:
    """Chooses one width and notation (integer-valued, fixed or scientific) for all elements."""

    def __init__(self, values, floating):
        self.floating, self.int_mode, self.sci_mode, self.max_width = floating, True, False, 1
        p = PRINT_OPTS.precision
        if not floating:
            self.max_width = max((len(str(v)) for v in values.tolist()), default=1)
            return
        finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
        if finite.size:
            absval = np.abs(finite)
            lo, hi = absval.min(), absval.max()
            self.int_mode = bool(np.all(finite == np.ceil(finite)))
            # the notation first (an explicit sci_mode wins), then the width in it (torch 2.x)
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4 \
                if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode
            if self.sci_mode:
                widths = [len(f"{v:.{p}e}") for v in finite.tolist()]
            elif self.int_mode:
                widths = [len(f"{v:.0f}") + 1 for v in finite.tolist()]
            else:
                widths = [len(f"{v:.{p}f}") for v in finite.tolist()]
            self.max_width = max(widths)

    def format(self, value):
        p = PRINT_OPTS.precision
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{p}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{p}f}"
        return " " * (self.max_width - len(text)) + text


class _ComplexFormatter:
    """torch's complex form: the real and imaginary parts each with its own formatter."""

    def __init__(self, values):
        self.real, self.imag = _Formatter(values.real, True), _Formatter(values.imag, True)
        self.max_width = self.real.max_width + self.imag.max_width + 1  # (and the "j")

    def format(self, value):
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return self.real.format(value.real) + (imag if imag[0] in "+-" else "+" + imag)


def _summary(a, edge):
    """The edge items of every dim, as torch's get_summarized_data keeps them."""
    if a.ndim == 0:
        return a.reshape(-1)
    if a.shape[0] > 2 * edge:
        a = np.concatenate([a[:edge], a[-edge:]])
    return np.concatenate([_summary(row, edge) for row in a]) if a.ndim > 1 else a


def _vector(a, indent, summarize, fmt):
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2)))
    edge = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * edge:
        items = [fmt.format(v) for v in a[:edge].tolist()] + [" ..."] + \
                [fmt.format(v) for v in a[-edge:].tolist()]
    else:
        items = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * edge:
        rows = [_nested(r, indent + 1, summarize, fmt) for r in a[:edge]] + ["..."] + \
               [_nested(r, indent + 1, summarize, fmt) for r in a[-edge:]]
    else:
        rows = [_nested(r, indent + 1, summarize, fmt) for r in a]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _with_suffixes(text, suffixes, indent):
    parts, last = [text], len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        # measured as torch's "torch.float64": lines break where torch breaks them
        width = len(suffix.replace("jitensor.", "torch."))
        if last + width + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + width
        else:
            parts.append(", " + suffix)
            last += width + 2
    return "".join(parts) + ")"


def tensor_repr(host, dtype, device, default_dtype, requires_grad, grad_fn=None, tangent=None):
    """`host` is a NumPy copy of the tensor's values; the rest describes the tensor (`tangent`:
    the repr of its forward AD tangent)."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if device.type != "cpu":
        suffixes.append(f"device='{device}'")
    if host.size == 0:
        if host.ndim != 1:
            suffixes.append(f"size={tuple(host.shape)}")
        if dtype is not default_dtype and dtype is not default_dtype.to_complex():
            suffixes.append(f"dtype={dtype}")
        body = "[]"
    else:
        if dtype.name not in (default_dtype.name, default_dtype.to_complex().name, "int64",
                              "bool"):
            suffixes.append(f"dtype={dtype}")
        summarize = host.size > PRINT_OPTS.threshold
        values = host.astype(np.float32) if dtype.name == "float16" else host
        shown = _summary(values, PRINT_OPTS.edgeitems) if summarize else values.reshape(-1)
        fmt = _ComplexFormatter(shown) if dtype.is_complex else \
            _Formatter(shown, dtype.is_floating_point)
        body = _nested(values, indent, summarize, fmt)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")
    return _with_suffixes(prefix + body, suffixes, indent)

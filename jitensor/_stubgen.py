"""Type stubs for readers and IDEs: ``python -m jitensor._stubgen`` writes jitensor/tensor.pyi and
jitensor/__init__.pyi from the package as it is at runtime.

Most Tensor methods and operators are attached at import from each op module's TENSOR_METHODS
(jitensor/ops/__init__.py), and the public functions arrive by star imports, so neither the
source nor an IDE shows them. The stubs declare them all: tensor.pyi the Tensor class (every
method, operator, property and attribute it has at runtime) and everything else tensor.py
defines; __init__.pyi every public name of jitensor (``__all__`` and the other public
attributes of a freshly imported package), functions with their signatures, classes
re-exported from their modules, submodules as ``from . import nn as nn``.

Signatures are the runtime ones (``inspect.signature``, which follows the ``__wrapped__`` of
autograd's ``functools.wraps``); each callable's docstring contributes its summary (its first
sentence). Types come from three small maps below: PARAMS by parameter name (with OVERRIDES
for the few names that mean something else in one function), RETURNS by function name, and
ATTRIBUTES for properties and slots; what they do not cover is ``Any``.

Run it after adding or changing an op, a Tensor method or a public name; tests/test_stubs.py
fails until the committed stubs match. ``--check`` reports stale stubs without writing.
"""
import argparse
import ast
import difflib
import importlib.util
import inspect
import json
import math
import re
import sys
import textwrap
import types
from pathlib import Path

import jitensor
from jitensor.ops import _common

LINE = 100  # pyproject.toml's ruff line-length

# -- the type maps --------------------------------------------------------------------------------
# Written with the plain names; in the stubs int, float, bool, dtype and device become _int,
# _float, _bool, _DType and _Device (_ALIASES), since Tensor.int()/.float()/.bool()/.dtype/
# .device and jitensor.int/float/bool (dtypes) shadow them where the stubs use them.
SCALAR = "float | int | bool"
TENSOR_OR_SCALAR = "Tensor | float | int | bool"
SIZE = "int | Sequence[int]"


def _by_type(groups):
    """{type: "name name ..."} -> {name: type} (a name listed twice is an error)."""
    pairs = [(name, type_) for type_, names in groups.items() for name in names.split()]
    assert len(pairs) == len(dict(pairs)), "a name is listed under two types"
    return dict(pairs)


# Parameter types by name. A parameter whose default is None gets `| None`; `*name` is the
# type of each positional it collects; the first parameter of a method (self) has none.
# Unlisted names are Any.
PARAMS = _by_type({
    "Tensor": "input self tensor mask index src source indices condition mat mat1 mat2 vec "
              "vec1 vec2 batch1 batch2 tensor1 tensor2 A B L a b x y x1 x2 values weights "
              "fweights aweights prepend append gradient boundaries sorted_sequence sorter "
              "state grad *tensors",
    TENSOR_OR_SCALAR: "other exponent min max start end weight elements test_elements fill_value "
                      "*operands",
    SCALAR: "step s identity",
    "Tensor | float": "q",
    "float": "alpha beta value rtol atol eps rcond nan posinf neginf lambd median sigma mean "
             "std base dx correction p",
    "int": "k n diagonal offset dim0 dim1 dim2 start_dim end_dim chunks num_samples minlength "
           "length window_length steps m r N row col output_size edgeitems threshold linewidth "
           "precision seed low high output_nr",
    "bool": "keepdim descending stable largest sorted unbiased upper some equal_nan "
            "return_inverse return_counts as_tuple replacement density periodic sparse_grad "
            "non_blocking copy requires_grad pin_memory create_graph retain_graph out_int32 "
            "right assume_unique invert increasing with_replacement force enabled sci_mode "
            "retains_grad",
    "str": "rounding_mode interpolation compute_mode indexing side profile kind spec name",
    # `out`: a sequence of tensors where the op returns a tuple (_param_type)
    "Tensor | None": "out",
    # `dim`: one int where it is required or defaults to an int (_param_type)
    SIZE: "dim dims shifts split_size_or_sections shape size stride *size *shape "
                           "*sizes *dims *dims_ *shapes",
    "Sequence[int]": "sizes",
    "int | Sequence[int] | Tensor": "indices_or_sections",
    "int | Tensor": "repeats",
    "int | Sequence[float] | Tensor": "bins",
    "tuple[float, float]": "range",
    "tuple[int, int]": "max_version dl_device",
    "Sequence[Tensor]": "tensors",
    "Tensor | Sequence[Tensor]": "inputs",
    "dtype | str": "dtype",
    "dtype": "d from_ to",
    "device | str | int": "device",
    "_Layout": "layout",
    "_MemoryFormat": "memory_format",
    "Generator": "generator",
    "NDArray[Any]": "ndarray",
    "Callable[..., Any]": "fn",
    "object": "obj",
})
# "function.parameter": type, where a name means something else in one function
OVERRIDES = {
    # `other` that must be a Tensor (the rest also take a Python scalar)
    **{f"{fn}.other": "Tensor" for fn in (
        "cross", "dist", "equal", "expand_as", "gcd", "inner", "is_same_size", "kron", "lcm",
        "ldexp", "matmul", "__matmul__", "__rmatmul__", "nextafter", "reshape_as", "type_as",
        "vdot", "view_as")},
    **{f"{fn}.{p}": "int | Sequence[int]" for fn in ("movedim", "moveaxis")
       for p in ("source", "destination")},
    **{f"{fn}.value": TENSOR_OR_SCALAR for fn in (
        "__setitem__", "fill_", "index_fill", "index_fill_", "masked_fill", "masked_fill_")},
    "select.index": "int", "narrow.start": "int | Tensor", "histc.min": "float",
    "histc.max": "float", "norm.p": "float | str", "bernoulli.p": "Tensor | float",
    "bernoulli_.p": "Tensor | float",
    "normal.mean": "Tensor | float", "normal.std": "Tensor | float", "_empty_like.dtype": "dtype",
    "logsumexp.dim": "int | Sequence[int]", "copy_.src": "Any",
    "randint.high": "int | Sequence[int]",  # randint(high, size) as torch
    **{f"{fn}.dim": "int | None" for fn in ("max", "min", "median", "nanmedian", "size",
                                            "stride")},
    "view.shape": "int | Sequence[int] | dtype", "promote_types.a": "dtype",
    "promote_types.b": "dtype", "elementwise.grad": "Any",
    "_Layout.__init__.name": "str", "_AutogradMeta.__init__.grad_fn": "Any",
    "__array__.dtype": "Any", "_rebuild.host": "NDArray[Any]", "_rebuild.dtype_name": "str",
    "_rebuild.device_name": "str", "_wrap.data": "Any", "check_fill_value.value": "Any",
    "_contiguous_strides.shape": "Sequence[int]", "_parse_to.args": "tuple[Any, ...]",
    "_parse_to.kwargs": "dict[str, Any]", "_new_kw.kw": "dict[str, Any]",
}

# Return types by function (or method) name. The default is Tensor for an op (a method attached
# from TENSOR_METHODS, a function of jitensor.ops or jitensor.creation) and Any otherwise;
# is_* are bool, set_* None, and an op named as a class of jitensor.return_types returns one.
RETURNS = _by_type({
    "Tensor": "to cpu cuda float double half int long short char byte bool contiguous clone "
              "detach detach_ requires_grad_ fill_ zero_ copy_ new_empty new_zeros new_ones "
              "new_full new_tensor _empty_like __new__ get_rng_state _wrap _rebuild einsum "
              "from_numpy from_dlpack Tensor.where",
    "bool": "equal allclose can_cast get_debug_empty __bool__",
    "int": "numel nelement dim ndimension element_size get_device data_ptr seed initial_seed "
           "get_num_threads __len__ __int__ __index__ __hash__ _dim",
    "float": "__float__",
    "str": "__repr__ __format__",
    "None": "backward record_stream retain_grad __setitem__ save __init__ check_requires_grad",
    "float | int | bool": "item _one check_fill_value",
    "tuple[Tensor, ...]": "split chunk unbind tensor_split hsplit vsplit dsplit "
                          "broadcast_tensors meshgrid unravel_index",
    "tuple[Tensor, Tensor]": "std_mean var_mean",
    "Any": "tolist unique unique_consecutive nonzero where atleast_1d atleast_2d atleast_3d "
           "__dlpack__ load elementwise reduction",  # the result's kind depends on arguments
    "NDArray[Any]": "numpy __array__ _host",
    "tuple[int, int]": "__dlpack_device__",
    "tuple[Any, ...]": "__reduce__",
    "Iterator[Tensor]": "__iter__",
    "dict[str, Any]": "_new_kw",
    "Size": "broadcast_shapes",
    "dtype": "get_default_dtype promote_types result_type",
    "Generator": "manual_seed",
    "_AutogradMeta": "_autograd",
    "tuple[int, ...]": "_contiguous_strides",
    "tuple[device | None, dtype | None]": "_parse_to",
    "return_types.linalg_slogdet": "slogdet",
    "Self": "__iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ __iand__ "
            "__ior__ __ixor__ __ilshift__ __irshift__",  # x += y: x itself
})
# Results that depend on whether one argument is given: name -> (argument, result without it,
# result with it); these become two @overload signatures.
OVERLOADS = {
    "size": ("dim", "Size", "int"), "stride": ("dim", "tuple[int, ...]", "int"),
    "type": ("dtype", "str", "Tensor"),
    **{fn: ("dim", "Tensor", f"return_types.{fn}") for fn in ("max", "min", "median",
                                                                "nanmedian")},
}
# Properties and slot attributes by name (properties with a setter also get one)
ATTRIBUTES = _by_type({
    "Tensor": "T mT data",
    "Tensor | None": "grad",
    "Size": "shape",
    "dtype": "dtype _dtype",
    "device": "device _device",
    "_Layout": "layout",
    "bool": "is_cuda is_cpu is_leaf requires_grad retains_grad",
    "int": "ndim itemsize nbytes _version output_nr",
    "str": "name",
    "Any": "grad_fn _data",
    "_AutogradMeta | None": "_meta",
    "dict[str, Any]": "__cuda_array_interface__",
})
# Signatures written by hand where the runtime's cannot say it (tuple's overloads)
HANDWRITTEN = {
    "Size.__getitem__": [
        "@overload",
        "def __getitem__(self, key: SupportsIndex) -> _int: ...",
        "@overload",
        "def __getitem__(self, key: slice) -> Size: ...",
    ],
}
# What the stubs' annotations may name, and where each comes from
IMPORTS = {
    "_bool": "from builtins import bool as _bool",
    "_float": "from builtins import float as _float",
    "_int": "from builtins import int as _int",
    "Callable": "from collections.abc import Callable",
    "Iterator": "from collections.abc import Iterator",
    "Sequence": "from collections.abc import Sequence",
    "Any": "from typing import Any",
    "ClassVar": "from typing import ClassVar",
    "SupportsIndex": "from typing import SupportsIndex",
    "overload": "from typing import overload",
    "Self": "from typing_extensions import Self",
    "NDArray": "from numpy.typing import NDArray",
    "_Device": "from .device import device as _Device",
    "_DType": "from .dtypes import dtype as _DType",
    "Generator": "from .random import Generator",
}
_ALIASES = {"int": "_int", "float": "_float", "bool": "_bool", "dtype": "_DType",
            "device": "_Device"}
_ALIASED = re.compile(r"\b(int|float|bool|dtype|device)\b")
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_BOILERPLATE = {"__module__", "__doc__", "__slots__", "__weakref__", "__dict__", "__qualname__",
                "__firstlineno__", "__static_attributes__"}
HEADER = ("# Generated by `python -m jitensor._stubgen` from the package at runtime: do not "
          "edit.\n# tests/test_stubs.py fails when it is out of date; regenerate it after "
          "changing an op.\n")


# -- rendering ------------------------------------------------------------------------------------
class _Stub:
    """One .pyi being written: the names its annotations use, for its imports."""

    def __init__(self, local):
        self.used, self.local = set(), local  # local: the names the stub defines

    def type(self, text):
        text = _ALIASED.sub(lambda m: _ALIASES[m[1]], text)
        self.used.update(_NAME.findall(text))
        return text

    def imports(self, extra=()):
        stdlib, third, local = set(), set(), set(extra)
        for name in sorted(self.used - self.local):
            line = IMPORTS.get(name)
            if line is None:
                continue
            module = line.split()[1]
            group = local if module.startswith(".") else \
                third if module.split(".")[0] in ("numpy", "typing_extensions") else stdlib
            group.add(line)
        return "\n\n".join("\n".join(_sort_imports(g)) for g in (stdlib, third, local) if g)


def _sort_imports(lines):
    """One import group in ruff's isort order: plain members of a module merged on one line,
    `x as y` imports one a line; by module, then member (constants, classes, the rest)."""
    def key(line):
        _, module, _, rest = line.split(" ", 3)
        member = rest.split(" as ")[0].split(",")[0]  # a merged line sorts by its first member
        kind = 0 if member.isupper() and len(member) > 1 else 1 if member[:1].isupper() else 2
        return (module, kind, member.lower(), " as " in rest, rest)
    merged = {}
    for line in lines:
        _, module, _, rest = line.split(" ", 3)
        if " as " in rest:
            merged[line] = None
        else:
            merged.setdefault(f"from {module} import", []).append(rest)
    out = []
    for head, members in merged.items():
        if members is None:
            out.append(head)
        else:
            members.sort(key=lambda m: (0 if m.isupper() and len(m) > 1 else
                                        1 if m[:1].isupper() else 2, m.lower()))
            out.append(f"{head} {', '.join(members)}")
    return sorted(out, key=key)


def _summary(doc):
    """The first sentence of a docstring's first paragraph, on one line."""
    if not doc:
        return ""
    text = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
    depth, code = 0, False
    for i, ch in enumerate(text):
        if ch == "`":
            code = not code
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif ch == "." and not code and not depth and text[i + 1:i + 2] == " " and i \
                and text[i - 1] != " " and not re.search(r"\b(e\.g|i\.e|etc|vs)$", text[:i]):
            return text[:i + 1]
    return text


def _docstring(doc, indent):
    """A docstring's summary as stub lines at `indent`, wrapped to LINE (or none)."""
    text = _summary(doc).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if not text:
        return []
    if text.endswith('"'):
        text = text[:-1] + '\\"'
    pad = " " * indent
    if indent + len(text) + 6 <= LINE:
        return [f'{pad}"""{text}"""']
    lines = textwrap.wrap(text, LINE - indent - 6, break_long_words=False,
                          break_on_hyphens=False)
    lines[0] = '"""' + lines[0]
    lines[-1] += '"""'
    return [pad + line for line in lines]


def _default(value):
    """A default as the stub shows it: simple literals as they are, anything else `...`."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "..."
    if isinstance(value, str) and value.isprintable() and '"' not in value \
            and "\\" not in value:
        return f'"{value}"'
    if isinstance(value, tuple) and all(_default(v) != "..." for v in value):
        inner = ", ".join(_default(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return "..."


def _with_none(text):
    return text if text == "Any" or re.search(r"\bNone\b", text) else f"{text} | None"


def _without_none(text):
    return " | ".join(part for part in text.split(" | ") if part != "None")


def _param_type(owner, fn_name, param, result):
    """The annotation of `param` of function `fn_name` (of class `owner`, or None)."""
    star = "*" if param.kind is param.VAR_POSITIONAL else ""
    if param.kind is param.VAR_KEYWORD:
        return "Any"
    keys = ([f"{owner}.{fn_name}.{param.name}"] if owner else []) + [f"{fn_name}.{param.name}"]
    type_ = next((OVERRIDES[k] for k in keys if k in OVERRIDES), None)
    if type_ is None:
        type_ = PARAMS.get(star + param.name) or PARAMS.get(param.name) or "Any"
        if param.name == "out" and result.startswith(("return_types.", "tuple[")):
            type_ = "Sequence[Tensor]"  # the (values, indices) tensors to write
        elif param.name == "dim" and (param.default is param.empty
                                      or isinstance(param.default, int)):
            type_ = "int"  # one dim: the ops taking several default to None or () (all dims)
    if param.default is None:
        type_ = _with_none(type_)
    return type_


def _return_type(owner, name, op):
    for key in ((f"{owner}.{name}",) if owner else ()) + (name,):
        if key in RETURNS:
            return RETURNS[key]
    if name in vars(jitensor.return_types):
        return f"return_types.{name}"
    if name.startswith("is_"):
        return "bool"
    if name.startswith("set_"):
        return "None"
    return "Tensor" if op else "Any"


def _in_place_target(fn):
    """The out-of-place op an `ops._common.in_place` method forwards its arguments to."""
    inner = inspect.unwrap(fn)
    code = getattr(inner, "__code__", None)
    if code is not None and code is _common.in_place(len).__code__:
        return inner.__closure__[code.co_freevars.index("op")].cell_contents
    return None


def _def_lines(name, params, result, indent, tail, suffix=""):
    """`def name(params) -> result` + `tail` (":" or ": ...") in ruff format's layout: one line,
    or the parameters on one indented line, or one a line with a trailing comma. `suffix`, a
    pragma comment, does not count for the line's length (in ruff neither)."""
    pad = " " * indent
    one = f"{pad}def {name}({', '.join(params)}) -> {result}{tail}"
    if len(one) <= LINE:
        return [one + suffix]
    inner = pad + "    " + ", ".join(params)
    if len(inner) <= LINE:
        return [f"{pad}def {name}(", inner, f"{pad}) -> {result}{tail}{suffix}"]
    return ([f"{pad}def {name}("] + [f"{pad}    {p}," for p in params]
            + [f"{pad}) -> {result}{tail}{suffix}"])


def _function(stub, name, fn, indent, owner=None, op=False):
    """Stub lines for function `fn` called `name` (a method when `owner` names its class)."""
    handwritten = HANDWRITTEN.get(f"{owner}.{name}")
    if handwritten:
        for line in handwritten:
            stub.type(line.split("(", 1)[-1])
        stub.used.add("overload")
        return [" " * indent + line for line in handwritten]
    note = []
    sig = inspect.signature(fn)
    doc = fn.__doc__  # (not inspect.getdoc: it would lend object's to __repr__, __hash__, ...)
    target = _in_place_target(fn) if owner else None
    if target is not None:
        # (self, *args, **kwargs) at runtime: declare the arguments it forwards
        note = [" " * indent + f"# at runtime (self, *args, **kwargs), forwarded to "
                               f"{target.__name__}()"]
        sig = inspect.signature(target)
        sig = sig.replace(parameters=[p for p in sig.parameters.values() if p.name != "out"])
    result = _return_type(owner, name, op)
    variants = [(sig, result, None)]
    if name in OVERLOADS and OVERLOADS[name][0] in sig.parameters:
        arg, without, with_ = OVERLOADS[name]
        variants = [(sig, without, ("none", arg)), (sig, with_, ("given", arg))]
    lines = []
    for sig, result, overload in variants:
        params, kinds = [], [p.kind for p in sig.parameters.values()]
        for i, p in enumerate(sig.parameters.values()):
            if p.kind is p.KEYWORD_ONLY and p.VAR_POSITIONAL not in kinds \
                    and p.KEYWORD_ONLY not in kinds[:i]:
                params.append("*")
            if i == 0 and owner and p.kind is not p.VAR_POSITIONAL:
                params.append(p.name)  # self (whatever the runtime calls it)
            else:
                type_, default = _param_type(owner, name, p, result), p.default
                if overload and p.name == overload[1]:
                    type_, default = ("None", None) if overload[0] == "none" else \
                        (_without_none(type_), p.empty)
                prefix = "*" if p.kind is p.VAR_POSITIONAL else \
                    "**" if p.kind is p.VAR_KEYWORD else ""
                text = f"{prefix}{p.name}: {stub.type(type_)}"
                params.append(text if default is p.empty else f"{text} = {_default(default)}")
            if p.kind is p.POSITIONAL_ONLY and p.POSITIONAL_ONLY not in kinds[i + 1:]:
                params.append("/")
        if overload:
            lines.append(" " * indent + "@overload")
            stub.used.add("overload")
        suffix = "  # type: ignore[override]" if name in ("__eq__", "__ne__") else ""
        body = _docstring(doc, indent + 4)
        lines += _def_lines(name, params, stub.type(result), indent,
                            ":" if body else ": ...", suffix) + body
        if body and not indent:
            lines.append("")  # (ruff format's blank line after a top-level def with a body)
    return note + lines


def _property(stub, name, prop, indent):
    type_ = stub.type(ATTRIBUTES.get(name, "Any"))
    pad = " " * indent
    lines = [f"{pad}@property"]
    body = _docstring(prop.__doc__, indent + 4)
    lines += [f"{pad}def {name}(self) -> {type_}:"] + body if body else \
        [f"{pad}def {name}(self) -> {type_}: ..."]
    if prop.fset is not None:
        lines += [f"{pad}@{name}.setter", f"{pad}def {name}(self, value: {type_}) -> None: ..."]
    return lines


def _class(stub, cls, ops=frozenset()):
    """A class's stub: its slot attributes, then its properties and methods, each sorted by
    name (`ops`: the method names that are ops, whose default result is a Tensor)."""
    bases = [b for b in cls.__bases__ if b is not object]
    base = "" if not bases else "(tuple[int, ...])" if bases == [tuple] else \
        f"({', '.join(b.__name__ for b in bases)})"
    stub.type(base)
    lines = [f"class {cls.__name__}{base}:"]
    lines += _docstring(cls.__doc__, 4)
    if len(lines) > 1:
        lines.append("")  # (ruff format's blank line after a class docstring)
    members = [[f"    {name}: {stub.type(ATTRIBUTES.get(name, 'Any'))}"]
               for name, value in sorted(vars(cls).items())
               if isinstance(value, types.MemberDescriptorType) and name not in _BOILERPLATE]
    for name, value in sorted(vars(cls).items()):
        if name in _BOILERPLATE or isinstance(value, types.MemberDescriptorType):
            continue
        if isinstance(value, property):
            members.append(_property(stub, name, value, 4))
        elif isinstance(value, (staticmethod, classmethod)) or inspect.isroutine(value):
            members.append(_function(stub, name, getattr(cls, name), 4, cls.__name__,
                                     op=name in ops))
        else:
            members.append([f"    {name}: {stub.type(_value_type(value))}"])
    for member in members:
        lines += member
    if not members:
        lines = lines[:-1] if len(lines) > 1 else [lines[0] + " ..."]
    return lines


def _value_type(value):
    cls = type(value)
    if isinstance(value, (bool, int, float, str)):
        return cls.__name__
    if inspect.isroutine(value):
        return "Callable[..., Any]"
    if isinstance(value, jitensor.dtype):  # (bfloat16 is an instance of a subclass)
        return "dtype"
    if cls.__module__.startswith("jitensor") and cls.__name__ in (
            "Tensor", "Size", "_Layout", "_MemoryFormat", "Generator", "dtype", "device"):
        return cls.__name__
    return "Any"


def _blocks(blocks):
    """Top-level blocks joined as ruff formats a stub: a blank line around each class, after
    each function with a body, and between kinds (values, classes, functions)."""
    out = []
    for i, block in enumerate(blocks):
        if out and out[-1] and (block[0].startswith("class ") or blocks[i - 1][0].startswith(
                "class ") or _kind(block) != _kind(blocks[i - 1])):
            out.append("")
        out += block
    return out[:-1] if out and not out[-1] else out


def _kind(block):
    return "class" if block[0].startswith("class ") else \
        "def" if block[0].startswith(("def ", "@overload")) else "value"


# -- the two stubs --------------------------------------------------------------------------------
def _tensor_ops():
    """The method names jitensor/ops attaches to Tensor (their default result is a Tensor)."""
    return frozenset(name for module in vars(jitensor.ops).values()
                     if isinstance(module, types.ModuleType)
                     for name in getattr(module, "TENSOR_METHODS", ()))


def _module_names(module):
    """The names a module's own source binds at top level (not those it imports)."""
    tree = ast.parse(inspect.getsource(module))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def render_tensor():
    """jitensor/tensor.pyi: Tensor as it is at runtime and the rest of tensor.py."""
    tensor = importlib.import_module("jitensor.tensor")  # (jitensor.tensor is the function)
    stub = _Stub(local=_module_names(tensor))
    ops = _tensor_ops()
    values, classes, functions = [], [], []
    for name in sorted(_module_names(tensor)):
        value = getattr(tensor, name)
        if isinstance(value, type):
            classes.append(_class(stub, value, ops if value is tensor.Tensor else ()))
        elif inspect.isfunction(value):
            functions.append(_function(stub, name, value, 0))
        else:
            values.append([f"{name}: {stub.type(_value_type(value))}"])
    local = sorted(f"from . import {n}" for n in ("return_types",) if n in stub.used)
    body = _blocks(values + classes + functions)
    return _assemble(stub, body, local)


def _assemble(stub, body, local=()):
    head = stub.imports(local)
    return HEADER + (head + "\n\n" if head else "") + "\n".join(body) + "\n"


def public_names():
    """jitensor's public names: ``__all__`` and every other public attribute of the package
    once imported (submodules it imports), less modules from outside jitensor."""
    names = set(jitensor.__all__)
    for name, value in vars(jitensor).items():
        if not name.startswith("_") and not (
                isinstance(value, types.ModuleType)
                and not value.__name__.startswith("jitensor.")):
            names.add(name)
    return sorted(names)


def _return_types_class(stub, namespace):
    """jitensor.return_types, a namespace of tuple classes at runtime, as a class of classes."""
    lines = ["class return_types:",
             '    """jitensor.return_types: the named tuples ops return (at runtime a',
             "    types.SimpleNamespace of these tuple classes, whose entries are also",
             '    attributes)."""']
    for name, cls in sorted(vars(namespace).items()):
        fields = cls._fields
        tuple_type = stub.type(f"tuple[{', '.join(['Tensor'] * len(fields))}]")
        lines.append("")
        lines.append(f"    class {name}({tuple_type}):")
        doc = _docstring(cls.__doc__, 8)
        lines += doc + [""] if doc else []
        stub.type("ClassVar Self")
        lines.append("        _fields: ClassVar[tuple[str, ...]]")
        lines.append("        def __new__(cls, *items: Tensor) -> Self: ...")
        for field in fields:
            lines += ["        @property", f"        def {field}(self) -> Tensor: ..."]
    return lines


def render_init():
    """jitensor/__init__.pyi: every public name of jitensor."""
    names = public_names()
    stub = _Stub(local=set(names))
    local, values, classes, functions = set(), [], [], []
    for name in names:
        value = vars(jitensor).get(name)
        if value is None and importlib.util.find_spec(f"jitensor.{name}") is not None:
            local.add(f"from . import {name} as {name}")  # loaded on first use (__getattr__)
            continue
        value = getattr(jitensor, name)
        if isinstance(value, types.ModuleType):
            local.add(f"from . import {name} as {name}")
        elif isinstance(value, type):
            module = value.__module__.removeprefix("jitensor")
            assert getattr(sys.modules[value.__module__], value.__name__) is value, name
            local.add(f"from {module or '.'} import {value.__name__} as {name}")
        elif name == "return_types":
            classes.append(_return_types_class(stub, value))
        elif inspect.isroutine(value):
            module = getattr(value, "__module__", "") or ""
            op = module.startswith("jitensor.ops.") or module == "jitensor.creation"
            functions.append(_function(stub, name, value, 0, op=op))
        else:
            values.append([f"{name}: {stub.type(_value_type(value))}"])
    values.append(["__version__: str"])
    for name in ("Tensor", "Size", "_Layout", "_MemoryFormat"):
        if name in stub.used and name not in names:
            local.add(f"from .tensor import {name}")
    exported = "\n".join(f'    "{n}",' for n in sorted(jitensor.__all__, key=_natural))
    body = _blocks([[f"__all__ = [\n{exported}\n]"]] + values + classes + functions)
    return _assemble(stub, body, local)


def _natural(name):
    """isort's (and ruff's RUF022) order for __all__: CONSTANTS, Classes, then the rest, with
    numbers in names compared as numbers (int8 before int16)."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return kind, [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", name)]


def render():
    """{path relative to the repository root: text} of every stub."""
    return {"jitensor/tensor.pyi": render_tensor(), "jitensor/__init__.pyi": render_init()}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m jitensor._stubgen", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 (with a diff) if the committed stubs are out of date")
    parser.add_argument("--json", action="store_true",
                        help="print {path: text} as JSON instead of writing the files")
    args = parser.parse_args(argv)
    stubs = render()
    if args.json:
        json.dump(stubs, sys.stdout)
        return 0
    root = Path(__file__).resolve().parent.parent
    stale = 0
    for path, text in stubs.items():
        file = root / path
        old = file.read_text() if file.exists() else ""
        if old == text:
            continue
        stale += 1
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), text.splitlines(True), path, f"{path} (regenerated)"))
        else:
            file.write_text(text)
            print(f"wrote {path}")
    if args.check and stale:
        print("stubs out of date: run `python -m jitensor._stubgen`")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

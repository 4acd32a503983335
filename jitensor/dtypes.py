"""dtype objects, parsing, and torch's type-promotion rules in one table."""
import functools

import numpy as np

# The package's name in reprs ('jitensor.float32', 'jitensor.Size([2])'): "torch" under
# `python -m jitensor.run`, whose script then prints what it prints under torch.
SHOWN_AS = "jitensor"


class dtype:
    """A tensor element type, printed as torch prints its own (``jitensor.float32``)."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "category", "scalar_name")

    def __init__(self, name, np_dtype, category, scalar_name):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        # 0 bool, 1 integer, 2 floating, 3 complex: torch's promotion categories
        self.category = category
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        self.is_signed = not (name.startswith("uint") or name == "bool")
        self.scalar_name = scalar_name  # torch's C++ name ("Long"), which its errors quote

    def __repr__(self):
        return SHOWN_AS + "." + self.name

    def __reduce__(self):
        return (to_dtype, (self.name,))

    def to_real(self):
        """The dtype of a complex dtype's parts (complex64: float32); any other dtype itself."""
        return _REAL.get(self, self)

    def to_complex(self):
        """The complex dtype whose parts are this float dtype (float32: complex64)."""
        found = _COMPLEX.get(self)
        if found is None:
            raise RuntimeError(f"to_complex(): there is no complex dtype with {self} parts")
        return found


bool_ = dtype("bool", np.bool_, 0, "Bool")
uint8 = dtype("uint8", np.uint8, 1, "Byte")
int8 = dtype("int8", np.int8, 1, "Char")
int16 = dtype("int16", np.int16, 1, "Short")
int32 = dtype("int32", np.int32, 1, "Int")
int64 = dtype("int64", np.int64, 1, "Long")
float16 = dtype("float16", np.float16, 2, "Half")
float32 = dtype("float32", np.float32, 2, "Float")
float64 = dtype("float64", np.float64, 2, "Double")
# torch's "barebones" unsigned dtypes: storage, conversion, data movement and a few ops (eq,
# mul, sum, sort, ...); no promotion with other integer dtypes (see promote_types)
uint16 = dtype("uint16", np.uint16, 1, "UInt16")
uint32 = dtype("uint32", np.uint32, 1, "UInt32")
uint64 = dtype("uint64", np.uint64, 1, "UInt64")
BAREBONES = (uint16, uint32, uint64)


class _Bfloat16(dtype):
    """bfloat16, stored as ml_dtypes' NumPy bfloat16. Importing ml_dtypes takes ~0.5 s, so it
    is imported when a bfloat16 tensor is first made, not with jitensor."""

    __slots__ = ()

    def __init__(self):
        self.name, self.itemsize, self.category = "bfloat16", 2, 2
        self.scalar_name = "BFloat16"
        self.is_floating_point = self.is_signed = True
        self.is_complex = False

    @property
    def np(self):
        return _bfloat16_np()


@functools.cache
def _bfloat16_np():
    import ml_dtypes
    return np.dtype(ml_dtypes.bfloat16)


bfloat16 = _Bfloat16()
complex64 = dtype("complex64", np.complex64, 3, "ComplexFloat")
complex128 = dtype("complex128", np.complex128, 3, "ComplexDouble")
_REAL = {complex64: float32, complex128: float64}
_COMPLEX = {float32: complex64, float64: complex128, float16: complex64, bfloat16: complex64}

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64,
       complex128, *BAREBONES)
# the dtypes CPU kernels compute in as they are; float16 and bfloat16 compute in float32
# (kernels/cpu/narrow.py)
CPU_DTYPES = (bool_, uint8, int8, int16, int32, int64, float32, float64)
NARROW = (float16, bfloat16)

_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "long": int64,
                 "int": int32, "short": int16, "bool_": bool_, "cfloat": complex64,
                 "cdouble": complex128})
_BY_NP = {d.np: d for d in ALL if d is not bfloat16}


def to_dtype(value):
    """Parse a jt dtype, a NumPy dtype or type, or a string into a jt dtype."""
    if value.__class__ is dtype or value is bfloat16:
        return value
    if isinstance(value, str):
        name = value[len("jitensor."):] if value.startswith("jitensor.") else value
        found = _BY_NAME.get(name)
        if found is None:
            raise TypeError(f"unknown dtype {value!r}; expected one of "
                            f"{', '.join(d.name for d in ALL)}")
        return found
    if value is bool:
        return bool_
    if value is int:
        return int64
    if value is float:  # Python's float is a double whatever the default dtype, as in torch
        return float64
    if value is complex:
        return complex128
    if type(value).__module__ == "torch":  # torch.float32 and friends, by name
        return to_dtype(str(value)[len("torch."):])
    try:
        npd = np.dtype(value)
        found = _BY_NP.get(npd) or (bfloat16 if npd.name == "bfloat16" else None)
    except TypeError:
        found = None
    if found is None:
        raise TypeError(f"unsupported dtype {value!r}; expected one of "
                        f"{', '.join(d.name for d in ALL)} "
                        "(a jitensor dtype, NumPy dtype or string)")
    return found


_default = [float32]


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


# The promotion lattice as torch defines it: the smallest type that holds both operands.
_ORDER = {bool_: 0, uint8: 1, int8: 1, int16: 2, int32: 3, int64: 4, float16: 5, bfloat16: 5,
          float32: 6, float64: 7, complex64: 8, complex128: 9}


def promote_types(a, b):
    """torch.promote_types: the dtype both ``a`` and ``b`` convert to without losing category."""
    a, b = to_dtype(a), to_dtype(b)
    if a is b:
        return a
    if a in BAREBONES or b in BAREBONES:  # only a floating dtype takes them in, as in torch
        if a.is_floating_point or b.is_floating_point:
            return a if a.is_floating_point else b
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {a.scalar_name} and {b.scalar_name}")
    ra, rb = _ORDER[a], _ORDER[b]
    if ra == rb:  # uint8 with int8, float16 with bfloat16: neither holds the other
        return int16 if ra == 1 else float32
    hi, lo = (a, b) if ra > rb else (b, a)
    if hi is complex64 and lo is float64:  # complex parts as wide as the float's
        return complex128
    return hi


def can_cast(from_, to):
    """torch.can_cast: casting may narrow within a category but never move to a lower one."""
    return to_dtype(from_).category <= to_dtype(to).category


def _scalar_dtype(value):
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return _default[0]
    if isinstance(value, complex):
        return _default[0].to_complex()
    raise TypeError(f"expected a Tensor or a Python bool/int/float/complex, got "
                    f"{type(value).__name__}")


def _combine(higher, lower):
    """A higher-priority operand keeps its dtype unless the lower one is of a higher category."""
    if higher is None:
        return lower
    if lower is None or higher.category >= lower.category:
        return higher
    if lower.is_complex and higher.is_floating_point:  # float parts stay as wide (torch's)
        return higher.to_complex()
    if higher in BAREBONES and lower.category > 1:  # a float or complex number: its default
        return lower
    return promote_types(higher, lower)


def result_type(*operands):
    """torch.result_type: tensors with dims outrank 0-d tensors, which outrank Python scalars;
    a lower-priority operand only matters when it is of a higher category (bool < int < float <
    complex)."""
    dims = zero = scalars = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if d is None:
            d = _scalar_dtype(x)
            scalars = d if scalars is None else promote_types(scalars, d)
        elif getattr(x, "ndim", 0) == 0:
            zero = d if zero is None else promote_types(zero, d)
        else:
            dims = d if dims is None else promote_types(dims, d)
    if dims is None and zero is None and scalars is None:
        raise TypeError("result_type() needs at least one operand")
    return _combine(dims, _combine(zero, scalars))


class finfo:
    """torch.finfo: the limits of a floating dtype (the default dtype when none is given)."""

    def __init__(self, type=None):
        d = _default[0] if type is None else _info_dtype(type, "finfo").to_real()
        if not d.is_floating_point:
            raise TypeError("jitensor.finfo() requires a floating point input type. Use "
                            "jitensor.iinfo to handle 'jitensor.finfo'")
        if d is bfloat16:  # (NumPy knows no bfloat16)
            import ml_dtypes
            info = ml_dtypes.finfo(d.np)
        else:
            info = np.finfo(d.np)
        self.bits = info.bits
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """torch.iinfo: the limits of an integer dtype."""

    def __init__(self, type):
        d = _info_dtype(type, "iinfo")
        if d is bool_:
            raise TypeError("jitensor.bool is not supported by jitensor.iinfo")
        if d.is_floating_point:
            raise TypeError("jitensor.iinfo() requires an integer input type. Use "
                            "jitensor.finfo to handle 'jitensor.iinfo'")
        info = np.iinfo(d.np)
        self.bits, self.min, self.max, self.dtype = info.bits, int(info.min), int(info.max), d.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def _info_dtype(value, name):
    if not isinstance(value, dtype) and type(value).__module__ != "torch":
        raise TypeError(f"{name}(): argument 'type' (position 1) must be jitensor.dtype, not "
                        f"{type(value).__name__}")
    return to_dtype(value)

"""dtype objects, aliases, the default dtype, parsing, and the promotion rules (spot checks here;
the exhaustive comparison with torch is in test_torch_oracle.py)."""
import pickle

import ml_dtypes
import numpy as np
import pytest
from conftest import ALL_DTYPES, CPU_DTYPES, FLOAT_DTYPES, INT_DTYPES, dtype_id

import jitensor as jt
from jitensor import dtypes

EXPECTED = {  # name: (numpy dtype, itemsize, floating, signed)
    "bool": (np.bool_, 1, False, False),
    "uint8": (np.uint8, 1, False, False),
    "int8": (np.int8, 1, False, True),
    "int16": (np.int16, 2, False, True),
    "int32": (np.int32, 4, False, True),
    "int64": (np.int64, 8, False, True),
    "float16": (np.float16, 2, True, True),
    "bfloat16": (ml_dtypes.bfloat16, 2, True, True),
    "float32": (np.float32, 4, True, True),
    "float64": (np.float64, 8, True, True),
}


@pytest.mark.parametrize("d", ALL_DTYPES, ids=dtype_id)
def test_dtype_attributes(d):
    np_type, itemsize, floating, signed = EXPECTED[d.name]
    assert getattr(jt, d.name) is d
    assert repr(d) == f"jitensor.{d.name}"
    assert d.np == np.dtype(np_type)
    assert d.itemsize == itemsize
    assert d.is_floating_point is floating
    assert d.is_signed is signed
    assert d.is_complex is False
    assert isinstance(d, jt.dtype)


def test_dtype_set_is_the_documented_one():
    assert {d.name for d in ALL_DTYPES} == set(EXPECTED)
    assert [d.name for d in CPU_DTYPES] == [d.name for d in dtypes.CPU_DTYPES]
    # (the complex dtypes: tests/test_complex.py; uint16/32/64: tests/test_unsigned.py)
    assert set(dtypes.ALL) == set(ALL_DTYPES) | {jt.complex64, jt.complex128, *dtypes.BAREBONES}


@pytest.mark.parametrize("alias, target", [
    ("float", jt.float32), ("double", jt.float64), ("long", jt.int64), ("int", jt.int32),
    ("short", jt.int16), ("half", jt.float16), ("bool", dtypes.bool_),
])
def test_aliases(alias, target):
    assert getattr(jt, alias) is target
    assert dtypes.to_dtype(alias) is target  # the string alias parses to the same object


@pytest.mark.parametrize("d", ALL_DTYPES, ids=dtype_id)
def test_dtype_pickles_to_the_same_object(d):
    assert pickle.loads(pickle.dumps(d)) is d


def test_dtypes_are_hashable_and_distinct():
    assert len({d: i for i, d in enumerate(ALL_DTYPES)}) == len(ALL_DTYPES)
    assert jt.float32 != jt.float64 and jt.float32 == jt.float32


# -- the default dtype ----------------------------------------------------------------------------
def test_default_dtype_is_float32():
    assert jt.get_default_dtype() is jt.float32
    assert jt.zeros(2).dtype is jt.float32
    assert jt.tensor(1.5).dtype is jt.float32


@pytest.mark.parametrize("spec", [jt.float64, "float64", np.float64, np.dtype("float64"), "double"])
def test_set_default_dtype_float64_changes_every_float_default(spec):
    jt.set_default_dtype(spec)
    assert jt.get_default_dtype() is jt.float64
    assert jt.zeros(2).dtype is jt.float64
    assert jt.empty(2).dtype is jt.float64
    assert jt.ones(1, 2).dtype is jt.float64
    assert jt.tensor([1.5]).dtype is jt.float64
    assert jt.tensor([1, 2]).dtype is jt.int64  # ints are unaffected
    assert jt.full((2,), 0.5).dtype is jt.float64
    assert jt.arange(1.0).dtype is jt.float64
    assert jt.arange(3).dtype is jt.int64
    assert jt.linspace(0, 1, 3).dtype is jt.float64
    assert jt.rand(2).dtype is jt.float64
    assert jt.result_type(jt.tensor([1, 2]), 1.5) is jt.float64
    assert dtypes.to_dtype(float) is jt.float64


@pytest.mark.parametrize("d", [d for d in ALL_DTYPES if not d.is_floating_point] + ["int64", int],
                         ids=str)
def test_set_default_dtype_rejects_non_float(d):
    with pytest.raises(TypeError):
        jt.set_default_dtype(d)
    assert jt.get_default_dtype() is jt.float32  # unchanged by the failed call


def test_set_default_dtype_float16_is_allowed():
    jt.set_default_dtype(jt.float16)
    assert jt.get_default_dtype() is jt.float16


# -- parsing ------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", ALL_DTYPES, ids=dtype_id)
def test_parse_every_spelling(d):
    spellings = [d, d.name, f"jitensor.{d.name}", d.np, d.np.type, np.dtype(d.np)]
    for s in spellings:
        assert dtypes.to_dtype(s) is d, s


def test_parse_python_types():
    assert dtypes.to_dtype(bool) is jt.bool
    assert dtypes.to_dtype(int) is jt.int64
    assert dtypes.to_dtype(float) is jt.float64  # a Python float is a double, as in torch


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("form", ["jt", "name", "nptype", "npdtype"])
def test_parse_everywhere(d, form):
    spec = {"jt": d, "name": d.name, "nptype": d.np.type, "npdtype": d.np}[form]
    assert jt.zeros(2, dtype=spec).dtype is d
    assert jt.empty(2, dtype=spec).dtype is d
    assert jt.full((2,), 1, dtype=spec).dtype is d
    assert jt.tensor([1, 0], dtype=spec).dtype is d
    assert jt.zeros_like(jt.zeros(2), dtype=spec).dtype is d
    assert jt.zeros(2).to(spec).dtype is d
    assert jt.zeros(2).to(dtype=spec).dtype is d
    assert jt.zeros(2).new_zeros(3, dtype=spec).dtype is d
    assert jt.can_cast(spec, spec) is True
    assert jt.promote_types(spec, d) is d


@pytest.mark.parametrize(
    "bad", ["floaty", "float128", "complex32", "torch.float32x", "Float32", ""])
def test_unknown_dtype_string_raises_type_error_naming_it(bad):
    with pytest.raises(TypeError) as info:
        jt.zeros(2, dtype=bad)
    assert repr(bad) in str(info.value)
    with pytest.raises(TypeError, match="float32"):  # and lists what is accepted
        dtypes.to_dtype(bad)


@pytest.mark.parametrize("bad", [np.clongdouble, np.longdouble,
                                 np.dtype("U3"), object, 3, 2.5], ids=str)
def test_unsupported_dtype_raises_type_error(bad):
    with pytest.raises(TypeError):
        dtypes.to_dtype(bad)
    with pytest.raises(TypeError):
        jt.ones(2, dtype=bad)


# -- promotion (spot checks; exhaustive torch comparison in test_torch_oracle.py) ----------------
@pytest.mark.parametrize("a, b, expected", [
    (jt.bool, jt.bool, jt.bool),
    (jt.bool, jt.uint8, jt.uint8),
    (jt.bool, jt.float32, jt.float32),
    (jt.uint8, jt.int8, jt.int16),
    (jt.uint8, jt.int16, jt.int16),
    (jt.int8, jt.int64, jt.int64),
    (jt.int32, jt.int64, jt.int64),
    (jt.int64, jt.float16, jt.float16),
    (jt.int64, jt.float32, jt.float32),
    (jt.float16, jt.float32, jt.float32),
    (jt.float32, jt.float64, jt.float64),
    (jt.uint8, jt.float64, jt.float64),
])
def test_promote_types_table(a, b, expected):
    assert jt.promote_types(a, b) is expected
    assert jt.promote_types(b, a) is expected
    assert jt.promote_types(a.name, b.np) is expected


@pytest.mark.parametrize("a", ALL_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("b", ALL_DTYPES, ids=dtype_id)
def test_promote_types_properties(a, b):
    p = jt.promote_types(a, b)
    assert p is jt.promote_types(b, a)
    assert jt.promote_types(p, a) is p and jt.promote_types(p, b) is p  # an upper bound
    assert p.category == max(a.category, b.category)
    assert jt.can_cast(a, p) and jt.can_cast(b, p)


@pytest.mark.parametrize("a", ALL_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("b", ALL_DTYPES, ids=dtype_id)
def test_can_cast_is_by_category(a, b):
    # torch.can_cast: narrowing within a category is allowed, moving to a lower one is not.
    assert jt.can_cast(a, b) is (a.category <= b.category)


def test_can_cast_examples():
    assert jt.can_cast(jt.float64, jt.float16)
    assert jt.can_cast(jt.int64, jt.int8)
    assert jt.can_cast(jt.bool, jt.uint8)
    assert not jt.can_cast(jt.float32, jt.int64)
    assert not jt.can_cast(jt.int8, jt.bool)
    assert not jt.can_cast("float64", "bool")


def test_result_type_priorities():
    i8 = jt.tensor([1, 2], dtype=jt.int8)
    u8 = jt.tensor([1, 2], dtype=jt.uint8)
    f64_0d = jt.tensor(1.0, dtype=jt.float64)
    i64_0d = jt.tensor(1)
    b = jt.tensor([True])
    # a dimensioned tensor outranks a 0-d tensor and a Python scalar of the same category
    assert jt.result_type(i8, i64_0d) is jt.int8
    assert jt.result_type(i8, 1000) is jt.int8
    assert jt.result_type(u8, i8) is jt.int16
    # a higher category always matters
    assert jt.result_type(i8, f64_0d) is jt.float64
    assert jt.result_type(i8, 1.5) is jt.float32
    assert jt.result_type(b, 1) is jt.int64
    assert jt.result_type(b, True) is jt.bool
    assert jt.result_type(jt.tensor([1.0], dtype=jt.float64), 1.5) is jt.float64
    # 0-d tensors with each other and with scalars
    assert jt.result_type(f64_0d, 2) is jt.float64
    assert jt.result_type(i64_0d, 2.5) is jt.float32
    assert jt.result_type(jt.tensor(1, dtype=jt.int8), 300) is jt.int8
    # scalars alone
    assert jt.result_type(1, 2) is jt.int64
    assert jt.result_type(1, 2.0) is jt.float32
    assert jt.result_type(True, False) is jt.bool
    assert jt.result_type(True, 1) is jt.int64
    # three operands
    assert jt.result_type(i8, u8, 1.5) is jt.float32
    assert jt.result_type(i8, f64_0d, 1) is jt.float64


def test_result_type_follows_default_dtype():
    jt.set_default_dtype(jt.float64)
    assert jt.result_type(jt.tensor([1]), 1.5) is jt.float64
    assert jt.result_type(1.5) is jt.float64
    assert jt.result_type(jt.tensor([1.0], dtype=jt.float32), 1.5) is jt.float32


def test_result_type_errors():
    with pytest.raises(TypeError):
        jt.result_type()
    with pytest.raises(TypeError):
        jt.result_type(jt.tensor([1]), "a")
    with pytest.raises(TypeError):
        jt.result_type("1j")


@pytest.mark.parametrize("d", FLOAT_DTYPES + INT_DTYPES, ids=dtype_id)
def test_result_type_of_one_tensor_is_its_dtype(d):
    assert jt.result_type(jt.zeros(3, dtype=d)) is d
    assert jt.result_type(jt.zeros((), dtype=d)) is d


def test_bfloat16_names_load_in_dtype_tables():
    table = {"float32": jt.float32, "bfloat16": jt.bfloat16, "float16": jt.float16}
    assert table["bfloat16"] is jt.bfloat16 and repr(jt.bfloat16) == "jitensor.bfloat16"
    assert jt.bfloat16.is_floating_point and jt.bfloat16.itemsize == 2
    assert jt.bfloat16 != jt.float16 and jt.float32.is_floating_point

"""kernels/lazy_codegen.py: a Numba CPU library emits machine code only when its code is asked
for, so a kernel's helpers are compiled into the kernel and never on their own."""
import numpy as np
from conftest import run_python
from numba import njit
from numba.core import codegen
from numba.extending import register_jitable

import jitensor  # noqa: F401 -- installs the patch
from jitensor.kernels import lazy_codegen


@register_jitable
def _leaf(x):
    return x * 2.0


@register_jitable
def _middle(x):
    return _leaf(x) + 1.0


def _emissions(monkeypatch):
    """A list that gets a library's name each time the JIT engine emits its machine code."""
    emitted = []
    finalize = codegen.JITCodeLibrary._finalize_specific

    def counting(self):
        emitted.append(self.name)
        return finalize(self)
    monkeypatch.setattr(codegen.JITCodeLibrary, "_finalize_specific", counting)
    return emitted


def test_a_kernel_emits_its_own_code_and_not_its_helpers(monkeypatch):
    assert lazy_codegen._ORIGINAL, "lazy_codegen.install() did not patch Numba"
    emitted = _emissions(monkeypatch)

    @njit
    def kernel(a):
        total = 0.0
        for x in a:
            total += _middle(x)
        return total

    assert kernel(np.arange(4.0)) == 16.0
    assert emitted == [emitted[0]] and "kernel" in emitted[0]  # _middle, _leaf: not emitted


def test_a_function_compiled_as_a_callee_runs_when_called_itself():
    @njit
    def inner(x):
        return x + 1

    @njit
    def outer(x):
        return inner(x) * 10

    assert outer(2) == 30
    assert inner(5) == 6


def test_a_recursive_callee_resolves_through_its_caller():
    @njit("int64(int64)")
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    @njit
    def caller(n):
        return fib(n) + 1

    assert caller(10) == 56
    assert fib(12) == 144


def test_an_absent_symbol_has_no_address_and_does_not_finalize():
    library = codegen.JITCPUCodegen("probe").create_library("probe")
    assert library.get_pointer_to_function("no_such_function") == 0
    assert not library._finalized


def test_install_is_idempotent():
    patched = codegen.JITCodeLibrary.get_pointer_to_function
    lazy_codegen.install()
    assert codegen.JITCodeLibrary.get_pointer_to_function is patched


def test_kernels_compiled_lazily_load_from_the_disk_cache_in_a_new_process(tmp_path):
    (tmp_path / "lazy_kernel.py").write_text("""
import jitensor  # (installs the patch)
from numba import njit
from numba.extending import register_jitable

@register_jitable
def leaf(x):
    return x * 3.0

@njit(cache=True)
def kernel(a):
    return leaf(a.sum())
""")
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import numpy as np; "
            "from lazy_kernel import kernel; r = kernel(np.arange(5.0)); s = kernel.stats; "
            "print(r, sum(s.cache_hits.values()), sum(s.cache_misses.values()))")
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    assert run_python(code, env).split() == ["30.0", "0", "1"]  # compiled and saved
    assert run_python(code, env).split() == ["30.0", "1", "0"]  # loaded

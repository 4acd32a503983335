"""The disk-cache key of a kernel file (jitensor/kernels/kernel_cache.py): the code of the file
and of the jitensor modules it imports, transitively; docstrings, comments and formatting left
out."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from jitensor.kernels import kernel_cache as kc

_CACHES = (kc._module_file, kc.summary, kc.file_hash, kc.imports, kc.closure, kc.sources_hash)


def _clear():
    for cache in _CACHES:
        cache.cache_clear()


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return str(path)


# -- the dependency closure ---------------------------------------------------------------------
def test_closure_of_the_cpu_elementwise_kernels_has_their_scalars_and_no_cuda_file():
    closure = {os.path.relpath(p, kc.PACKAGE) for p in kc.closure(
        os.path.join(kc.ROOT, "cpu", "elementwise.py"))}
    assert {"kernels/cpu/elementwise.py", "kernels/scalar/elementwise.py",
            "kernels/scalar/libm.py"} <= closure
    assert not [p for p in closure if p.startswith("kernels/cuda/")]
    assert "__init__.py" not in closure  # jitensor's own: it would pull in everything


def test_no_cpu_kernel_file_depends_on_a_cuda_file():
    """So an edit of the CUDA backend leaves every CPU kernel warm."""
    cpu = os.path.join(kc.ROOT, "cpu")
    for name in sorted(os.listdir(cpu)):
        if name.endswith(".py"):
            cuda = [p for p in kc.closure(os.path.join(cpu, name))
                    if p.startswith(os.path.join(kc.ROOT, "cuda") + os.sep)]
            assert not cuda, f"kernels/cpu/{name} imports {cuda}"


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A small jitensor package under tmp_path, which kernel_cache resolves imports in."""
    top = tmp_path / "src"
    monkeypatch.setattr(kc, "_TOP", str(top))
    monkeypatch.setattr(kc, "PACKAGE", str(top / "jitensor"))
    _clear()
    yield top / "jitensor"
    _clear()  # the real package's answers, not these, for the tests after


def test_closure_follows_every_kind_of_import_inside_the_package_only(package):
    files = {
        "__init__.py": "from . import big\n",
        "big.py": "",
        "table.py": "X = 1\n",
        "kernels/__init__.py": "HELPER = 1\n",
        "kernels/scalar/__init__.py": '"""Scalars."""\n',
        "kernels/scalar/ops.py": "import math\nfrom . import libm\n",
        "kernels/scalar/libm.py": "import numpy\n",
        "kernels/cpu/__init__.py": "from . import other\n",
        "kernels/cpu/other.py": "",
        "kernels/cpu/nested.py": "",
        "kernels/cpu/kern.py": """\
            import numpy as np
            from numba import njit
            import jitensor.table
            from .. import HELPER
            from ..scalar import ops as s

            def f():
                from jitensor.kernels.cpu import nested
            """,
        "kernels/cuda/kern.py": "from ..scalar import ops\nfrom . import driver\n",
        "kernels/cuda/driver.py": "from .. import kernel_cache\n",
    }
    for name, text in files.items():
        _write(package / name, text)
    closure = {os.path.relpath(p, package) for p in kc.closure(package / "kernels/cpu/kern.py")}
    # a module-level and a nested import, relative and absolute ones; kernels/__init__.py is
    # read for HELPER; `from ..scalar import ops` reads the submodule, not scalar/__init__.py
    assert closure == {"kernels/cpu/kern.py", "table.py", "kernels/__init__.py",
                       "kernels/scalar/ops.py", "kernels/scalar/libm.py",
                       "kernels/cpu/nested.py"}
    assert {os.path.relpath(p, package) for p in kc.imports(package / "kernels/cuda/kern.py")} \
        == {"kernels/scalar/ops.py", "kernels/cuda/driver.py"}
    # no module kernel_cache here: the name is read from the package, kernels/__init__.py
    assert [os.path.relpath(p, package) for p in kc.imports(package / "kernels/cuda/driver.py")] \
        == ["kernels/__init__.py"]


# -- the hash of one file -----------------------------------------------------------------------
_CODE = '''\
"""A module."""
import math

SCALE = 2.0  # a constant


class Table:
    """A class."""
    size = 3


def f(x, y):
    """A function."""
    # a comment
    return math.sqrt(x * SCALE + y)
'''


@pytest.mark.parametrize("edit", [
    lambda c: c.replace('"""A module."""', '"""Another module docstring,\n\non lines."""'),
    lambda c: c.replace('"""A class."""', '"""Another class docstring."""'),
    lambda c: c.replace('    """A function."""\n', ""),
    lambda c: c.replace("# a constant", "# another comment") + "# appended\n",
    lambda c: c.replace("x * SCALE + y", "(x*SCALE\n                     + y)"),
    lambda c: c.replace("\n\n\n", "\n\n\n\n\n"),
], ids=["module-docstring", "class-docstring", "no-function-docstring", "comments",
        "formatting", "blank-lines"])
def test_docstrings_comments_and_formatting_leave_the_hash(tmp_path, edit):
    assert kc.file_hash(_write(tmp_path / "a.py", _CODE)) == \
        kc.file_hash(_write(tmp_path / "b.py", edit(_CODE)))


@pytest.mark.parametrize("edit", [
    lambda c: c.replace("SCALE = 2.0", "SCALE = 2.5"),
    lambda c: c.replace("x * SCALE + y", "y + x * SCALE"),
    lambda c: c.replace("size = 3", "size = 3\n    count = 0"),
    lambda c: c.replace("    # a comment\n", '    "not a docstring"\n'),
    lambda c: c + "EDITED = 1\n",
], ids=["constant", "expression", "attribute", "string-statement", "appended"])
def test_any_change_of_code_changes_the_hash(tmp_path, edit):
    assert kc.file_hash(_write(tmp_path / "a.py", _CODE)) != \
        kc.file_hash(_write(tmp_path / "b.py", edit(_CODE)))


def test_the_summary_is_kept_on_disk_and_trusted_only_for_the_same_bytes(tmp_path):
    path = _write(tmp_path / "a.py", _CODE)
    code = kc.summary(path)[0]
    memo = kc._memo_file(path)
    saved = json.loads(open(memo).read())
    assert saved["code"] == code
    # a matching memo spares the parse: shown by one that lies
    with open(memo, "w") as f:
        json.dump(dict(saved, code="from the memo"), f)
    _clear()
    assert kc.summary(path)[0] == "from the memo"
    _write(tmp_path / "a.py", _CODE + "EDITED = 1\n")  # other bytes: the memo is stale
    _clear()
    assert kc.summary(path)[0] not in (code, "from the memo")
    with open(memo, "w") as f:
        f.write("{not json")
    _clear()
    assert kc.summary(path)[0] == kc.summary.__wrapped__(path)[0]  # a broken memo: recomputed


def test_sources_hash_changes_with_code_of_a_dependency_only(package):
    kern = _write(package / "kernels/cpu/kern.py", "from ..scalar import ops\n")
    ops = package / "kernels/scalar/ops.py"
    _write(ops, '"""Ops."""\nONE = 1\n')
    _write(package / "kernels/cuda/kern.py", "X = 1\n")
    before = kc.sources_hash(kern)
    _write(ops, '"""Ops, edited."""\nONE = 1  # a comment\n')
    _write(package / "kernels/cuda/kern.py", "X = 2\n")  # outside kern's closure
    _clear()
    assert kc.sources_hash(kern) == before
    _write(ops, '"""Ops."""\nONE = 2\n')
    _clear()
    assert kc.sources_hash(kern) != before


# -- end to end: what a second process loads from the disk cache --------------------------------
_PROBE = """
import numpy as np
import jitensor
from jitensor.kernels.cpu import elementwise, indexing
elementwise.any_compare(elementwise.s.EQ, np.ones(4), 0.0)
for kernel in (elementwise._any_4d, indexing.accumulate_kernel):
    print(sum(kernel.stats.cache_hits.values()), sum(kernel.stats.cache_misses.values()))
"""


@pytest.mark.subprocess
@pytest.mark.slow
def test_only_a_code_edit_in_a_kernel_files_closure_recompiles_it(tmp_path):
    """Two small kernels: elementwise._any_4d, whose file imports kernels/scalar/elementwise.py,
    and indexing.accumulate_kernel (run at import), whose file does not."""
    from conftest import REPO
    src = tmp_path / "src" / "jitensor"
    shutil.copytree(REPO / "jitensor", src, ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "src"),
               NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def probe():
        """((hits, misses) of _any_4d, of accumulate_kernel) in a new process."""
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                             env=env, cwd=str(tmp_path), timeout=300)
        assert out.returncode == 0, out.stderr
        return [tuple(map(int, line.split())) for line in out.stdout.splitlines()]

    def edit(relative, old, new):
        path = src / relative
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new, 1))

    assert [misses for _, misses in probe()] == [1, 1]  # an empty cache: both compiled
    # a comment in a CUDA file, and a docstring of the kernel's own file (on its line: Numba
    # names a kernel's cache file after its line number)
    edit("kernels/cuda/elementwise.py", "import numpy as np\n", "import numpy as np  # edit\n")
    edit("kernels/cpu/elementwise.py", '"""', '"""Edited. ')
    assert probe() == [(1, 0), (1, 0)], "a kernel recompiled though no code changed"
    # code of kernels/scalar/elementwise.py: in _any_4d's closure, not in accumulate_kernel's
    with open(src / "kernels/scalar/elementwise.py", "a") as f:
        f.write("\nEDITED = 1\n")
    assert probe() == [(0, 1), (1, 0)]

"""A damaged, unreadable, read-only or shared kernel cache (jitensor/kernels/kernel_cache.py:
`install`): `import jitensor` and every kernel still work, compiling in memory where the cache
cannot serve them, with one KernelCacheWarning saying why; a warm read-only cache is read; a
cache directory other users can write to is reported.

Each case runs fresh processes on a temporary NUMBA_CACHE_DIR, which holds the few kernels
`import jitensor` loads and `inc`, a one-line kernel of a module of its own. Read-only
directories are made with chmod; as root, which chmod does not stop, the processes that must
obey it drop the capabilities that override file modes."""
import ctypes
import json
import os
import pwd
import random
import subprocess
import sys
import warnings

import pytest
from conftest import REPO

from jitensor.kernels import kernel_cache

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]

_MODULE = '''
import jitensor  # noqa: F401 (installs jitensor's hooks on Numba's cache)
from numba import njit


@njit(cache=True)
def inc(x):
    return x + 1
'''

# prints {"inc": [hits, misses], "jitensor": misses of jitensor's kernels}
_CHILD = '''
import json, sys
sys.path.insert(0, sys.argv[1])
import numba.core.dispatcher
import jitensor as jt
import tiny
assert tiny.inc(1) == 2
assert jt.zeros(3).tolist() == [0.0, 0.0, 0.0]
stats = tiny.inc.stats
misses = sum(sum(d.stats.cache_misses.values()) for name, m in list(sys.modules.items())
             if name.startswith("jitensor.kernels") for d in vars(m).values()
             if isinstance(d, numba.core.dispatcher.Dispatcher))
print(json.dumps({"inc": [sum(stats.cache_hits.values()), sum(stats.cache_misses.values())],
                  "jitensor": misses}))
'''

_ROOT = os.geteuid() == 0


@pytest.fixture
def place(tmp_path):
    """A directory with the module's folder `pkg`, `home` for HOME and (to be made) `cache`
    for NUMBA_CACHE_DIR."""
    base = tmp_path
    (base / "pkg").mkdir()
    (base / "pkg" / "tiny.py").write_text(_MODULE)
    (base / "home").mkdir()
    yield base
    for d, _, _ in os.walk(base):  # chmod undone, so that it can be removed
        os.chmod(d, 0o755)


def _obey_file_modes():
    """In a child of root, before exec: drop CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and
    CAP_FOWNER from the bounding set, so that the program it runs obeys file modes."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2, 3):
        if libc.prctl(24, capability, 0, 0, 0):  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run(place, cache=None, obey_modes=False):
    """Run _CHILD; return (its report, the KernelCacheWarning lines of its stderr).
    obey_modes: where this is root (for whom chmod forbids nothing), without the capabilities
    that override file modes."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NUMBA_", "XDG_", "JITENSOR_KERNEL"))}
    env.update(PYTHONPATH=str(REPO), HOME=str(place / "home"),
               NUMBA_CACHE_DIR=str(cache or place / "cache"))
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(place / "pkg")], env=env,
                          cwd=place, capture_output=True, text=True, timeout=300,
                          preexec_fn=_obey_file_modes if obey_modes and _ROOT else None)
    assert proc.returncode == 0, proc.stderr
    warned = [line for line in proc.stderr.splitlines() if "KernelCacheWarning" in line]
    return json.loads(proc.stdout), warned


def read_only(*dirs):
    for top in dirs:
        for d, _, _ in os.walk(top):
            os.chmod(d, 0o555)


def cache_files(place, pattern):
    found = sorted((place / "cache").rglob(pattern))
    assert found, f"no {pattern} in the cache"
    return found


def _truncate(path):
    path.write_bytes(path.read_bytes()[:20])


def _randomize(path):
    path.write_bytes(random.Random(path.name).randbytes(300))


def _empty(path):
    path.write_bytes(b"")


@pytest.mark.parametrize("damage, pattern", [(_truncate, "*.nbi"), (_randomize, "*.nbc"),
                                             (_empty, "*.nbc")],
                         ids=["truncated-index", "random-data", "empty-data"])
def test_damaged_cache_files_are_misses(place, damage, pattern):
    """Every index (or data file) of the cache damaged: the next process compiles what it
    needs, warns once, and repairs the cache for the process after it."""
    report, warned = run(place)
    assert report["inc"] == [0, 1] and not warned
    for path in cache_files(place, pattern):
        damage(path)
    report, warned = run(place)
    assert report["inc"] == [0, 1]
    assert len(warned) == 1 and "cannot read the kernel cache" in warned[0], warned
    report, warned = run(place)
    assert report == {"inc": [1, 0], "jitensor": 0} and not warned


def test_unreadable_cache_files_are_misses(place):
    run(place)
    for path in cache_files(place, "*.nbi"):
        path.chmod(0)
    report, warned = run(place, obey_modes=True)
    assert report["inc"] == [0, 1]
    assert "cannot read the kernel cache" in warned[0] and "PermissionError" in warned[0]


def test_read_only_everywhere_compiles_in_memory(place):
    """The module's folder, HOME and NUMBA_CACHE_DIR (which does not exist and cannot be made)
    all read-only: Numba would find no cache directory and refuse to compile."""
    read_only(place / "pkg", place / "home")
    os.chmod(place, 0o555)
    report, warned = run(place, cache=place / "cache", obey_modes=True)
    assert report["inc"] == [0, 1]
    assert len(warned) == 1 and "cannot write the kernel cache" in warned[0], warned
    assert not (place / "cache").exists()


def test_read_only_warm_cache_is_read(place):
    """A warm NUMBA_CACHE_DIR made read-only serves every kernel (Numba skipped it and
    recompiled them all elsewhere)."""
    run(place)
    read_only(place / "cache", place / "pkg", place / "home")
    report, warned = run(place, obey_modes=True)
    assert report == {"inc": [1, 0], "jitensor": 0} and not warned


@pytest.mark.parametrize("mode, warns", [(0o777, True), (0o1777, False), (0o755, False)])
def test_a_cache_other_users_can_write_warns(place, mode, warns):
    """World-writable: others could plant a pickle that runs on load. Sticky (as /tmp): they
    cannot replace the directories Numba makes in it, which are this user's."""
    (place / "cache").mkdir()
    os.chmod(place / "cache", mode)
    _, warned = run(place)
    assert bool(warned) == warns, warned
    if warns:
        assert f"other users can change the kernel cache in {place / 'cache'}" in warned[0]


# -- in this process ---------------------------------------------------------------------------
def test_shared_directories(tmp_path):
    d = tmp_path / "cache"
    d.mkdir(mode=0o755)
    os.chmod(tmp_path, 0o755)
    assert kernel_cache._shared(str(d)) is None
    os.chmod(d, 0o757)
    assert kernel_cache._shared(str(d)) == f"{d} is writable by all users"
    os.chmod(d, 0o755)
    os.chmod(tmp_path, 0o777)  # a parent others can write to could swap the cache
    assert kernel_cache._shared(str(d)) == f"{tmp_path} is writable by all users"
    os.chmod(tmp_path, 0o1777)
    assert kernel_cache._shared(str(d)) is None
    os.chmod(tmp_path, 0o755)
    assert kernel_cache._shared(str(d / "not made yet")) is None
    if _ROOT:  # a group with other members, or another owner
        nobody = pwd.getpwnam("nobody")
        os.chown(d, -1, nobody.pw_gid)
        os.chmod(d, 0o775)
        assert kernel_cache._shared(str(d)) == f"{d} is writable by its group"
        os.chmod(d, 0o755)
        os.chown(d, nobody.pw_uid, -1)
        assert kernel_cache._shared(str(d)) == f"{d} belongs to user id {nobody.pw_uid}"


@pytest.mark.parametrize("module", ["numba.core.caching", "numba.cuda.core.caching"])
def test_install_guards_both_caches(module, monkeypatch):
    """numba-cuda's cache (hooked when the CUDA backend loads; by hand here) is guarded as the
    CPU's: a load that raises is a miss, a save that raises is dropped, each with a warning."""
    caching = pytest.importorskip(module)
    saved = list(caching.CacheImpl._locator_classes)
    load, save = caching.Cache.load_overload, caching.Cache.save_overload
    try:
        kernel_cache.install(caching)
        kernel_cache.install(caching)  # idempotent
        names = [c.__name__ for c in caching.CacheImpl._locator_classes]
        assert names[-1] == "ReadOnlyFallback" and names.count("ReadOnlyFallback") == 1
        assert all(n.startswith("Stamped") for n in names[:-1])
        assert caching.Cache.load_overload.__wrapped__.__qualname__ == "Cache.load_overload"

        class Broken(caching.Cache):
            def __init__(self):
                self._py_func, self._cache_path = test_install_guards_both_caches, "/nowhere"

            def _load_overload(self, sig, target_context):
                raise EOFError("Ran out of input")

            def _save_overload(self, sig, data):
                raise PermissionError("read-only")

            def flush(self):
                raise PermissionError("read-only")

        class Context:
            def refresh(self):
                pass

        monkeypatch.setattr(kernel_cache, "_warned", set())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert Broken().load_overload((), Context()) is None
            assert Broken().load_overload((), Context()) is None  # said once
            Broken().save_overload((), None)
        assert [str(w.message).split(" (")[0] for w in caught] == [
            "jitensor: cannot read the kernel cache of test_install_guards_both_caches in "
            "/nowhere", "jitensor: cannot write the kernel cache in /nowhere"]
        assert all(w.category is kernel_cache.KernelCacheWarning for w in caught)
    finally:
        caching.CacheImpl._locator_classes[:] = saved
        if module != "numba.core.caching":  # jitensor's own hooks stay on the CPU's
            caching.Cache.load_overload, caching.Cache.save_overload = load, save
            del caching.Cache._jitensor_guarded


"""What keys the disk cache of jitensor's kernels: the code of their own source file and of every
jitensor module it imports, transitively.

Numba keys a cached kernel on a hash of the file that defines it, and nothing else. A kernel
of jitensor's calls scalar definitions and helpers of other files (kernels/scalar/ for
most), so an edit there -- or an upgrade that changed only those files -- would load the old
machine code: measured, a fix to `logsigmoid` in kernels/scalar/elementwise.py left the
cached activation kernel of kernels/cpu/elementwise.py 12x slow, and it could as well be
wrong. So `stamp` wraps Numba's locators (the CPU's, and numba-cuda's when the CUDA backend
loads): a kernel file of jitensor/kernels gets `sources_hash(file)` as its stamp.

That hash covers the file and its dependency closure only: the modules of the jitensor package
it imports, found with `ast` (nested imports too; a package's __init__.py when a name is taken
from it), transitively. So an edit of a CUDA file leaves the CPU kernels warm. Each file counts
by its AST less docstrings: comments, docstrings and formatting never recompile, any change of
code does. (Numba still names a kernel's cache file after its line: a kernel moved to another
line recompiles.) Imports made by other means (importlib) are not seen. A file's hash and
imports are kept in its __pycache__, keyed by its bytes, so a process parses only what changed.

`install` also makes the cache fail safe, hooking Numba's classes in this one place (`guard` on
its Cache, `stamp` on its locators):
- A damaged or unreadable cache file (a truncated index, an empty or random data file: Numba
  raised, and `import jitensor` failed) is a cache miss: the kernel compiles, a warning says
  why (once per process), and the index is emptied so that the next save repairs it.
- A cache that cannot be written is not an error either: the kernel compiles in memory, with a
  warning. Numba refuses to cache (and so to compile) a kernel when no cache directory is
  writable; the last locator, `ReadOnlyFallback`, then reads the source's __pycache__ as it is.
- A NUMBA_CACHE_DIR that holds this source's cache but is read-only is read (Numba skipped it
  and recompiled every kernel elsewhere).
- The cache's files are pickles, which run code as they load (Numba's design): a cache
  directory other users could write to gets a warning.
All warnings are `KernelCacheWarning`."""
import ast
import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import stat
import sys
import threading
import warnings

ROOT = os.path.dirname(os.path.realpath(__file__))  # jitensor/kernels
PACKAGE = os.path.dirname(ROOT)  # jitensor
_TOP = os.path.dirname(PACKAGE)  # the folder that holds the package
# in every memo's key: change it when what a summary holds, or how it is computed, changes
_FORMAT = b"jitensor kernel_cache 1\n"


@functools.cache
def _module_file(dotted):
    """The source file of a module of the jitensor package ("jitensor.kernels.scalar"), or None
    (outside the package, or a name that is no module)."""
    parts = dotted.split(".")
    if parts[0] != os.path.basename(PACKAGE):
        return None
    base = os.path.join(_TOP, *parts)
    for path in (os.path.join(base, "__init__.py"), base + ".py"):
        if os.path.isfile(path):
            return path
    return None


def _imported(tree, path):
    """For each name an import statement of `tree` binds: the modules it may come from, first
    match wins (`from pkg import x` reads the submodule pkg.x if there is one, else pkg)."""
    package = os.path.relpath(os.path.dirname(path), _TOP).split(os.sep)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [[alias.name] for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module
            if node.level:  # relative: `from .. import x` is relative to the parent package
                if node.level > len(package):
                    continue
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([module] if module else []))
            found += [[f"{module}.{alias.name}", module] for alias in node.names]
    return found


def _strip_docstrings(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                del node.body[0]
    return tree


def _memo_file(path):
    """Where the summary of a source file is kept: in its __pycache__ (None: nowhere), with
    Numba's index files; part of the kernel cache, so written under PYTHONDONTWRITEBYTECODE too."""
    try:
        return importlib.util.cache_from_source(path) + ".kernel-key"
    except NotImplementedError:  # no bytecode cache on this interpreter
        return None


@functools.cache
def summary(path):
    """(hash of the code, `_imported` list) of one source file. Parsing every source of the
    kernel files' closures would be a large part of `import jitensor`, so the summary is also
    kept on disk, keyed by a hash of the file's path and bytes."""
    with open(path, "rb") as f:
        source = f.read()
    # the path too: where a file lies decides what its relative imports name
    key = hashlib.sha256(_FORMAT + path.encode() + b"\0" + source).hexdigest()
    memo = _memo_file(path)
    if memo:
        try:
            with open(memo) as f:
                saved = json.load(f)
            if saved["key"] == key:
                return saved["code"], saved["imports"]
        except (OSError, ValueError, KeyError, TypeError):  # none yet, or unreadable
            pass
    tree = ast.parse(source, path)
    imported = _imported(tree, path)
    # ast.dump leaves out line and column numbers, and an AST holds no comments
    code = hashlib.sha256(ast.dump(_strip_docstrings(tree)).encode()).hexdigest()
    if memo:
        temporary = f"{memo}.{os.getpid()}.{threading.get_ident()}"
        try:  # written whole, then renamed: a concurrent reader sees an old memo or the new one
            os.makedirs(os.path.dirname(memo), exist_ok=True)
            with open(temporary, "w") as f:
                json.dump({"key": key, "code": code, "imports": imported}, f)
            os.replace(temporary, memo)
        except OSError:  # a read-only install: recomputed by each process
            with contextlib.suppress(OSError):
                os.remove(temporary)
    return code, imported


@functools.cache
def file_hash(path):
    """A hash of the code of one source file (its AST without docstrings)."""
    return summary(os.path.realpath(path))[0]


@functools.cache
def imports(path):
    """The source files of the jitensor modules that the file at `path` imports directly."""
    path = os.path.realpath(path)
    found = set()
    for candidates in summary(path)[1]:
        found.add(next(filter(None, map(_module_file, candidates)), None))
    found -= {None, path}
    return frozenset(found)


@functools.cache
def closure(path):
    """`path` and every jitensor source file it depends on through imports, transitively."""
    seen, todo = set(), [os.path.realpath(path)]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(imports(current) - seen)
    return frozenset(seen)


@functools.cache
def sources_hash(path):
    """One hash of the code of `path` and of its dependency closure (each file under its path
    in the package, so that a renamed module counts as a change)."""
    h = hashlib.sha256()
    for source in sorted(closure(path)):
        h.update(source.removeprefix(PACKAGE).encode() + b"\0" + file_hash(source).encode())
    return h.hexdigest()


# -- hooks into Numba's cache -------------------------------------------------------------------
class KernelCacheWarning(UserWarning):
    """The kernel cache could not be read or written (kernels compile in memory), or other
    users could change it."""


_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, KernelCacheWarning, stacklevel=3)


def _private_group(st):
    """Whether a file's group is its owner's user-private group (umask 002 systems), in which
    group write permission gives no one else access."""
    import grp
    import pwd
    try:
        owner, group = pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid)
    except KeyError:
        return False
    return group.gr_name == owner and set(group.gr_mem) <= {owner}


def _shared(path):
    """Why users other than this one (and root) could put files at `path`, a cache directory,
    or None. Its ancestors count too: one they can write to lets them rename it away, unless
    the ancestor is sticky (/tmp). The directory itself must not be writable by them even
    when sticky: they could add the index of a kernel not cached yet."""
    itself = True
    while True:
        try:
            st = os.stat(path)
        except OSError:  # not made yet
            st = None
        if st is not None:
            if itself and st.st_uid not in (os.geteuid(), 0):
                return f"{path} belongs to user id {st.st_uid}"
            others = st.st_mode & stat.S_IWOTH
            if (others or st.st_mode & stat.S_IWGRP and not _private_group(st)) \
                    and (itself or not st.st_mode & stat.S_ISVTX):
                return f"{path} is writable by {'all users' if others else 'its group'}"
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path, itself = parent, False


@functools.cache
def _check_private(path):
    if os.name != "posix":
        return
    problem = _shared(os.path.realpath(path))
    if problem:
        _warn_once(("shared", path),
                   f"jitensor: other users can change the kernel cache in {path} ({problem}); "
                   f"its files are pickles that run as code when kernels load. Make it "
                   f"writable by you only, or set NUMBA_CACHE_DIR to a private directory")


def _stamped(cls):
    user_provided = cls.__name__.lstrip("_") == "UserProvidedCacheLocator"

    class Stamped(cls):
        def get_source_stamp(self):
            source = os.path.realpath(getattr(self, "_py_file", ""))
            if source.startswith(ROOT + os.sep):
                # replaces Numba's stamp, a hash of the file's bytes, which a comment changes
                return sources_hash(source)
            return super().get_source_stamp()

        @classmethod
        def from_function(cls_, py_func, py_file):
            locator = super().from_function(py_func, py_file)
            if locator is None and user_provided and os.path.exists(py_file) \
                    and sys.modules[cls.__module__].config.CACHE_DIR:
                # Numba takes only a writable directory; one the user named that already holds
                # this source's cache is read even so (a warm cache made read-only)
                candidate = cls_(py_func, py_file)
                if os.path.isdir(candidate.get_cache_path()):
                    locator = candidate
            if locator is not None:
                _check_private(locator.get_cache_path())
            return locator
    Stamped.__name__ = Stamped.__qualname__ = "Stamped" + cls.__name__
    return Stamped


def _read_only_fallback(in_tree):
    class ReadOnlyFallback(in_tree):
        """The last locator, where no cache directory is writable (Numba would refuse to
        compile the kernel): the source's __pycache__ is read as it is, and saves fail, so a
        kernel it lacks compiles in memory (with `guard`'s warning)."""

        @classmethod
        def from_function(cls, py_func, py_file):
            if not os.path.exists(py_file):
                return None
            locator = cls(py_func, py_file)
            _check_private(locator.get_cache_path())
            return locator
    return ReadOnlyFallback


def stamp(cache_impl):
    """Make the locators of a Numba cache implementation class (numba.core.caching.CacheImpl
    or numba-cuda's CacheImpl) stamp jitensor's kernel files with sources_hash(file), read a
    read-only NUMBA_CACHE_DIR, warn about directories other users can write, and end with
    `ReadOnlyFallback`; in place, so subclasses sharing the list follow. Idempotent."""
    classes = cache_impl._locator_classes
    if classes[-1].__name__ == "ReadOnlyFallback":
        return
    classes[:] = [cls if cls.__name__.startswith("Stamped") else _stamped(cls)
                  for cls in classes]
    in_tree = next(cls for cls in classes if cls.__name__.endswith("InTreeCacheLocator"))
    classes.append(_read_only_fallback(in_tree))


def guard(cache_class):
    """Make a Numba Cache class (numba.core.caching.Cache or numba-cuda's) treat any failure
    to load a kernel as a miss and any failure to save one as harmless, with a warning each
    (once per process). Idempotent."""
    if getattr(cache_class, "_jitensor_guarded", False):
        return
    load, save = cache_class.load_overload, cache_class.save_overload

    @functools.wraps(load)
    def load_overload(self, sig, target_context):
        try:
            return load(self, sig, target_context)
        except Exception as e:  # noqa: BLE001 (a damaged pickle raises anything)
            _warn_once("load", f"jitensor: cannot read the kernel cache of "
                               f"{self._py_func.__qualname__} in {self.cache_path} "
                               f"({type(e).__name__}: {str(e)[:200]}); compiling it again")
            with contextlib.suppress(Exception):  # nothing to repair where it is read-only
                self.flush()  # an empty index, which the next save fills
            return None

    @functools.wraps(save)
    def save_overload(self, sig, data):
        try:
            save(self, sig, data)
        except Exception as e:  # noqa: BLE001
            _warn_once("save", f"jitensor: cannot write the kernel cache in {self.cache_path} "
                               f"({type(e).__name__}: {str(e)[:200]}); kernels it lacks are "
                               f"compiled in memory by each process")

    cache_class.load_overload, cache_class.save_overload = load_overload, save_overload
    cache_class._jitensor_guarded = True


def install(caching):
    """Hook one of Numba's caching modules (numba.core.caching, or numba-cuda's
    numba.cuda.core.caching) before any kernel is decorated: `stamp` and `guard`."""
    stamp(caching.CacheImpl)
    guard(caching.Cache)

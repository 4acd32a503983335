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
imports are kept in its __pycache__, keyed by its bytes, so a process parses only what changed."""
import ast
import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import threading

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


def _stamped(cls):
    class Stamped(cls):
        def get_source_stamp(self):
            source = os.path.realpath(getattr(self, "_py_file", ""))
            if source.startswith(ROOT + os.sep):
                # replaces Numba's stamp, a hash of the file's bytes, which a comment changes
                return sources_hash(source)
            return super().get_source_stamp()
    Stamped.__name__ = Stamped.__qualname__ = "Stamped" + cls.__name__
    return Stamped


def stamp(cache_impl):
    """Make the locators of a Numba cache implementation class (numba.core.caching.CacheImpl
    or numba-cuda's CacheImpl) stamp jitensor's kernel files with sources_hash(file); in place,
    so subclasses sharing the list follow. Idempotent."""
    classes = cache_impl._locator_classes
    classes[:] = [cls if cls.__name__.startswith("Stamped") else _stamped(cls)
                  for cls in classes]

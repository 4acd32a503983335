"""`python -m jitensor.run script.py [args]`: run an unchanged PyTorch script on jitensor.

Every import of `torch` or `torch.<name>...` in the script (and in what it imports) gets
jitensor's module of the same path: `torch.nn.functional` is `jitensor.nn.functional`,
`torch.utils.data` is `jitensor.utils.data`. A torch module jitensor does not have fails to
import with an ImportError naming it, so a script stops at the first thing jitensor lacks
instead of running something else. `python -m jitensor.run -m package.module [args]` runs a
module as `python -m` would."""
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys

PREFIX = "torch"


class _TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `torch[.x.y]` and loads it as `jitensor[.x.y]`: the very same module object, so
    `torch.nn.Module is jitensor.nn.Module` and isinstance checks agree across the names."""

    def find_spec(self, name, path=None, target=None):
        if name != PREFIX and not name.startswith(PREFIX + "."):
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        target = "jitensor" + spec.name[len(PREFIX):]
        try:
            return importlib.import_module(target)
        except ModuleNotFoundError as error:
            if error.name != target and not target.startswith(error.name + "."):
                raise  # (a module the jitensor one imports is missing: its own error)
            raise ModuleNotFoundError(f"No module named {spec.name!r}: jitensor has no "
                                      f"{target} (python -m jitensor.coverage lists what "
                                      f"jitensor has of torch)", name=spec.name) from None

    def exec_module(self, module):
        pass  # (already executed under its jitensor name)


def install():
    """Alias torch's module names to jitensor's for the rest of the process. Refused when the
    real torch is already imported: two libraries under one name would mix."""
    if any(isinstance(f, _TorchAlias) for f in sys.meta_path):
        return
    real = sys.modules.get(PREFIX)
    if real is not None and not getattr(real, "__name__", "").startswith("jitensor"):
        raise RuntimeError("torch is already imported in this process: jitensor.run must "
                           "alias it before the script's first `import torch`")
    sys.meta_path.insert(0, _TorchAlias())
    _spawn_aliased()
    from . import dtypes
    dtypes.SHOWN_AS = PREFIX  # (reprs: torch.float32, torch.Size([2]), as the script expects)


def _spawn_aliased():
    """Make processes started by multiprocessing's "spawn" method (torch.multiprocessing,
    DataLoader workers) alias torch too: a spawned child imports the script again, before it
    runs anything of ours. (A "forkserver" server imports the script first: not covered.)"""
    from multiprocessing import spawn
    command_line = spawn.get_command_line
    if getattr(command_line, "aliased", False):
        return

    def get_command_line(**kwds):
        line = command_line(**kwds)
        if "-c" in line:  # (a frozen executable takes no code)
            at = line.index("-c") + 1
            line[at] = "import jitensor.run; jitensor.run.install(); " + line[at]
        return line
    get_command_line.aliased = True
    spawn.get_command_line = get_command_line


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            raise SystemExit("jitensor.run: -m needs a module name")
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(os.path.abspath(argv[0]), run_name="__main__")  # (__file__ absolute,
        # as Python's own __main__'s)
    return 0


if __name__ == "__main__":
    sys.exit(main())

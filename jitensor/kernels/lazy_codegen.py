"""Machine code only for what runs: Numba's CPU libraries emit theirs when first asked for it.

Numba compiles every function it types into a library of its own -- a kernel, and each helper
and overload the kernel calls -- and finalizes each one at once: it optimizes the library's
LLVM module, then hands it to the JIT engine, which emits its machine code. A helper's code is
never run from there: a caller links the helper's optimized module into its own and runs its
own copy. So a kernel's first compile emitted machine code for every helper in its call tree,
to throw it away (the reduction kernels' trees are ~15 functions deep, the class losses' ~10).

`install` defers that step, per library, to the first request for an address in it
(`get_pointer_to_function`: a kernel's entry point, a cfunc, the NRT) or for its object code (a
disk-cache save); the module is optimized as before, and a library loaded from the cache is
finalized as before. A helper nobody asks for is linked into its callers and never emitted.
The environment pointer Numba stores right after a compile waits for the module that defines
it. Machine code is unchanged: the same modules reach the engine with the same passes run."""
import weakref

from numba.core import codegen as _codegen
from numba.core import config
from numba.core.compiler_lock import global_compiler_lock

_pending_envs = {}  # env symbol -> environment, for libraries not emitted yet


def _finalize_final_module(self):
    """Numba's `_finalize_final_module` less adding the module to the engine (`_emit`)."""
    if getattr(self, "_compiled_object", None) is not None or config.DUMP_OPTIMIZED \
            or config.DUMP_ASSEMBLY:  # loaded from the disk cache, or dumped: as Numba does
        return _ORIGINAL["_finalize_final_module"](self)
    self._finalize_dynamic_globals()
    self._verify_declare_only_symbols()
    self._final_module._CPUCodeLibrary__library = weakref.proxy(self)  # the object cache hooks
    self._finalized = True
    self._jitensor_pending = True


def _emit(self):
    """Hand a deferred library's module to the engine, which emits its machine code, and set
    the environments of the modules it defines."""
    with global_compiler_lock:
        if not getattr(self, "_jitensor_pending", False):
            return
        self._jitensor_pending = False
        module = self._final_module
        envs = [gv.name for gv in module.global_variables
                if gv.name in _pending_envs and not gv.is_declaration]
        cleanup = self._codegen._add_module(module)
        if cleanup:
            weakref.finalize(self, cleanup)
        self._finalize_specific()
        for name in envs:
            _ORIGINAL["set_env"](self._codegen, name, _pending_envs.pop(name))


def get_pointer_to_function(self, name):
    if not self._finalized:
        # a symbol the library does not define has no address: nothing to emit (a helper's
        # absent CPython wrapper, asked for after every compile)
        try:
            if self._final_module.get_function(name).is_declaration:
                return 0
        except NameError:
            return 0
        self.finalize()
    _emit(self)
    return _ORIGINAL["get_pointer_to_function"](self, name)


def _get_compiled_object(self):
    _emit(self)
    return _ORIGINAL["_get_compiled_object"](self)


def set_env(self, env_name, env):
    """Numba's set_env, or, when no emitted module defines `env_name` yet, later."""
    if self._engine.get_global_value_address(env_name):
        _ORIGINAL["set_env"](self, env_name, env)
    else:
        _pending_envs[env_name] = env


_ORIGINAL = {}


def install():
    """Patch Numba's CPU JIT libraries; a Numba without the expected internals is left as it
    is (it only compiles slower)."""
    library, engine = _codegen.JITCodeLibrary, _codegen.JITCPUCodegen
    methods = {library: ("_finalize_final_module", "get_pointer_to_function",
                         "_get_compiled_object"), engine: ("set_env",)}
    if _ORIGINAL or not all(hasattr(cls, m) for cls, names in methods.items() for m in names):
        return
    for cls, names in methods.items():
        for name in names:
            _ORIGINAL[name] = getattr(cls, name)
            setattr(cls, name, globals()[name])

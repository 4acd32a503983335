"""`python -m jitensor.coverage [--missing] [--json FILE]`: how much of the installed torch's API
jitensor has, per namespace: the top level, Tensor, nn's modules, nn.functional, nn.Module's
methods, torch.autograd and the optimizers.

Counted are torch's core names: internal (`_`-prefixed), backend-specific (cuDNN, MKL-DNN,
MIOpen, FBGEMM, MPS, XPU, MTIA, IPU, XLA), quantized, sparse, nested, symbolic-shape (`sym_`)
and TorchScript names, and the standard-library modules torch happens to import, are left
out. A name counts as
present when jitensor has an attribute of that name; `--missing` lists the rest."""
import argparse
import inspect
import json
import re
import sys
import types

_NOT_CORE = re.compile(r"^_|^sym_|^q_|quantiz|fbgemm|mkldnn|miopen|cudnn|cufft|sparse|^mps|"
                       r"^xpu|^mtia|nested|^is_vulkan|vulkan|^fake_|_jit_|^jit$|^classes$|"
                       r"^ops$|^cpp$|^ao$|^fx$|^export$|^package$|^onnx$|^compiler$|"
                       # IPU and XLA; quantized dtypes, schemes and accessors; sparse matrix
                       # products and COO/CSR accessors; nested tensors' jagged layout
                       r"(^|_)(ipu|xla)(_|$)|^q(u?int\d|scheme)|^per_(tensor|channel)_|"
                       r"^int_repr$|qparams|fake_quant|^(s|sp|ds|hs|hsp|sadd|sspadd)mm$|"
                       r"coalesce|^c?(row|col)_indices$|^ccol_indices$|^(indices|values)$|"
                       r"^to_padded_tensor$|^jagged$", re.I)
# TorchScript's IR and types, build and profiler internals, view-copy variants and the
# experimental sub-byte and float8 dtypes (top level only)
_NOT_CORE_TOP = re.compile(
    r"^[A-Z]\w*Type$|^Script|^Graph|^(Node|Block|Value|Use|Code|Tag|Capsule|Gradient)$|"
    r"^(Argument|FunctionSchema|CompilationUnit|ConcreteModuleType|Dispatch|ErrorReport|"
    r"Benchmark|ThroughputBenchmark|StaticModule|TracingState|FileCheck|ExecutionPlan|"
    r"IODescriptor|PyTorchFile|AliasDb|Aggregation|CallStack|DeepCopyMemoTable|OperatorInfo|"
    r"LiteScriptModule|DisableTorchFunction|ExcludeDispatchKeyGuard|JITException|"
    r"CompleteArgumentSpec|GraphExecutorState|ScriptObject|Future|Await|RRef)|Logger$|"
    r"SerializationStorageContext$|^parse_|^import_ir|^merge_type|^PRIVATE_OPS$|^USE_|"
    r"^TYPE_CHECKING$|^classproperty$|^compiled_with_cxx11_abi$|^profiler_allow|"
    r"^autocast_(in|de)crement|_copy$|^(int[1-7]|uint[1-7]|bits\w+|bit|float8\w*|float4\w*)$|"
    # TorchScript's ModuleDict/ParameterDict/BufferDict types and logger, symbolic shapes
    r"^(Module|Parameter|Buffer)Dict$|^Type$|^unify_type_list$|^(AVG|SUM)$|^Sym(Bool|Float|Int)$|"
    r"^DeserializationStorageContext$|^Q(U?)Int\w*Storage$|^LoggerBase$")
_DUNDER_OPERATORS = {
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__",
    "__rmul__", "__imul__", "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__",
    "__rfloordiv__", "__ifloordiv__", "__mod__", "__rmod__", "__imod__", "__pow__", "__rpow__",
    "__ipow__", "__matmul__", "__rmatmul__", "__and__", "__rand__", "__iand__", "__or__",
    "__ror__", "__ior__", "__xor__", "__rxor__", "__ixor__", "__lshift__", "__rlshift__",
    "__ilshift__", "__rshift__", "__rrshift__", "__irshift__", "__neg__", "__pos__", "__abs__",
    "__invert__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__getitem__",
    "__setitem__", "__len__", "__iter__", "__bool__", "__float__", "__int__", "__index__",
    "__array__", "__dlpack__", "__dlpack_device__", "__contains__", "__reversed__",
    "__format__", "__deepcopy__", "__reduce_ex__", "__setstate__", "__hash__", "__repr__"}


def _core(names):
    return sorted(n for n in names if not _NOT_CORE.search(n))


def namespaces():
    """{namespace: (torch's core names, the object of jitensor's to look them up on)}."""
    import torch
    import torch.nn as tnn

    import jitensor as jt
    from jitensor import nn, optim

    top = [n for n in dir(torch) if not (isinstance(getattr(torch, n, None), types.ModuleType)
                                         and not getattr(torch, n).__name__.startswith("torch"))]
    tensor = [n for n in dir(torch.Tensor) if not n.startswith("_") or n in _DUNDER_OPERATORS]
    modules = [n for n, v in vars(tnn).items()
               if inspect.isclass(v) and issubclass(v, tnn.Module)]
    functional = [n for n, v in vars(tnn.functional).items()
                  if callable(v) and not inspect.isclass(v) and not n.startswith("_") and
                  getattr(v, "__module__", "").startswith("torch")]
    module_methods = [n for n in dir(tnn.Module) if not n.startswith("_") or n in (
        "__call__", "__setstate__", "__getstate__", "__dir__", "__repr__")]
    optimizers = [n for n, v in vars(torch.optim).items()
                  if inspect.isclass(v) and issubclass(v, torch.optim.Optimizer) and
                  v is not torch.optim.Optimizer]
    import torch.distributions
    import torch.fft
    import torch.func
    import torch.special

    def public(module):
        return _core(getattr(module, "__all__", None) or
                     [n for n in dir(module) if not n.startswith("_")])

    return {
        "top level": ([n for n in _core(top) if not _NOT_CORE_TOP.search(n)], jt),
        "Tensor": (sorted(n for n in tensor if not _NOT_CORE.search(n.strip("_")) or
                          n in _DUNDER_OPERATORS), jt.Tensor),
        "nn modules": (_core(modules), nn),
        "nn.functional": (_core(functional), nn.functional),
        "nn.Module methods": (sorted(set(module_methods)), nn.Module),
        "torch.autograd": (_core(dir(torch.autograd)), jt.autograd),
        "optimizers": (_core(optimizers), optim),
        "torch.special": (public(torch.special), jt.special),
        "torch.distributions": (public(torch.distributions), jt.distributions),
        "torch.func": (public(torch.func), jt.func),
        "torch.fft": (public(torch.fft), jt.fft),
    }


def _has(obj, name):
    try:
        return hasattr(obj, name)
    except Exception:  # (a lazy attribute that fails to load counts as missing)
        return False


def report():
    """{namespace: {"total", "present", "percent", "missing": [...]}}."""
    result = {}
    for title, (names, obj) in namespaces().items():
        missing = [n for n in names if not _has(obj, n)]
        present = len(names) - len(missing)
        result[title] = {"total": len(names), "present": present,
                         "percent": round(100 * present / max(len(names), 1), 1),
                         "missing": missing}
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m jitensor.coverage", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--missing", action="store_true", help="list the missing names")
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("jitensor.coverage compares against the installed torch: pip install torch",
              file=sys.stderr)
        return 2
    rows = report()
    print(f"jitensor against torch {torch.__version__} (core names)")
    print(f"{'namespace':20}{'present':>9}{'total':>7}{'share':>8}")
    for title, row in rows.items():
        print(f"{title:20}{row['present']:>9}{row['total']:>7}{row['percent']:>7.1f}%")
        if args.missing and row["missing"]:
            print("    missing: " + ", ".join(row["missing"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

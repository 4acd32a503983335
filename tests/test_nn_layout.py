"""jitensor.nn laid out as torch.nn: every module class in the file of jitensor/nn/modules/ that
torch.nn.modules holds it in (so `jitensor.nn.modules.linear.Linear` is where torch's reader looks
for it), re-exported by jitensor.nn.modules and jitensor.nn; and nn.functional binding each of its
names with a def or an import by name, listed in a literal __all__ (no globals() or * tricks)."""
import ast
import importlib
import inspect

import pytest

import jitensor.nn as nn
from jitensor.nn import functional as F


def _classes():
    return {name: getattr(nn, name) for name in nn.__all__
            if isinstance(getattr(nn, name), type)}


@pytest.mark.torch
def test_module_files_match_torchs():
    torch = pytest.importorskip("torch")
    compared, wrong = 0, []
    for name, cls in _classes().items():
        theirs = getattr(torch.nn, name, None)
        if not isinstance(theirs, type):
            continue
        compared += 1
        expected = "jitensor.nn." + theirs.__module__.removeprefix("torch.nn.")
        if cls.__module__ != expected:
            wrong.append(f"{name}: {cls.__module__}, torch's file maps to {expected}")
        else:
            assert getattr(importlib.import_module(expected), name) is cls
    assert not wrong, "\n".join(wrong)
    assert compared >= 100  # (the check must not pass by comparing nothing)


def test_modules_package_reexports_every_class():
    classes = _classes()
    parameters = {"Parameter", "UninitializedBuffer", "UninitializedParameter"}
    assert set(nn.modules.__all__) == set(classes) - parameters
    for name in nn.modules.__all__:
        assert getattr(nn.modules, name) is classes[name]
        assert classes[name].__module__.startswith("jitensor.nn.modules.")
    assert nn.modules.module.Module is nn.Module
    assert nn.parameter.Parameter is nn.Parameter


def test_functional_binds_names_explicitly():
    tree = ast.parse(inspect.getsource(F))
    defined, imported, exported = set(), set(), None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            defined.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            assert all(a.name != "*" for a in node.names), "functional.py imports *"
            imported |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            assert exported is None, "__all__ is assigned twice"
            exported = ast.literal_eval(node.value)  # a literal list, not computed
        elif isinstance(node, ast.AugAssign) and getattr(node.target, "id", "") == "__all__":
            pytest.fail("__all__ is extended after its literal")
    calls = {n.func.id for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert not calls & {"globals", "setattr", "exec"}, "a name bound by globals()/setattr/exec"
    assert exported == F.__all__ and len(set(exported)) == len(exported)
    assert not set(exported) - defined - imported, "names of __all__ neither defined nor imported"
    assert not {n for n in defined if not n.startswith("_")} - set(exported), \
        "public functions missing from __all__"
    for name in exported:
        assert callable(getattr(F, name)), name

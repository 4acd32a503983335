"""`python -m jitensor.run`: an unchanged torch script runs on jitensor; and
`python -m jitensor.coverage`, the name-coverage report against the installed torch."""
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO

SCRIPT = textwrap.dedent("""
    import sys
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = DataLoader(TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,))),
                      batch_size=8)
    for x, y in data:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    assert type(loss).__module__.startswith("jitensor"), type(loss)
    assert torch.nn.Module is __import__("jitensor").nn.Module
    print("ran", sys.argv[1:], __name__, round(float(loss), 6) == round(loss.item(), 6))
""")


def _run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "jitensor.run", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO)})


@pytest.mark.subprocess
def test_a_torch_script_runs_unchanged(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    done = _run("train.py", "--epochs", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ran ['--epochs', '1'] __main__ True"


PRINTS = textwrap.dedent("""
    import os
    import torch
    x = torch.zeros(2, 3)
    print(x.shape, x.dtype, x.short().type(), torch.float16)
    print(torch.arange(3).short(), torch.tensor([1.5], dtype=torch.float64))
    print(torch.max(torch.ones(2, 2), 1))
    print(os.path.isabs(__file__), os.path.basename(__file__))
""")


@pytest.mark.subprocess
@pytest.mark.torch
def test_a_script_prints_what_it_prints_under_torch(tmp_path):
    """Under jitensor.run the reprs name the package `torch`, as the script imported it
    (torch.Size, torch.float32, torch.return_types), and __file__ is absolute, as Python's
    own __main__'s."""
    pytest.importorskip("torch")
    (tmp_path / "prints.py").write_text(PRINTS)
    done = _run("prints.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    theirs = subprocess.run([sys.executable, "prints.py"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=600, check=True)
    assert done.stdout == theirs.stdout
    assert "torch.Size([2, 3]) torch.float32 torch.ShortTensor" in done.stdout


@pytest.mark.subprocess
def test_a_missing_torch_module_names_itself(tmp_path):
    (tmp_path / "uses_masked.py").write_text("import torch.masked\n")
    done = _run("uses_masked.py", cwd=tmp_path)
    assert done.returncode != 0
    assert "No module named 'torch.masked': jitensor has no jitensor.masked" in done.stderr


@pytest.mark.subprocess
def test_modules_run_with_dash_m(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "main.py").write_text("import torch\nprint(torch.ones(2).sum().item())\n")
    done = _run("-m", "pkg.main", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2.0"


def test_the_alias_refuses_a_process_that_imported_torch(monkeypatch):
    import types

    from jitensor import run
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path
                                           if not isinstance(f, run._TorchAlias)])
    with pytest.raises(RuntimeError, match="already imported"):
        run.install()


@pytest.mark.torch
def test_coverage_report_counts_what_jitensor_has():
    pytest.importorskip("torch")
    from jitensor import coverage
    rows = coverage.report()
    assert set(rows) == {"top level", "Tensor", "nn modules", "nn.functional",
                         "nn.Module methods", "torch.autograd", "optimizers", "torch.special",
                         "torch.distributions", "torch.func", "torch.fft"}
    for row in rows.values():
        assert 0 < row["present"] <= row["total"]
        assert row["present"] + len(row["missing"]) == row["total"]
    assert "add" not in rows["top level"]["missing"]
    assert "Linear" not in rows["nn modules"]["missing"]
    assert all(not name.startswith("_") for name in rows["top level"]["missing"])

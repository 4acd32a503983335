"""The main job, `python -m jitensor`: its headline table has every row and peer column, and
every ratio is a finite positive number. Run on tiny tensors (the hidden `--small` switch);
nothing here asserts a time."""
import importlib.util
import math
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS = ["empty", "zeros", "ones", "full", "zeros(2, 3)", "x + y", "add", "mul", "exp", "sum",
        "softmax(dim=-1)", "matmul", "MLP train step (Adam)"]


def _table(stdout):
    """(peers, {op: [(ratio text per peer)]}) from the headline table: each ratio column ends
    where its 'ratio' header ends."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("== headline"))
    header = lines[start + 1]
    words = header.split()
    assert words[:3] == ["op", "shape", "jitensor"], header
    peers = words[3::2]
    ends = [i + len("ratio") for i in range(len(header)) if header.startswith("ratio", i)]
    rows = {}
    for line in lines[start + 2:]:
        if not line.strip():  # a blank line ends the table
            break
        op = line[:24].strip()
        rows.setdefault(op, []).append([line[end - 7:end].strip() for end in ends])
    return peers, rows


@pytest.mark.slow
@pytest.mark.subprocess
def test_headline_table():
    run = subprocess.run([sys.executable, "-m", "jitensor", "--small", "--device", "cpu"],
                         cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    peers, rows = _table(run.stdout)
    expected = ["numpy"] + (["torch"] if importlib.util.find_spec("torch") else [])
    assert peers == expected
    assert set(rows) == set(ROWS)
    assert all(len(rows[op]) == 2 for op in ("empty", "zeros", "ones", "full"))  # two sizes
    for op, lines in rows.items():
        for ratios in lines:
            for peer, text in zip(peers, ratios, strict=False):
                if op.startswith("MLP") and peer == "numpy":
                    assert text == ""  # NumPy has no autograd: no peer
                    continue
                ratio = float(text)
                assert math.isfinite(ratio) and ratio > 0, (op, peer, text)

"""Docstrings say why, in words; measured timings live in benchmark output and docs/design.md."""
import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1] / "jitensor"
# a figure with a time or rate unit, or a speed ratio ("2.5x faster")
TIMING = re.compile(r"\d(\.\d+)?\s*(µs|us|ms|ns|GB/s|TFLOP/s|GFLOP/s)\b"
                    r"|\d(\.\d+)?x (faster|slower)")
# benchmark modules describe what they measure and how they print it ("'1.234 ms (12.3 GB/s)'")
EXCLUDED = {"bench"}


def _docstrings(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield getattr(node, "name", "<module>"), node.body[0].lineno, doc


def test_no_docstring_quotes_a_measured_timing():
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in EXCLUDED:
            continue
        for name, line, doc in _docstrings(path):
            found = TIMING.search(doc)
            if found:
                offenders.append(f"jitensor/{rel.as_posix()}:{line} {name}: {found.group(0)!r}")
    assert not offenders, (
        "docstrings quote measured timings; keep the reason in words and move the figures to "
        "docs/design.md:\n" + "\n".join(offenders))

"""The compile report (`python -m jitensor --compile-report`): what it records."""
from numba import njit

from jitensor.bench import compile_report


def test_recorder_lists_each_compile_with_its_signature_and_nesting():
    @njit
    def inner(x):
        return x + 1

    @njit
    def outer(x):
        return inner(x) * 2

    with compile_report.Recorder() as rec:
        assert outer(3) == 8
        assert outer(1.5) == 5.0
    compiles = [r for r in rec.records if r["kind"] == "compile"]
    names = [(r["name"].rsplit(".", 1)[-1], r["signature"], r["depth"]) for r in compiles]
    assert ("outer", "(int64)", 0) in names and ("inner", "(int64)", 1) in names
    assert ("outer", "(float64)", 0) in names
    for r in compiles:
        assert 0 <= r["self_cpu"] <= r["cpu"] and 0 <= r["self"] <= r["seconds"]
    totals, by_name = compile_report.summarize(rec.records)
    assert totals["compile"][0] == 4
    assert [n for name, (n, _) in by_name.items() if name.endswith("outer")] == [2]
    text = rec.report()
    assert "outer" in text and "(float64)" in text


def test_recorder_counts_cache_loads(tmp_path, monkeypatch):
    import numba
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    source = tmp_path / "cached_kernel_for_report.py"
    source.write_text("from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n"
                      "    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    module = importlib.import_module("cached_kernel_for_report")
    module.twice(2)  # compiled and saved
    fresh = numba.njit(cache=True)(module.twice.py_func)
    with compile_report.Recorder() as rec:
        assert fresh(3) == 6
    kinds = [r["kind"] for r in rec.records]
    assert kinds == ["load"], kinds

"""jitensor.utils.benchmark against torch.utils.benchmark's API: Timer, Measurement, Compare."""
import pytest

import jitensor as jt
from jitensor.utils import benchmark


def test_timer_measures_a_statement():
    x = jt.ones(64)
    t = benchmark.Timer("y = x * x", setup="z = 1", globals={"x": x}, label="mul",
                        sub_label="64", description="float32")
    m = t.timeit(50)
    assert isinstance(m, benchmark.Measurement) and m.number_per_run == 50
    assert len(m.times) == 1 and m.times[0] > 0 and m.median == m.mean == m.times[0]
    assert m.iqr == 0 and 1 <= m.significant_figures <= 4
    assert "mul: 64" in repr(m) and "1 measurement, 50 runs , 1 thread" in repr(m)
    blocked = t.blocked_autorange(min_run_time=0.05)
    assert sum(blocked.raw_times) >= 0.05 and blocked.number_per_run >= 1
    # (one block can be the whole run on a loaded machine: then the repr is a single time's)
    assert ("IQR" in repr(blocked)) == (len(blocked.times) > 1)
    adaptive = t.adaptive_autorange(threshold=0.5, max_run_time=0.5)
    assert len(adaptive.times) > 3 or sum(adaptive.raw_times) >= 0.5


def test_threads_are_the_timers_and_restored():
    before = jt.get_num_threads()
    seen = []
    benchmark.Timer("seen.append(jt.get_num_threads())", globals={"seen": seen, "jt": jt},
                    num_threads=1).timeit(3)
    assert set(seen) == {1} and jt.get_num_threads() == before


def test_compare_tables_and_merge():
    results = [benchmark.Timer("pass", label="noop", sub_label=row, description=col)
               .blocked_autorange(min_run_time=0.02)
               for row in ("a", "b") for col in ("first", "second")]
    results.append(results[0])  # (the same task twice: merged into one cell)
    assert len(benchmark.Measurement.merge(results)) == 4
    compare = benchmark.Compare(results)
    compare.trim_significant_figures()
    text = str(compare)
    for word in ("noop", "first", "second", "1 threads", "Times are in"):
        assert word in text
    rows = [line.split("|")[0].strip() for line in text.splitlines() if "|" in line]
    assert rows == ["", "a", "b"]  # (the header, then one row per sub_label)
    compare.colorize()
    assert "\033[92m" in str(compare)
    with pytest.raises(ValueError, match="Measurement"):
        benchmark.Compare([1.0])


def test_refused_parts():
    with pytest.raises(NotImplementedError, match="C\\+\\+"):
        benchmark.Timer("x", language=benchmark.Language.CPP)
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        benchmark.Timer().repeat()
    assert jt.utils.benchmark.Timer is benchmark.Timer
    unit, scale = benchmark.select_unit(2.5e-5)
    assert (unit, scale) == ("us", 1e-6) and benchmark.trim_sigfig(123.456, 2) == 120

"""Helpers of the benchmarks (`python -m jitensor`, asv_bench/)."""
import os
import time

import pytest

from jitensor.bench import busy_neighbour


def _cpu_ticks(pid):
    """User CPU time of process `pid` so far, in clock ticks (Linux's /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[11])


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs Linux's /proc")
def test_busy_neighbour_spins_while_the_block_runs_and_is_gone_after():
    with busy_neighbour() as spinner:
        assert spinner.poll() is None
        before = _cpu_ticks(spinner.pid)
        time.sleep(0.3)
        assert _cpu_ticks(spinner.pid) > before  # it computes, it does not sleep
    assert spinner.returncode is not None

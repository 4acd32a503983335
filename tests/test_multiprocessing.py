"""jitensor.multiprocessing: Python's multiprocessing names, torch's sharing-strategy switches,
and spawn / start_processes (each process runs fn(i, *args); a failure in one stops the others
and is raised in the parent with the child's traceback or exit code)."""
import multiprocessing
import os
import pickle

import pytest

import jitensor as jt
import jitensor.multiprocessing as mp

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


def _write_sum(i, folder, n):
    jt.save(jt.arange(n) * i, os.path.join(folder, f"{i}.pt"))


def _fail_in_one(i):
    if i == 1:
        raise ValueError(f"process {i} refuses")


def _exit_with(i, code):
    if i == 0:
        os._exit(code)


def test_spawn_runs_each_index(tmp_path):
    assert mp.spawn(_write_sum, args=(str(tmp_path), 4), nprocs=2) is None
    for i in range(2):
        assert jt.load(tmp_path / f"{i}.pt").tolist() == [0, i, 2 * i, 3 * i]


def test_a_failure_is_raised_with_the_child_traceback():
    with pytest.raises(mp.ProcessRaisedException) as error:
        mp.spawn(_fail_in_one, nprocs=2)
    assert error.value.error_index == 1
    assert "ValueError: process 1 refuses" in str(error.value)
    assert "-- Process 1 terminated with the following error:" in str(error.value)
    again = pickle.loads(pickle.dumps(error.value))
    assert again.error_index == 1


def test_exit_codes_and_contexts():
    context = mp.start_processes(_exit_with, args=(3,), nprocs=1, join=False,
                                 start_method="fork")
    assert len(context.pids()) == 1
    with pytest.raises(mp.ProcessExitedException, match="exit code 3") as error:
        while not context.join():
            pass
    assert error.value.exit_code == 3
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(_fail_in_one, nprocs=1, start_method="fork")


def test_multiprocessing_names_and_sharing_strategy():
    for name in multiprocessing.__all__:
        assert getattr(mp, name) is getattr(multiprocessing, name)
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    saved = mp.get_sharing_strategy()
    mp.set_sharing_strategy("file_system")
    assert mp.get_sharing_strategy() == "file_system"
    mp.set_sharing_strategy(saved)
    with pytest.raises(AssertionError):
        mp.set_sharing_strategy("shm")
    assert jt.multiprocessing is mp

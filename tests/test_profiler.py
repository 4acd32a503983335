"""jitensor.profiler / jitensor.autograd.profiler (torch.profiler's API)."""
import json
import subprocess
import sys
import threading
import time

import pytest

import jitensor as jt
import jitensor.autograd.profiler as AP
import jitensor.profiler as P
from jitensor import nn
from jitensor.tensor import Tensor


def _model():
    jt.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def _names(events):
    return [e.name for e in events]


def test_forward_backward_events_and_counts():
    m, x = _model(), jt.randn(3, 4)
    with P.profile(activities=[P.ProfilerActivity.CPU]) as prof:
        m(x).sum().backward()
    names = _names(prof.events())
    assert names.count("aten::linear") == 2
    assert names.count("aten::sum") >= 1
    assert "aten::relu" in names
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["aten::linear"] == 2
    assert any(n.endswith("Backward0") for n in names)  # the engine's nodes
    assert "LinearBackward0" in names or "AddmmBackward0" in names


def test_operators_and_methods_recorded():
    x, y = jt.ones(2, 3), jt.ones(2, 3)
    with P.profile() as prof:
        x + y
        x.mul(y)
        jt.matmul(x, y.t())
        x[0]
    names = _names(prof.events())
    for op in ("aten::add", "aten::mul", "aten::matmul", "aten::t", "aten::index"):
        assert op in names, (op, names)


def test_record_function_nesting_and_self_time():
    x = jt.ones(8, 8)
    with P.profile() as prof:
        with P.record_function("block"):
            for _ in range(3):
                x = x + 1
            time.sleep(0.002)
    block = next(e for e in prof.events() if e.name == "block")
    children = block.cpu_children
    assert [c.name for c in children] == ["aten::add"] * 3
    assert all(c.cpu_parent is block for c in children)
    assert block.cpu_time_total >= sum(c.cpu_time_total for c in children)
    assert block.self_cpu_time_total == pytest.approx(
        block.cpu_time_total - sum(c.cpu_time_total for c in children))
    assert block.self_cpu_time_total >= 1500  # the sleep, in us


def test_record_function_decorator_and_inactive():
    @P.record_function("my_fn")
    def f(t):
        return t * 2

    x = jt.ones(2)
    f(x)  # no profiler: nothing happens
    with P.profile() as prof:
        f(x)
    events = prof.events()
    assert _names(events) == ["my_fn", "aten::mul"]
    assert events[1].cpu_parent is events[0]


def test_record_shapes():
    x, w = jt.ones(3, 4), jt.ones(5, 4)
    with P.profile(record_shapes=True) as prof:
        jt.nn.functional.linear(x, w)
        jt.cat([x, x])
    lin = next(e for e in prof.events() if e.name == "aten::linear")
    assert lin.input_shapes == [[3, 4], [5, 4]]
    cat = next(e for e in prof.events() if e.name == "aten::cat")
    assert cat.input_shapes[0] == [[3, 4], [3, 4]]
    table = prof.key_averages(group_by_input_shape=True).table(row_limit=5)
    assert "Input Shapes" in table and "[[3, 4], [5, 4]]" in table


def test_no_events_when_disabled_and_ops_restored():
    add = jt.add
    method = Tensor.__add__
    with AP.profile(enabled=False) as prof:
        jt.ones(2) + jt.ones(2)
    assert prof.function_events is None
    with P.profile():
        assert jt.add is not add and Tensor.__add__ is not method
    assert jt.add is add and Tensor.__add__ is method
    assert P.profile().events() == []


def test_other_threads_not_recorded():
    seen = []

    def work():
        seen.append(jt.ones(2) * 3)

    with P.profile() as prof:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        jt.ones(2) - 1
    names = _names(prof.events())
    assert "aten::sub" in names and "aten::mul" not in names and seen


def test_schedule_steps():
    sched = P.schedule(wait=1, warmup=1, active=2, repeat=1)
    A = P.ProfilerAction
    assert [sched(i) for i in range(6)] == [A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE,
                                            A.NONE, A.NONE]
    traces = []
    x = jt.ones(2)
    with P.profile(schedule=sched, on_trace_ready=lambda p: traces.append(p.events())) as prof:
        for step in range(6):
            for _ in range(step + 1):  # step i runs i + 1 adds
                x = x + 1
            prof.step()
    assert len(traces) == 1
    names = _names(traces[0])
    assert [n for n in names if n.startswith("ProfilerStep")] == ["ProfilerStep#2",
                                                                  "ProfilerStep#3"]
    assert names.count("aten::add") == 3 + 4  # steps 2 and 3 only


def test_chrome_trace_and_tensorboard_handler(tmp_path):
    with P.profile(record_shapes=True,
                   on_trace_ready=P.tensorboard_trace_handler(str(tmp_path / "tb"))) as prof:
        with P.record_function("range"):
            jt.ones(2, 2).sum()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    names = [e["name"] for e in doc["traceEvents"]]
    assert "range" in names and "aten::sum" in names
    for e in doc["traceEvents"]:
        assert e["ph"] == "X" and e["dur"] >= 0 and "ts" in e
    files = list((tmp_path / "tb").glob("*.pt.trace.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["traceEvents"]


def test_table():
    with P.profile() as prof:
        jt.ones(3).exp().sum()
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    for word in ("Name", "Self CPU %", "CPU total", "CPU time avg", "# of Calls", "aten::exp",
                 "aten::sum", "Self CPU time total"):
        assert word in table
    assert len(prof.key_averages().table(row_limit=1).splitlines()) == 6


def test_autograd_profiler():
    assert jt.autograd.kineto_available() is False
    assert jt.autograd.ProfilerActivity is P.ProfilerActivity
    with jt.autograd.profiler.profile(record_shapes=True) as prof:
        with jt.autograd.profiler.record_function("outer"):
            jt.ones(2, 3).sum(0)
    assert "aten::sum" in _names(prof.function_events)
    assert "outer" in prof.table()
    assert prof.key_averages().total_average().count == len(prof.function_events)
    with pytest.raises(RuntimeError):
        with P.profile(), P.profile():
            pass


def test_under_jitensor_run(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(
        "import torch\nimport torch.profiler\nfrom torch.profiler import profile, "
        "ProfilerActivity, record_function\nimport torch.autograd.profiler as ap\n"
        "x = torch.ones(2, 3, requires_grad=True)\n"
        "with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:\n"
        "    with record_function('model_inference'):\n"
        "        (x * 2).sum().backward()\n"
        "print(prof.key_averages().table(sort_by='cpu_time_total', row_limit=10))\n"
        "print(torch.autograd.kineto_available(), ap.profile.__name__)\n")
    out = subprocess.run([sys.executable, "-m", "jitensor.run", str(script)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "model_inference" in out.stdout and "aten::mul" in out.stdout
    assert "MulBackward0" in out.stdout and "False profile" in out.stdout

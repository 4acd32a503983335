"""torch modules scripts import at their top and jitensor has in their eager form: jit (script
and trace run the code as written), onnx (export refuses clearly), version, and
utils.data.DistributedSampler (each rank's share of the dataset, as torch's)."""
import typing

import numpy as np
import pytest

import jitensor as jt
from jitensor.utils.data import DistributedSampler

torch = pytest.importorskip("torch")


def test_jit_script_and_trace_run_eagerly():
    @jt.jit.script
    def f(x, n: int):
        for _ in range(n):
            x = x * 2 if x.sum() > 0 else x - 1
        return x

    assert f(jt.ones(2), 3).tolist() == [8.0, 8.0]
    assert f.__name__ == "f" and not jt.jit.is_scripting() and not jt.jit.is_tracing()
    model = jt.nn.Linear(2, 2)
    assert jt.jit.script(model) is model
    assert jt.jit.trace(model, jt.ones(1, 2)) is model
    assert jt.jit.fork(lambda a: a + 1, 2).wait() == 3
    assert jt.jit.annotate(int, 5) == 5 and jt.jit.ignore(abs) is abs

    class Old(jt.jit.ScriptModule):
        @jt.jit.script_method
        def forward(self, x):
            return x + 1
    assert Old()(jt.zeros(1)).tolist() == [1.0]
    with pytest.raises(NotImplementedError, match="TorchScript"):
        jt.jit.save(model, "m.pt")
    with pytest.raises(NotImplementedError, match="TorchScript"):
        jt.jit.load("m.pt")
    with pytest.raises(RuntimeError, match="cannot script int"):
        jt.jit.script(3)


def test_onnx_imports_and_export_refuses():
    import jitensor.onnx as onnx
    assert not onnx.is_in_onnx_export()
    with pytest.raises(NotImplementedError, match="ONNX is not supported by jitensor"):
        onnx.export(jt.nn.Linear(1, 1), (jt.ones(1),), "m.onnx")


def test_version():
    assert jt.version.__version__ == jt.__version__
    assert jt.version.cuda is None and jt.version.debug is False


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (9, 3, False),
                                                  (2, 4, False), (11, 2, True)])
def test_distributed_sampler_shares_as_torch(n, replicas, drop_last):
    data = list(range(n))
    for rank in range(replicas):
        mine = DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = torch.utils.data.distributed.DistributedSampler(data, replicas, rank,
                                                                  shuffle=False,
                                                                  drop_last=drop_last)
        assert list(mine) == list(theirs) and len(mine) == len(theirs)
    shares = [list(DistributedSampler(data, replicas, r, seed=5, drop_last=drop_last))
              for r in range(replicas)]
    merged = sorted(i for share in shares for i in share)
    if not drop_last and n >= replicas:
        assert set(merged) == set(data)
    assert all(len(s) == len(shares[0]) for s in shares)
    first = list(DistributedSampler(data, replicas, 0, seed=5, drop_last=drop_last))
    assert first == shares[0]  # the same epoch shuffles alike in every replica


def test_distributed_sampler_epochs_and_errors():
    s = DistributedSampler(list(range(50)), 2, 1)
    first = list(s)
    s.set_epoch(1)
    assert list(s) != first and len(list(s)) == 25
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval "
                                         r"\[0, 1\]"):
        DistributedSampler([1, 2], 2, 2)
    assert np.array_equal(sorted(list(DistributedSampler(list(range(6)), 1, 0))), range(6))
    assert jt.utils.data.DistributedSampler is DistributedSampler


def test_freeze_and_the_fusion_settings_as_torch():
    model = jt.jit.script(jt.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="eval mode"):
        jt.jit.freeze(model)
    frozen = jt.jit.freeze(model.eval())
    x = jt.ones(3, 2)
    assert jt.equal(frozen(x), model(x)) and jt.jit.optimize_for_inference(frozen) is frozen
    with pytest.raises(RuntimeError, match="ScriptModule"):
        jt.jit.freeze(lambda x: x)
    assert jt.jit.onednn_fusion_enabled() is False
    jt.jit.enable_onednn_fusion(True)
    assert jt.jit.onednn_fusion_enabled() is True
    jt.jit.enable_onednn_fusion(False)
    previous = jt.jit.set_fusion_strategy([("DYNAMIC", 3)])
    assert previous == [("STATIC", 2), ("DYNAMIC", 10)]
    assert jt.jit.set_fusion_strategy(previous) == [("DYNAMIC", 3)]
    with jt.jit.fuser("fuser1"), jt.jit.optimized_execution(False), jt.jit.strict_fusion():
        assert jt.equal(frozen(x), model(x))
    with pytest.raises(Exception, match="unrecognized fuser"), jt.jit.fuser("fuser9"):
        pass
    assert issubclass(jt.jit.TracerWarning, Warning) and issubclass(jt.jit.Error, Exception)


@pytest.mark.parametrize("value, kind, expected", [
    ([1, 2], list[int], True), ([1, "a"], list[int], False), ({"a": 1}, dict[str, int], True),
    ({"a": "b"}, dict[str, int], False), ((1, "a"), tuple[int, str], True),
    ((1, 2), tuple[int, str], False), (None, typing.Optional[int], True),  # noqa: UP045
    (None, int | None, True), (2.5, int | None, False), (3, int, True),
    ([jt.ones(1)], list[jt.Tensor], True)])
def test_jit_isinstance_checks_element_types(value, kind, expected):
    assert jt.jit.isinstance(value, kind) is expected

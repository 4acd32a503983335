"""torch.Stream and torch.Event, the device-generic ones, on the CPU against torch's (the CUDA
ones are jitensor.cuda's, tested in test_cuda_streams.py); torch.torch_version's comparisons."""
import pytest

import jitensor as jt

torch = pytest.importorskip("torch")


def test_cpu_stream_is_always_done_like_torchs():
    mine, theirs = jt.Stream("cpu"), torch.Stream("cpu")
    for name in ("device_type", "device_index", "stream_id"):
        assert getattr(mine, name) == getattr(theirs, name), name
    assert mine.query() is theirs.query() is True
    assert mine.synchronize() is None and mine.is_capturing() is False
    mine.wait_stream(jt.Stream("cpu"))
    with mine as entered:
        assert entered is mine
    assert mine == jt.Stream("cpu") and hash(mine) == hash(jt.Stream("cpu"))
    assert isinstance(jt.Stream(), jt.Stream)  # no accelerator here: the CPU's


def test_cpu_events_cannot_be_recorded_like_torchs():
    mine, theirs = jt.Event("cpu"), torch.Event("cpu")
    assert mine.query() is theirs.query() is True
    with pytest.raises(RuntimeError, match="doesn't support events"):
        theirs.record()
    with pytest.raises(RuntimeError, match="doesn't support events"):
        mine.record()
    with pytest.raises(RuntimeError, match="doesn't support events"):
        jt.Stream("cpu").record_event()
    with pytest.raises(RuntimeError, match="'meta'"):
        jt.Event("meta")


def test_cuda_streams_and_events_are_the_generic_ones():
    assert issubclass(jt.cuda.Stream, jt.Stream) and issubclass(jt.cuda.Event, jt.Event)


@pytest.mark.parametrize("other", ["0.1", "0.1.0", "0.1.0+cpu", "0.10", "0.9", "1.0", "0.1rc1",
                                   "0.1.0.dev3", "0.1a2", "0.1b1", "0.1.post1", (0, 1), (0, 2),
                                   (0, 0, 9), [0, 1, 0]])
def test_version_compares_as_torchs_does(other):
    from torch.torch_version import TorchVersion as Theirs

    from jitensor.torch_version import TorchVersion as Mine
    for version in ("0.1.0", "0.1.1", "0.9", "2.13.0+cpu"):
        mine, theirs = Mine(version), Theirs(version)
        for op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
            assert getattr(mine, op)(other) == getattr(theirs, op)(other), (version, op, other)


def test_jitensor_version_is_a_comparable_str():
    assert isinstance(jt.__version__, str) and jt.__version__ == jt.version.__version__
    assert jt.__version__ >= "0.1" and jt.__version__ < (0, 10) and jt.__version__ > "0.0.9"
    assert jt.torch_version.internal_version == jt.version.__version__
    with pytest.raises(ValueError, match="invalid version"):
        assert jt.__version__ < "latest"

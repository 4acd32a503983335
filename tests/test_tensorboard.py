"""jitensor.utils.tensorboard (torch.utils.tensorboard's SummaryWriter): event files written
here and read back with tensorboard's own readers (EventAccumulator, the event file loader),
and, where torch is installed, the same calls through torch's SummaryWriter writing the same
events and files; the errors of bad arguments are torch's; without tensorboard the import fails
as torch's does."""
import importlib
import io
import os
import sys
import types

import numpy as np
import pytest
from conftest import run_python

import jitensor as jt

pytest.importorskip("tensorboard")

from tensorboard.backend.event_processing import event_accumulator  # noqa: E402
from tensorboard.backend.event_processing.event_file_loader import (  # noqa: E402
    LegacyEventFileLoader,
)
from tensorboard.util import tensor_util  # noqa: E402

from jitensor.utils.tensorboard import FileWriter, SummaryWriter  # noqa: E402
from jitensor.utils.tensorboard import summary as S  # noqa: E402
from jitensor.utils.tensorboard import writer as W  # noqa: E402

WALLTIME = 1_700_000_000.0


def _accumulator(path):
    acc = event_accumulator.EventAccumulator(
        str(path), size_guidance={k: 0 for k in event_accumulator.DEFAULT_SIZE_GUIDANCE})
    acc.Reload()
    return acc


def _event_files(folder):
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if ".tfevents." in f)


def _events(folder):
    """The events of every event file in `folder` (not below it), unconverted."""
    return [e for path in _event_files(folder) for e in LegacyEventFileLoader(path).Load()]


def _summaries(folder):
    """[(step, Summary.Value)] of the folder's events."""
    return [(e.step, v) for e in _events(folder) if e.HasField("summary")
            for v in e.summary.value]


def _png(encoded):
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(encoded)))


# -- what is written, read back --------------------------------------------------------------------
def test_scalars_read_back(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("loss", jt.tensor(0.5), 0)
        w.add_scalar("loss", jt.tensor([0.25], requires_grad=True), 1)
        w.add_scalar("loss", np.float32(0.125), 2)
        w.add_scalar("loss", 3, np.int64(3))
        w.add_scalar("loss", np.array([[1.5]]), jt.tensor(4))
        w.add_scalar("acc", 0.75, 7, walltime=WALLTIME)
    acc = _accumulator(tmp_path)
    assert sorted(acc.Tags()["scalars"]) == ["acc", "loss"]
    got = [(e.step, e.value) for e in acc.Scalars("loss")]
    assert got == [(0, 0.5), (1, 0.25), (2, 0.125), (3, 3.0), (4, 1.5)]
    (e,) = acc.Scalars("acc")
    assert (e.step, e.value, e.wall_time) == (7, 0.75, WALLTIME)


def test_new_style_scalars_are_scalars_plugin_tensors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("f", 1 / 3, 1, new_style=True)
        w.add_scalar("d", 1 / 3, 2, new_style=True, double_precision=True)
    (step_f, f), (step_d, d) = _summaries(tmp_path)
    assert (step_f, f.tag, f.metadata.plugin_data.plugin_name) == (1, "f", "scalars")
    assert f.tensor.dtype == 1 and tensor_util.make_ndarray(f.tensor) == np.float32(1 / 3)
    assert (step_d, d.tag, d.tensor.dtype) == (2, "d", 2)  # DT_FLOAT, DT_DOUBLE
    assert tensor_util.make_ndarray(d.tensor) == 1 / 3
    acc = _accumulator(tmp_path)  # (read as tensors by tensorboard)
    assert [e.step for e in acc.Tensors("d")] == [2]


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(3):
            w.add_scalars("run/14h", {"xsinx": step * 1.0, "xcosx": jt.tensor(step * 2.0)}, step)
    assert sorted(os.listdir(tmp_path / "run_14h_xsinx")) and \
        sorted(os.listdir(tmp_path / "run_14h_xcosx"))
    for name, scale in (("xsinx", 1.0), ("xcosx", 2.0)):
        acc = _accumulator(tmp_path / f"run_14h_{name}")
        assert [(e.step, e.value) for e in acc.Scalars("run/14h")] == \
            [(s, s * scale) for s in range(3)]


def test_histogram_read_back(tmp_path):
    values = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("w", jt.tensor(values), 5)
        w.add_histogram("auto", values, 6, bins="auto")
        w.add_histogram("ten", jt.tensor(values.reshape(10, 100)), 7, bins=10)
        w.add_histogram("few", values, 8, bins=20, max_bins=4)
    acc = _accumulator(tmp_path)
    assert sorted(acc.Tags()["histograms"]) == ["auto", "few", "ten", "w"]
    v = values.astype(float)
    for tag in ("w", "auto", "ten", "few"):
        (e,) = acc.Histograms(tag)
        h = e.histogram_value
        assert (h.min, h.max, h.num) == (v.min(), v.max(), 1000)
        assert h.sum == pytest.approx(v.sum()) and h.sum_squares == pytest.approx(v.dot(v))
        assert sum(h.bucket) == 1000 and h.bucket[0] == 0  # (the empty bucket on the left)
        assert list(h.bucket_limit) == sorted(h.bucket_limit)
        assert h.bucket_limit[-1] >= v.max() and h.bucket_limit[1] >= v.min()
    counts, limits = np.histogram(v, bins=10)
    (e,) = acc.Histograms("ten")
    assert list(e.histogram_value.bucket) == [0, *counts]
    assert list(e.histogram_value.bucket_limit) == list(limits)
    assert len(acc.Histograms("few")[0].histogram_value.bucket) == 1 + 4
    # the default bins: TensorBoard's, 10% apart from 1e-12
    bins = w.default_bins
    assert bins[len(bins) // 2] == 0 and bins[len(bins) // 2 + 1] == 1e-12
    assert bins[-1] >= 1e20 / 1.1 and bins == [-b for b in reversed(bins)]


def test_histogram_raw_read_back(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_histogram_raw("raw", min=0.0, max=3.0, num=6, sum=9.0, sum_squares=19.0,
                            bucket_limits=[1.0, 2.0, 3.0], bucket_counts=[1, 2, 3],
                            global_step=2)
    (e,) = _accumulator(tmp_path).Histograms("raw")
    h = e.histogram_value
    assert (e.step, h.min, h.max, h.num, h.sum, h.sum_squares) == (2, 0, 3, 6, 9, 19)
    assert list(h.bucket_limit) == [1, 2, 3] and list(h.bucket) == [1, 2, 3]


def test_images_read_back(tmp_path):
    rng = np.random.default_rng(1)
    chw = rng.random((3, 5, 7), dtype=np.float32)
    hwc = rng.integers(0, 256, (4, 6, 3), dtype=np.uint8)
    batch = rng.random((10, 1, 3, 2), dtype=np.float32)
    with SummaryWriter(tmp_path) as w:
        w.add_image("chw", jt.tensor(chw), 0)
        w.add_image("hwc", hwc, 1, dataformats="HWC")
        w.add_image("hw", jt.tensor(chw[0]), 2, dataformats="HW")
        w.add_images("batch", jt.tensor(batch), 3)
        w.add_image_with_boxes("boxes", chw, jt.tensor([[1.0, 1.0, 4.0, 3.0]]), 4,
                               labels=["cat"])
    acc = _accumulator(tmp_path)
    assert sorted(acc.Tags()["images"]) == ["batch", "boxes", "chw", "hw", "hwc"]
    (e,) = acc.Images("chw")
    assert (e.step, e.height, e.width) == (0, 5, 7)
    np.testing.assert_array_equal(
        _png(e.encoded_image_string),
        (chw.transpose(1, 2, 0) * 255).clip(0, 255).astype(np.uint8))
    (e,) = acc.Images("hwc")
    np.testing.assert_array_equal(_png(e.encoded_image_string), hwc)  # (uint8: not scaled)
    (e,) = acc.Images("hw")
    gray = _png(e.encoded_image_string)
    assert gray.shape == (5, 7, 3) and (gray[..., 0] == gray[..., 2]).all()
    (e,) = acc.Images("batch")  # 10 images tiled 8 to a row: 2 rows of 8
    assert (e.height, e.width) == (2 * 3, 8 * 2)
    assert _png(e.encoded_image_string).shape == (6, 16, 3)
    (e,) = acc.Images("boxes")
    boxed = _png(e.encoded_image_string)
    assert boxed.shape == (5, 7, 3) and (boxed[1, 1] == (255, 0, 0)).all()  # a red corner


def test_figure_read_back(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    figures = []
    for k in range(2):
        fig = Figure(figsize=(2, 1), dpi=50)
        fig.add_subplot().plot([0, 1], [k, 1 - k])
        figures.append(fig)
    with SummaryWriter(tmp_path) as w:
        w.add_figure("one", figures[0], 0, close=False)
        w.add_figure("two", figures, 1)
    acc = _accumulator(tmp_path)
    (e,) = acc.Images("one")
    assert (e.height, e.width) == (50, 100)
    (e,) = acc.Images("two")
    assert (e.height, e.width) == (50, 200)  # (side by side)


def test_text_read_back(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "an *lstm* ✓", 10)
    (e,) = _accumulator(tmp_path).Tensors("notes/text_summary")
    assert e.step == 10
    assert tensor_util.make_ndarray(e.tensor_proto).tolist() == ["an *lstm* ✓".encode()]
    ((_, value),) = _summaries(tmp_path)
    assert value.metadata.plugin_data.plugin_name == "text"


@pytest.mark.parametrize("dtype", [jt.float32, jt.float64, jt.int64, jt.int32, jt.int16,
                                   jt.int8, jt.uint8, jt.bool], ids=str)
def test_tensor_read_back(tmp_path, dtype):
    data = np.arange(6).reshape(2, 3) % 3
    t = jt.tensor(data, dtype=dtype)
    with SummaryWriter(tmp_path) as w:
        w.add_tensor("t", t, 3)
    (e,) = _accumulator(tmp_path).Tensors("t")
    if dtype is jt.uint8:  # (torch writes uint8 to uint32_val, where make_ndarray does not look)
        assert e.tensor_proto.dtype == 4 and not e.tensor_proto.int_val  # DT_UINT8
        got = np.array(e.tensor_proto.uint32_val, np.uint8).reshape(2, 3)
    else:
        got = tensor_util.make_ndarray(e.tensor_proto)
    assert got.dtype == dtype.np and got.shape == (2, 3)
    np.testing.assert_array_equal(got, data.astype(dtype.np))


def test_hparams_read_back(tmp_path):
    from tensorboard.plugins.hparams import plugin_data_pb2
    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"lr": 0.1, "layers": 2, "act": "relu", "bn": True, "wd": None,
                       "drop": jt.tensor([0.5])},
                      {"hparam/accuracy": 0.9, "hparam/loss": jt.tensor(0.25)},
                      hparam_domain_discrete={"act": ["relu", "tanh"]}, run_name="trial")
    assert _event_files(tmp_path)  # (the writer's own file, empty but for its version)
    summaries = _summaries(tmp_path / "trial")
    plugin = [plugin_data_pb2.HParamsPluginData.FromString(v.metadata.plugin_data.content)
              for _, v in summaries if v.metadata.plugin_data.plugin_name == "hparams"]
    assert [p.WhichOneof("data") for p in plugin] == \
        ["experiment", "session_start_info", "session_end_info"]
    exp, start, end = plugin
    assert [h.name for h in exp.experiment.hparam_infos] == ["lr", "layers", "act", "bn", "drop"]
    act = exp.experiment.hparam_infos[2]
    assert [v.string_value for v in act.domain_discrete.values] == ["relu", "tanh"]
    assert [m.name.tag for m in exp.experiment.metric_infos] == \
        ["hparam/accuracy", "hparam/loss"]
    hp = start.session_start_info.hparams
    assert (hp["lr"].number_value, hp["layers"].number_value, hp["act"].string_value,
            hp["drop"].number_value) == (0.1, 2, "relu", 0.5)
    assert "wd" not in hp
    assert end.session_end_info.status == 1  # STATUS_SUCCESS
    acc = _accumulator(tmp_path / "trial")
    assert [e.value for e in acc.Scalars("hparam/accuracy")] == [pytest.approx(0.9)]
    assert [e.value for e in acc.Scalars("hparam/loss")] == [0.25]


def test_pr_curves_custom_scalars_and_mesh(tmp_path):
    from tensorboard.plugins.custom_scalar import layout_pb2
    labels = np.array([0, 1, 1, 0, 1])
    predictions = np.array([0.1, 0.9, 0.6, 0.4, 0.3], dtype=np.float32)
    with SummaryWriter(tmp_path) as w:
        w.add_pr_curve("pr", jt.tensor(labels), jt.tensor(predictions), 1, num_thresholds=500)
        w.add_pr_curve_raw("raw", *[np.arange(4.0)] * 6, global_step=2, num_thresholds=4)
        w.add_custom_scalars({"Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
                              "USA": {"dow": ["Margin", ["dow/a", "dow/b", "dow/c"]]}})
        w.add_mesh("m", jt.rand(1, 4, 3), colors=jt.tensor(np.full((1, 4, 3), 255)),
                   faces=np.array([[[0, 1, 2], [0, 2, 3]]]), config_dict={"camera": {}},
                   global_step=3)
    by_tag = {v.tag: (step, v) for step, v in _summaries(tmp_path)}
    step, pr = by_tag["pr"]
    data = tensor_util.make_ndarray(pr.tensor)
    assert step == 1 and data.shape == (6, 127)  # (at most 127 thresholds)
    assert data[0, 0] == 3 and data[1, 0] == 2  # all 3 positives and 2 negatives at 0
    assert pr.metadata.plugin_data.plugin_name == "pr_curves"
    assert tensor_util.make_ndarray(by_tag["raw"][1].tensor).shape == (6, 4)
    layout = layout_pb2.Layout.FromString(
        tensor_util.make_ndarray(by_tag["custom_scalars__config__"][1].tensor).item())
    assert [c.title for c in layout.category] == ["Taiwan", "USA"]
    assert list(layout.category[0].chart[0].multiline.tag) == ["twse/0050", "twse/2330"]
    assert layout.category[1].chart[0].margin.series[0].upper == "dow/c"
    assert sorted(t for t in by_tag if t.startswith("m_")) == ["m_COLOR", "m_FACE", "m_VERTEX"]
    assert tensor_util.make_ndarray(by_tag["m_FACE"][1].tensor).shape == (1, 2, 3)


def test_audio_read_back(tmp_path):
    sound = np.sin(np.linspace(0, 20, 800)).astype(np.float32)
    with SummaryWriter(tmp_path) as w:
        w.add_audio("a", jt.tensor(sound[None]), 1, sample_rate=8000)
    (e,) = _accumulator(tmp_path).Audio("a")
    assert (e.step, e.sample_rate, e.length_frames, e.content_type) == \
        (1, 8000, 800, "audio/wav")
    import wave
    with wave.open(io.BytesIO(e.encoded_audio_string)) as f:
        assert (f.getnchannels(), f.getsampwidth(), f.getnframes()) == (1, 2, 800)


def test_embedding_files(tmp_path):
    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
    mat = np.arange(12, dtype=np.float32).reshape(4, 3)
    with SummaryWriter(tmp_path) as w:
        w.add_embedding(jt.tensor(mat), metadata=["a", "b", "c", "d"],
                        label_img=jt.rand(4, 3, 5, 5), tag="my/emb")
        w.add_embedding(mat, metadata=[[1, "x"], [2, "y"], [3, "z"], [4, "w"]],
                        metadata_header=["n", "s"], global_step=7)
    first = tmp_path / "00000" / "my%2femb"
    assert (first / "tensors.tsv").read_text().splitlines()[1] == "3.0\t4.0\t5.0"
    assert (first / "metadata.tsv").read_text() == "a\nb\nc\nd\n"
    assert _png((first / "sprite.png").read_bytes()).shape == (10, 10, 3)
    assert (tmp_path / "00007" / "default" / "metadata.tsv").read_text().startswith("n\ts\n1\tx")
    config = text_format.Parse((tmp_path / "projector_config.pbtxt").read_text(),
                               ProjectorConfig())
    assert [e.tensor_name for e in config.embeddings] == ["my/emb:00000", "default:00007"]
    assert list(config.embeddings[0].sprite.single_image_dim) == [5, 5]


# -- the writer itself -------------------------------------------------------------------------
def test_default_log_dir_and_comment(tmp_path, monkeypatch):
    import socket
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1") as w:
        folder = w.get_logdir()
    head, name = os.path.split(folder)
    assert head == "runs" and name.endswith("_" + socket.gethostname() + "_lr0.1")
    assert _event_files(tmp_path / folder)


def test_file_writer_and_constructor_arguments(tmp_path):
    w = SummaryWriter(log_dir=tmp_path / "p", max_queue=3, flush_secs=5, filename_suffix=".x")
    assert w.get_logdir() == tmp_path / "p"
    assert (w.max_queue, w.flush_secs, w.filename_suffix) == (3, 5, ".x")
    w.close()
    assert all(f.endswith(".x") for f in os.listdir(tmp_path / "p"))
    fw = FileWriter(tmp_path / "fw")
    assert fw.get_logdir() == str(tmp_path / "fw")
    fw.add_summary(S.scalar("s", 2.0), global_step=np.int32(4), walltime=WALLTIME)
    fw.close()
    ((step, value),) = _summaries(tmp_path / "fw")
    assert (step, value.simple_value) == (4, 2.0)


def test_close_flush_reopen_and_context_manager(tmp_path):
    w = SummaryWriter(tmp_path, flush_secs=1000)
    w.add_scalar("a", 1.0, 0)
    w.flush()  # (written without closing)
    assert [e.value for e in _accumulator(tmp_path).Scalars("a")] == [1.0]
    w.close()
    w.close()  # (twice: nothing)
    w.flush()
    w.add_scalar("a", 2.0, 1)  # (reopens: a second file)
    w.close()
    assert len(_event_files(tmp_path)) == 2
    with SummaryWriter(tmp_path / "ctx") as ctx:
        ctx.add_scalar("b", 3.0, 0)
    assert ctx.all_writers is None
    assert [e.value for e in _accumulator(tmp_path / "ctx").Scalars("b")] == [3.0]


def test_purge_step_hides_the_crashed_runs_later_steps(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(6):
            w.add_scalar("loss", float(step), step)
    with SummaryWriter(tmp_path, purge_step=3) as w:
        for step in range(3, 5):
            w.add_scalar("loss", 10.0 + step, step)
    got = [(e.step, e.value) for e in _accumulator(tmp_path).Scalars("loss")]
    assert got == [(0, 0.0), (1, 1.0), (2, 2.0), (3, 13.0), (4, 14.0)]


# -- what jitensor cannot do, and bad arguments --------------------------------------------------
def test_add_graph_is_not_supported(tmp_path):
    with SummaryWriter(tmp_path) as w, \
            pytest.raises(NotImplementedError, match="jitensor has no graph tracing"):
        w.add_graph(jt.nn.Linear(2, 2), jt.randn(1, 2))


def test_add_video_needs_moviepy(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "moviepy", None)
    with SummaryWriter(tmp_path) as w, \
            pytest.raises(ImportError, match=r"moviepy.*pip install moviepy"):
        w.add_video("v", np.zeros((1, 2, 3, 4, 4), np.float32))


def test_add_onnx_graph_needs_onnx(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with SummaryWriter(tmp_path) as w, pytest.raises(ImportError, match="pip install onnx"):
        w.add_onnx_graph(str(tmp_path / "model.onnx"))


def test_onnx_graph_conversion():
    """The GraphDef add_onnx_graph writes, from an object shaped as onnx's GraphProto."""
    ns = types.SimpleNamespace

    def value(name, dims):
        return ns(name=name, type=ns(tensor_type=ns(elem_type=1, shape=ns(
            dim=[ns(dim_value=d) for d in dims]))))

    attribute = ns(ListFields=lambda: [(None, "alpha"), (None, 0.5)])
    graph = ns(input=[value("x", (1, 3))], output=[value("y", (1, 3))],
               node=[ns(output=["y"], input=["x"], op_type="LeakyRelu", attribute=[attribute])])
    g = W._parse_onnx_graph(graph)
    assert [(n.name, n.op) for n in g.node] == [("x", "Variable"), ("y", "Variable"),
                                                ("y", "LeakyRelu")]
    assert [d.size for d in g.node[0].attr["shape"].shape.dim] == [1, 3]
    assert list(g.node[2].input) == ["x"]
    assert g.node[2].attr["parameters"].s == b"alpha = 0.5"


# each: (the call on a SummaryWriter `w`, given T: NumPy array -> the library's tensor)
BAD = {
    "scalar-of-3": lambda w, T: w.add_scalar("a", T(np.ones(3)), 0),
    "scalar-list": lambda w, T: w.add_scalar("a", [1.0], 0),
    "hparams-list": lambda w, T: w.add_hparams([("lr", 1)], {}),
    "hparams-value": lambda w, T: w.add_hparams({"lr": [1]}, {}),
    "hparams-domain": lambda w, T: w.add_hparams({"lr": 0.1}, {}, {"lr": ["a"]}),
    "histogram-empty": lambda w, T: w.add_histogram("h", T(np.zeros(0)), 0),
    "histogram-raw-lengths": lambda w, T: w.add_histogram_raw("h", 0, 1, 1, 1, 1, [1, 2], [1]),
    "image-format": lambda w, T: w.add_image("i", T(np.zeros((3, 4, 4))), dataformats="HW"),
    "image-format-twice": lambda w, T: w.add_image("i", T(np.zeros((3, 4, 4))),
                                                   dataformats="CCW"),
    "images-channels": lambda w, T: w.add_images("i", T(np.zeros((2, 2, 4, 4)))),
    "margin-tags": lambda w, T: w.add_custom_scalars_marginchart(["a", "b"]),
    "layout-margin": lambda w, T: w.add_custom_scalars({"c": {"t": ["Margin", ["a"]]}}),
    "tensor-list": lambda w, T: w.add_tensor("t", [1, 2]),
    "audio-2d": lambda w, T: w.add_audio("a", T(np.zeros((2, 3)))),
    "mesh-2d": lambda w, T: w.add_mesh("m", T(np.zeros((4, 3)))),
    "embedding-labels": lambda w, T: w.add_embedding(T(np.zeros((3, 2))), metadata=["a"]),
    "embedding-1d": lambda w, T: w.add_embedding(T(np.zeros(3))),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise(tmp_path, name):
    with SummaryWriter(tmp_path) as w, \
            pytest.raises((AssertionError, TypeError, ValueError, NotImplementedError,
                           AttributeError)):
        BAD[name](w, jt.tensor)


# -- without tensorboard -------------------------------------------------------------------------
def _reimport(monkeypatch, tensorboard):
    monkeypatch.setitem(sys.modules, "tensorboard", tensorboard)
    for name in [n for n in sys.modules if n.startswith("jitensor.utils.tensorboard")]:
        monkeypatch.delitem(sys.modules, name)
    return importlib.import_module("jitensor.utils.tensorboard")


def test_import_without_tensorboard_raises_import_error(monkeypatch):
    with pytest.raises(ImportError) as error:
        _reimport(monkeypatch, None)
    assert type(error.value) is ImportError
    assert "TensorBoard logging requires TensorBoard version 1.15 or above" in str(error.value)
    assert "pip install tensorboard" in str(error.value)


def test_import_with_an_old_tensorboard_raises_import_error(monkeypatch):
    with pytest.raises(ImportError, match="requires TensorBoard version 1.15 or above"):
        _reimport(monkeypatch, types.SimpleNamespace(__version__="1.14.0"))


def test_utils_does_not_import_tensorboard_and_run_aliases_it(tmp_path):
    """`import jitensor.utils` stays light (and works without tensorboard), and under
    `python -m jitensor.run` a script's `from torch.utils.tensorboard import SummaryWriter` is
    jitensor's."""
    out = run_python("import sys; sys.modules['tensorboard'] = None\n"
                     "import jitensor, jitensor.utils\n"
                     "print(sorted(n for n in sys.modules if 'tensorboard' in n and "
                     "sys.modules[n] is not None))")
    assert out == "[]"
    script = tmp_path / "script.py"
    script.write_text(
        "import torch\n"
        "from torch.utils.tensorboard import SummaryWriter\n"
        f"with SummaryWriter(log_dir={str(tmp_path / 'log')!r}) as w:\n"
        "    w.add_scalar('Loss/train', torch.tensor(0.5), 3)\n"
        "print(SummaryWriter.__module__)\n")
    out = run_python(f"import sys; sys.argv = ['jitensor.run', {str(script)!r}]\n"
                     "from jitensor.run import main; main()")
    assert out == "jitensor.utils.tensorboard.writer"
    (e,) = _accumulator(tmp_path / "log").Scalars("Loss/train")
    assert (e.step, e.value) == (3, 0.5)


# -- against torch's SummaryWriter -----------------------------------------------------------------
def _figures():
    from matplotlib.figure import Figure
    fig = Figure(figsize=(2, 1), dpi=40)
    fig.add_subplot().plot([0, 1, 2], [2, 0, 1])
    return fig


_RNG = np.random.default_rng(7)
_VALUES = _RNG.standard_normal((20, 50)).astype(np.float32)
_IMAGE = _RNG.random((3, 6, 5), dtype=np.float32)
_BATCH = _RNG.integers(0, 256, (5, 4, 3, 3), dtype=np.uint8)
_LABELS, _PREDICTIONS = _RNG.integers(0, 2, 40), _RNG.random(40, dtype=np.float32)

# each: the same calls on either library's SummaryWriter `w` (T: NumPy array -> its tensor)
CASES = {
    "scalars": lambda w, T: [
        w.add_scalar("a", T(np.float32(0.3)), 0, walltime=WALLTIME),
        w.add_scalar("a", 7, 1), w.add_scalar("a", np.float64(0.1), 2),
        w.add_scalar("a", T(np.array([2.5])), T(np.array(3))),
        w.add_scalar("b", 1 / 3, 4, new_style=True),
        w.add_scalar("c", 1 / 3, 5, new_style=True, double_precision=True)],
    "add-scalars": lambda w, T: [w.add_scalars("m/x", {"p": s, "q": T(np.float32(-s))}, s)
                                 for s in range(3)],
    "histograms": lambda w, T: [
        w.add_histogram("h", T(_VALUES), 0), w.add_histogram("h", _VALUES[0] * 1e6, 1),
        w.add_histogram("auto", T(_VALUES), 2, bins="auto"),
        w.add_histogram("fd", T(_VALUES), 3, bins="fd", max_bins=7),
        w.add_histogram("ints", T(np.arange(30) % 7), 4, bins=5),
        w.add_histogram_raw("raw", 0, 2, 3, 3.0, 5.0, T(np.array([1.0, 2.0])),
                            T(np.array([1, 2])), 5)],
    "images": lambda w, T: [
        w.add_image("chw", T(_IMAGE), 0), w.add_image("hwc", T(_IMAGE.transpose(1, 2, 0)), 1,
                                                      dataformats="HWC"),
        w.add_image("wh", T(_IMAGE[0]), 2, dataformats="WH"),
        w.add_image("c1", T(_IMAGE[:1] * 2 - 0.5), 3),
        w.add_images("nchw", T(_BATCH[:, :3]), 4),
        w.add_images("nhwc", T(_BATCH.transpose(0, 2, 3, 1)[..., :1]), 5, dataformats="NHWC"),
        w.add_image_with_boxes("boxes", T(_IMAGE), T(np.array([[0.0, 1, 3, 4], [1, 1, 2, 2]])),
                               6, rescale=2, labels=["a", "b"]),
        w.add_image_with_boxes("box", T(_IMAGE), T(np.array([[0.0, 1, 3, 4]])), 7,
                               labels="one")],
    "text-and-tensors": lambda w, T: [
        w.add_text("t", "hello *world* ✓", 3),
        *[w.add_tensor(f"x{k}", T(np.arange(6).reshape(2, 3).astype(d) % 2), k)
          for k, d in enumerate(("float32", "float64", "int64", "int32", "int16", "int8",
                                 "uint8", "bool"))]],
    "hparams": lambda w, T: [
        w.add_hparams({"lr": 0.01, "n": 3, "act": "relu", "bn": False, "none": None,
                       "drop": T(np.array([0.25], np.float32))},
                      {"hp/acc": 0.5, "hp/loss": T(np.float32(0.125))},
                      {"act": ["relu", "gelu"], "n": [1, 3]}, run_name="r1", global_step=2)],
    "curves-and-layouts": lambda w, T: [
        w.add_pr_curve("pr", T(_LABELS), T(_PREDICTIONS), 1),
        w.add_pr_curve("pr9", _LABELS, _PREDICTIONS, 2, num_thresholds=9,
                       weights=np.linspace(0, 1, 40)),
        w.add_pr_curve_raw("raw", *[T(np.arange(5.0) + k) for k in range(6)], 3,
                           num_thresholds=5),
        w.add_custom_scalars({"A": {"c1": ["Multiline", ["a", "b"]],
                                    "c2": ["Margin", ["x", "lo", "hi"]]}}),
        w.add_custom_scalars_multilinechart(["a", "b"], title="ab"),
        w.add_custom_scalars_marginchart(["x", "lo", "hi"], category="m")],
    "mesh-and-audio": lambda w, T: [
        w.add_mesh("m", T(_VALUES[:1, :12].reshape(1, 4, 3)),
                   colors=T(np.full((1, 4, 3), 200, np.int32)),
                   faces=T(np.array([[[0, 1, 2], [1, 2, 3]]], np.int32)),
                   config_dict={"camera": {"cls": "PerspectiveCamera", "fov": 75}},
                   global_step=1),
        w.add_audio("snd", T(np.sin(np.arange(100, dtype=np.float32))[None] * 1.5), 2,
                    sample_rate=100)],
    "embeddings": lambda w, T: [
        w.add_embedding(T(_VALUES[:6, :4]), metadata=list("abcdef"),
                        label_img=T(_IMAGE[None].repeat(6, 0)), tag="e/1"),
        w.add_embedding(T(_VALUES[:3, :2]), metadata=[[1, "x"], [2, "y"], [3, "z"]],
                        metadata_header=["n", "s"], global_step=4)],
    "figures": lambda w, T: [w.add_figure("f", _figures(), 0),
                             w.add_figure("fs", [_figures(), _figures()], 1)],
}


def _written(root):
    """{relative folder: its events with wall times cleared} and {relative path: bytes} of the
    other files, everything under `root`."""
    events, files = {}, {}
    for folder, _, names in os.walk(root):
        rel = os.path.relpath(folder, root)
        found = []
        for e in _events(folder):
            e.wall_time = 0
            found.append(e)
        if found:
            events[rel] = found
        for name in names:
            if ".tfevents." not in name:
                files[os.path.join(rel, name)] = open(os.path.join(folder, name), "rb").read()
    return events, files


@pytest.mark.parametrize("case", list(CASES))
def test_writes_what_torch_writes(tmp_path, case):
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    if case == "figures":
        pytest.importorskip("matplotlib")
    with SummaryWriter(tmp_path / "mine") as w:
        CASES[case](w, jt.tensor)
    with TorchWriter(tmp_path / "theirs") as w:
        CASES[case](w, lambda a: torch.tensor(np.asarray(a)))
    mine, mine_files = _written(tmp_path / "mine")
    theirs, their_files = _written(tmp_path / "theirs")
    assert sorted(mine) == sorted(theirs)
    for folder in theirs:
        assert len(mine[folder]) == len(theirs[folder]), folder
        for a, b in zip(mine[folder], theirs[folder], strict=True):
            assert a == b, f"{folder}:\n{a}\n!=\n{b}"
    assert mine_files == their_files


def test_purge_step_writes_what_torch_writes(tmp_path):
    pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    for cls, folder in ((SummaryWriter, "mine"), (TorchWriter, "theirs")):
        with cls(tmp_path / folder, purge_step=4) as w:
            w.add_scalar("a", 1.0, 4)
    assert _written(tmp_path / "mine") == _written(tmp_path / "theirs")


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_torchs_errors(tmp_path, name):
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    with TorchWriter(tmp_path / "theirs") as w, pytest.raises(Exception) as theirs:
        BAD[name](w, lambda a: torch.tensor(np.asarray(a)))
    with SummaryWriter(tmp_path / "mine") as w, pytest.raises(Exception) as mine:
        BAD[name](w, jt.tensor)
    assert type(mine.value) is type(theirs.value)
    assert str(mine.value).replace("jitensor", "torch") == str(theirs.value)

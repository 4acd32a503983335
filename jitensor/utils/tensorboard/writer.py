"""torch.utils.tensorboard.writer: `SummaryWriter` and `FileWriter`, which write event files
for TensorBoard through the tensorboard package's own `EventFileWriter` (its record format,
queue and flushing thread), as torch's do.

What jitensor cannot do says so: `add_graph` needs torch's TorchScript tracing (jitensor has no
graph tracing), `add_video` needs moviepy and `add_onnx_graph` the onnx package.

Adapted from PyTorch's torch/utils/tensorboard (BSD-3-Clause licence), itself from
tensorboardX (MIT)."""
import math
import os
import time

import numpy as np
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from .summary import (
    audio,
    custom_scalars,
    figure_to_image,
    histogram,
    histogram_raw,
    hparams,
    image,
    image_boxes,
    make_grid,
    make_np,
    mesh,
    pr_curve,
    pr_curve_raw,
    scalar,
    tensor_proto,
    text,
    video,
)

__all__ = ["FileWriter", "SummaryWriter"]


def _default_bins():
    """TensorBoard's default histogram buckets: +-1e-12 growing by 10% up to 1e20, and 0."""
    v, buckets, neg_buckets = 1e-12, [], []
    while v < 1e20:
        buckets.append(v)
        neg_buckets.append(-v)
        v *= 1.1
    return neg_buckets[::-1] + [0] + buckets


class FileWriter:
    """Writes protocol buffers to one event file in `log_dir`, asynchronously (the
    tensorboard package's EventFileWriter: a queue of `max_queue` events, flushed every
    `flush_secs` seconds and when full)."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        log_dir = str(log_dir)  # (a pathlib.Path too)
        self.event_writer = EventFileWriter(log_dir, max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        """The directory the event file is written to."""
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        """Write an `Event` protocol buffer, stamped with `walltime` (default: now) and `step`."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)  # (a NumPy or jitensor integer too)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        """Write a `Summary` protocol buffer wrapped in an `Event`."""
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None):
        """Write a (`GraphDef`, `RunMetadata`) pair, as torch's add_graph makes them."""
        graph, stepstats = graph_profile
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)
        trm = event_pb2.TaggedRunMetadata(tag="step1",
                                          run_metadata=stepstats.SerializeToString())
        self.add_event(event_pb2.Event(tagged_run_metadata=trm), None, walltime)

    def add_onnx_graph(self, graph, walltime=None):
        """Write a `GraphDef` protocol buffer."""
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)

    def flush(self):
        """Write the pending events to disk."""
        self.event_writer.flush()

    def close(self):
        """Flush and close the event file."""
        self.event_writer.close()

    def reopen(self):
        """After close(), open a new event file in the same directory (else nothing)."""
        self.event_writer.reopen()


class SummaryWriter:
    """Writes scalars, histograms, images, text, hyperparameters, ... to event files in
    `log_dir` for TensorBoard, as torch.utils.tensorboard.SummaryWriter does.

    log_dir defaults to `runs/<Mon DD_HH-MM-SS>_<hostname><comment>` (`comment` is used only
    then). `purge_step` hides from TensorBoard the events at and after that step which an
    earlier, crashed run wrote to the same log_dir. `max_queue`, `flush_secs` and
    `filename_suffix` go to each event file's writer. Values may be jitensor tensors, NumPy
    arrays or Python numbers. A closed writer reopens on the next add_*; `with SummaryWriter()
    as w:` closes it at the end."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime
            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        # the writers: cleared by close(), made again by the next add_*
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = list(_DEFAULT_BINS)

    def _get_file_writer(self):
        """The default FileWriter, made again if closed."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                most_recent_step = self.purge_step
                self.file_writer.add_event(Event(step=most_recent_step,
                                                 file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=most_recent_step, session_log=SessionLog(
                    status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory the event files are written to."""
        return self.log_dir

    # -- hyperparameters and scalars ---------------------------------------------------------------
    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """One run's hyperparameters (bool, str, int, float or one-element tensor values) and
        metrics, for the HParams dashboard: written to `<log_dir>/<run_name>` (default: the
        time), with each metric as a scalar there. hparam_domain_discrete: {name: [every value
        it takes]}."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            w_hp.file_writer.add_summary(exp, global_step)
            w_hp.file_writer.add_summary(ssi, global_step)
            w_hp.file_writer.add_summary(sei, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """A one-element value (number, array or tensor) at `global_step`. new_style writes it
        as a scalars-plugin tensor (a double with double_precision) instead of a simple_value."""
        summary = scalar(tag, scalar_value, new_style=new_style,
                         double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several scalars on one chart: each {tag: value} goes to its own run,
        `<log_dir>/<main_tag with / as _>_<tag>`, under the tag `main_tag`."""
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            if fw_tag in self.all_writers:
                fw = self.all_writers[fw_tag]
            else:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            fw.add_summary(scalar(main_tag, scalar_value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """A whole tensor (or NumPy array), for the tensor plugin."""
        self._get_file_writer().add_summary(tensor_proto(tag, tensor), global_step, walltime)

    # -- histograms --------------------------------------------------------------------------------
    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """The histogram of `values`. bins: "tensorflow" (TensorBoard's default buckets) or what
        numpy.histogram takes ("auto", "fd", a count, the edges); at most max_bins buckets."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(histogram(tag, values, bins, max_bins=max_bins),
                                            global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares,  # noqa: A002
                          bucket_limits, bucket_counts, global_step=None, walltime=None):
        """A histogram given by its statistics and its buckets' upper limits and counts."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._get_file_writer().add_summary(
            histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts),
            global_step, walltime)

    # -- images, figures, video, sound -------------------------------------------------------------
    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """An image, laid out as `dataformats` (CHW, HWC, HW, ...): floats in [0, 1], uint8 in
        [0, 255]. Needs Pillow."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images (NCHW, NHWC, ...), tiled into one grid image. Needs Pillow."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None, walltime=None,
                             rescale=1, dataformats="CHW", labels=None):
        """An image with N boxes (N x 4: xmin, ymin, xmax, ymax) drawn on it, each labelled
        when `labels` has N strings. Needs Pillow."""
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != box_tensor.shape[0]:
                labels = None
        self._get_file_writer().add_summary(
            image_boxes(tag, img_tensor, box_tensor, rescale=rescale, dataformats=dataformats,
                        labels=labels), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them, tiled) rendered to an image, closed unless
        `close` is False. Needs matplotlib."""
        if isinstance(figure, list):
            self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                           dataformats="NCHW")
        else:
            self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                           dataformats="CHW")

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        """A batch of videos (N, T, C, H, W), as an animated GIF. Needs moviepy: without it an
        ImportError says so (torch prints a line and writes an empty image)."""
        self._get_file_writer().add_summary(video(tag, vid_tensor, fps), global_step, walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """Mono sound (1, L), values in [-1, 1], as a WAV clip."""
        self._get_file_writer().add_summary(audio(tag, snd_tensor, sample_rate=sample_rate),
                                            global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """A string (Markdown), for the text dashboard, under `<tag>/text_summary`."""
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    # -- graphs ------------------------------------------------------------------------------------
    def add_onnx_graph(self, prototxt):
        """The graph of an ONNX model file. Needs the onnx package."""
        self._get_file_writer().add_onnx_graph(_load_onnx_graph(prototxt))

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Not available: torch draws the model's graph from a TorchScript trace
        (torch.jit.trace), and jitensor has no graph tracing."""
        raise NotImplementedError(
            "SummaryWriter.add_graph is not supported: torch draws the model's graph from a "
            "TorchScript trace (torch.jit.trace), and jitensor has no graph tracing. Log the "
            "model's structure with add_text(tag, str(model)) instead.")

    # -- embeddings --------------------------------------------------------------------------------
    @staticmethod
    def _encode(rawstr):
        retval = rawstr
        retval = retval.replace("%", f"%{ord('%'):02x}")
        retval = retval.replace("/", f"%{ord('/'):02x}")
        retval = retval.replace("\\", f"%{ord(chr(92)):02x}")
        return retval

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Data points (N x D) for the embedding projector, with their labels (`metadata`, one
        per point, or rows of columns named by metadata_header) and images (N x C x H x W):
        written under `<log_dir>/<step, 5 digits>/<tag>` with projector_config.pbtxt."""
        from google.protobuf import text_format
        from tensorboard.compat import tf
        from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

        mat = make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        save_path = os.path.join(self._get_file_writer().get_logdir(), subdir)
        fs = tf.io.gfile
        if fs.exists(save_path):
            if fs.isdir(save_path):
                print("warning: Embedding dir exists, did you set global_step for "
                      "add_embedding()?")
            else:
                raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot "
                                         f"proceed.")
        else:
            fs.makedirs(save_path)
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            _make_tsv(metadata, save_path, metadata_header=metadata_header)
        if label_img is not None:
            label_img = make_np(label_img)
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            _make_sprite(label_img, save_path)
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data "
                                 "points")
        _make_mat(mat, save_path)
        # (the config is rewritten whole after each embedding: no file system need append)
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        self._projector_config.embeddings.extend([_embedding_info(metadata, label_img, subdir,
                                                                  global_step, tag)])
        _write_pbtxt(self._get_file_writer().get_logdir(),
                     text_format.MessageToString(self._projector_config))

    # -- curves, layouts, meshes -------------------------------------------------------------------
    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        """The precision-recall curve of binary `labels` against `predictions` in [0, 1]."""
        labels, predictions = make_np(labels), make_np(predictions)
        self._get_file_writer().add_summary(
            pr_curve(tag, labels, predictions, num_thresholds, weights), global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        """A precision-recall curve given by its counts, precision and recall per threshold."""
        self._get_file_writer().add_summary(
            pr_curve_raw(tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         num_thresholds, weights), global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        """A custom-scalars chart of the scalars `tags`, one line each."""
        layout = {category: {title: ["Multiline", tags]}}
        self._get_file_writer().add_summary(custom_scalars(layout))

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        """A custom-scalars margin chart of 3 scalar tags: value, lower, upper."""
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        layout = {category: {title: ["Margin", tags]}}
        self._get_file_writer().add_summary(custom_scalars(layout))

    def add_custom_scalars(self, layout):
        """The custom-scalars dashboard's layout: {category: {chart title: ["Multiline" or
        "Margin", [scalar tags]]}}. Once per writer."""
        self._get_file_writer().add_summary(custom_scalars(layout))

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None):
        """A mesh or point cloud: vertices (B, N, 3), optional colors (B, N, 3) and faces
        (B, F, 3); config_dict: the three.js scene's settings."""
        self._get_file_writer().add_summary(mesh(tag, vertices, colors, faces, config_dict),
                                            global_step, walltime)

    # -- flushing and closing ----------------------------------------------------------------------
    def flush(self):
        """Write every pending event to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        """Flush and close the event files (again: nothing)."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()


_DEFAULT_BINS = tuple(_default_bins())


# -- the embedding projector's files (torch's _embedding.py) ---------------------------------------
def _gfile_join(a, b):
    from tensorboard.compat import tf
    if hasattr(tf.io.gfile, "join"):  # (the join of TensorFlow's gfile, or of the stub's)
        return tf.io.gfile.join(a, b)
    return tf.io.gfile.get_filesystem(a).join(a, b)


def _write_file(save_path, name, data):
    from tensorboard.compat import tf
    with tf.io.gfile.GFile(_gfile_join(save_path, name), "wb") as f:
        f.write(tf.compat.as_bytes(data))


def _make_tsv(metadata, save_path, metadata_header=None):
    if not metadata_header:
        metadata = [str(x) for x in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in "
                                 "metadata")
        metadata = ["\t".join(str(e) for e in row) for row in [metadata_header] + metadata]
    _write_file(save_path, "metadata.tsv", "\n".join(metadata) + "\n")


def _make_sprite(label_img, save_path):
    """The images tiled into one square PNG, sprite.png (Pillow)."""
    from io import BytesIO

    from PIL import Image

    nrow = math.ceil(label_img.shape[0] ** 0.5)
    arranged_img_CHW = make_grid(label_img, ncols=nrow)  # noqa: N806
    arranged_augment_square_HWC = np.zeros((arranged_img_CHW.shape[2],  # noqa: N806
                                            arranged_img_CHW.shape[2], 3))
    arranged_img_HWC = arranged_img_CHW.transpose(1, 2, 0)  # noqa: N806
    arranged_augment_square_HWC[:arranged_img_HWC.shape[0], :, :] = arranged_img_HWC
    im = Image.fromarray(np.uint8((arranged_augment_square_HWC * 255).clip(0, 255)))
    with BytesIO() as buf:
        im.save(buf, format="PNG")
        _write_file(save_path, "sprite.png", buf.getvalue())


def _embedding_info(metadata, label_img, subdir, global_step, tag):
    from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo

    info = EmbeddingInfo()
    info.tensor_name = f"{tag}:{str(global_step).zfill(5)}"
    info.tensor_path = _gfile_join(subdir, "tensors.tsv")
    if metadata is not None:
        info.metadata_path = _gfile_join(subdir, "metadata.tsv")
    if label_img is not None:
        info.sprite.image_path = _gfile_join(subdir, "sprite.png")
        info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
    return info


def _write_pbtxt(save_path, contents):
    _write_file(save_path, "projector_config.pbtxt", contents)


def _make_mat(matlist, save_path):
    lines = ["\t".join(str(i.item()) for i in x) + "\n" for x in matlist]
    _write_file(save_path, "tensors.tsv", "".join(lines))


# -- ONNX graphs (torch's _onnx_graph.py) ----------------------------------------------------------
def _load_onnx_graph(fname):
    try:
        import onnx
    except ImportError:
        raise ImportError("SummaryWriter.add_onnx_graph needs the onnx package to read the "
                          "model file (pip install onnx)", name="onnx") from None
    return _parse_onnx_graph(onnx.load(fname).graph)


def _parse_onnx_graph(graph):
    """An ONNX GraphProto as a TensorBoard GraphDef: its inputs and outputs as Variable nodes,
    each of its nodes named by its first output."""
    import itertools

    from tensorboard.compat.proto.attr_value_pb2 import AttrValue
    from tensorboard.compat.proto.graph_pb2 import GraphDef
    from tensorboard.compat.proto.node_def_pb2 import NodeDef
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.compat.proto.versions_pb2 import VersionDef

    nodes = []
    for node in itertools.chain(graph.input, graph.output):
        shapeproto = TensorShapeProto(dim=[TensorShapeProto.Dim(size=d.dim_value)
                                           for d in node.type.tensor_type.shape.dim])
        nodes.append(NodeDef(name=node.name.encode(encoding="utf_8"), op="Variable", input=[],
                             attr={"dtype": AttrValue(type=node.type.tensor_type.elem_type),
                                   "shape": AttrValue(shape=shapeproto)}))
    for node in graph.node:
        attr = ", ".join(" = ".join(str(f[1]) for f in s.ListFields()) for s in node.attribute)
        nodes.append(NodeDef(name=node.output[0].encode(encoding="utf_8"), op=node.op_type,
                             input=node.input,
                             attr={"parameters": AttrValue(s=attr.encode(encoding="utf_8"))}))
    return GraphDef(node=nodes, versions=VersionDef(producer=22))

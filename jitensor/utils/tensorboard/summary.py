"""torch.utils.tensorboard.summary: the `Summary` protocol buffers SummaryWriter writes, built
with the tensorboard package's own protos and plugin metadata, as torch builds them.

Values may be jitensor tensors, NumPy arrays or Python (or NumPy) numbers: `make_np` turns each
into a NumPy array (a tensor through `.detach().cpu().numpy()`) and everything after works on
NumPy, so what is written is what torch writes for the same values: the same tags, the same
histogram buckets, the same PNG encoding of images (Pillow), the same plugin data.

Adapted from PyTorch's torch/utils/tensorboard (BSD-3-Clause licence), itself from
tensorboardX (MIT)."""
import io
import json
import logging
import struct

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ... import dtypes
from ...tensor import Size, Tensor

__all__ = ["audio", "compute_curve", "convert_to_HWC", "custom_scalars", "draw_boxes",
           "figure_to_image", "half_to_int", "histogram", "histogram_raw", "hparams", "image",
           "image_boxes", "int_to_half", "make_grid", "make_histogram", "make_image", "make_np",
           "make_video", "mesh", "pr_curve", "pr_curve_raw", "scalar", "tensor_proto", "text",
           "video"]

logger = logging.getLogger(__name__)


# -- values to NumPy -------------------------------------------------------------------------------
def make_np(x):
    """`x` (a jitensor tensor, a NumPy array or a scalar) as a NumPy array; a scalar becomes a
    1-element array, as in torch."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        return _tensor_to_np(x)
    raise NotImplementedError(f"Got {type(x)}, but numpy array or jitensor tensor are expected.")


def _tensor_to_np(x):
    x = x.detach()
    if x.dtype is dtypes.float16 and x.device.type != "cpu":
        # (float16 is CUDA-only: no CPU tensor can hold it, so the values come through Python)
        return np.array(x.tolist(), dtype=np.float16)
    return x.cpu().numpy()


# -- images ----------------------------------------------------------------------------------------
def figure_to_image(figures, close=True):
    """A matplotlib figure rendered (Agg) to a uint8 CHW array, or a list of them to NCHW; the
    figures are closed unless `close` is False. Needs matplotlib."""
    import matplotlib.backends.backend_agg as plt_backend_agg
    import matplotlib.pyplot as plt

    def render_to_rgb(figure):
        canvas = plt_backend_agg.FigureCanvasAgg(figure)
        canvas.draw()
        data = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8)
        w, h = figure.canvas.get_width_height()
        image_hwc = data.reshape([h, w, 4])[:, :, 0:3]
        image_chw = np.moveaxis(image_hwc, source=2, destination=0)
        if close:
            plt.close(figure)
        return image_chw

    if isinstance(figures, list):
        return np.stack([render_to_rgb(figure) for figure in figures])
    return render_to_rgb(figures)


def make_grid(I, ncols=8):  # noqa: E741 (torch's name)
    """N1HW or N3HW images tiled into one 3HW image, `ncols` to a row."""
    if not isinstance(I, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if I.shape[1] == 1:
        I = np.concatenate([I, I, I], 1)  # noqa: E741
    if I.ndim != 4 or I.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    nimg, H, W = I.shape[0], I.shape[2], I.shape[3]
    ncols = min(nimg, ncols)
    nrows = int(np.ceil(float(nimg) / ncols))
    canvas = np.zeros((3, H * nrows, W * ncols), dtype=I.dtype)
    i = 0
    for y in range(nrows):
        for x in range(ncols):
            if i >= nimg:
                break
            canvas[:, y * H:(y + 1) * H, x * W:(x + 1) * W] = I[i]
            i = i + 1
    return canvas


def convert_to_HWC(tensor, input_format):  # noqa: N802 (torch's name)
    """A NumPy image laid out as `input_format` (NCHW, CHW, HWC, HW, ... any order) as HWC with 3
    channels (or 4, given RGBA): batches are tiled by make_grid, gray is repeated."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(f"You can not use the same dimension shorthand twice. \
            input_format: {input_format}")
    if len(tensor.shape) != len(input_format):
        raise AssertionError(f"size of input tensor and input format are different. \
        tensor shape: {tensor.shape}, input_format: {input_format}")
    input_format = input_format.upper()
    if len(input_format) == 4:
        index = [input_format.find(c) for c in "NCHW"]
        tensor_CHW = make_grid(tensor.transpose(index))  # noqa: N806
        return tensor_CHW.transpose(1, 2, 0)
    if len(input_format) == 3:
        index = [input_format.find(c) for c in "HWC"]
        tensor_HWC = tensor.transpose(index)  # noqa: N806
        if tensor_HWC.shape[2] == 1:
            tensor_HWC = np.concatenate([tensor_HWC, tensor_HWC, tensor_HWC], 2)  # noqa: N806
        return tensor_HWC
    if len(input_format) == 2:
        index = [input_format.find(c) for c in "HW"]
        tensor = tensor.transpose(index)
        return np.stack([tensor, tensor, tensor], 2)
    return None  # (torch's: a 1- or 5-letter format falls through)


def _prepare_video(V):  # noqa: N803
    """[batch, time, channel, height, width] to [time, height, width, channel], the batch tiled
    into a grid of a power of 2 cells."""
    b, t, c, h, w = V.shape
    if V.dtype == np.uint8:
        V = np.float32(V) / 255.0  # noqa: N806

    def is_power2(num):
        return num != 0 and ((num & (num - 1)) == 0)

    if not is_power2(V.shape[0]):
        len_addition = int(2 ** V.shape[0].bit_length() - V.shape[0])
        V = np.concatenate((V, np.zeros(shape=(len_addition, t, c, h, w))), axis=0)  # noqa: N806
    n_rows = 2 ** ((b.bit_length() - 1) // 2)
    n_cols = V.shape[0] // n_rows
    V = np.reshape(V, (n_rows, n_cols, t, c, h, w))  # noqa: N806
    V = np.transpose(V, axes=(2, 0, 4, 1, 5, 3))  # noqa: N806
    return np.reshape(V, (t, n_rows * h, n_cols * w, c))


def _calc_scale_factor(tensor):
    converted = make_np(tensor)
    return 1 if converted.dtype == np.uint8 else 255


def _draw_single_box(image, xmin, ymin, xmax, ymax, display_str, color="black",
                     color_text="black", thickness=2):
    from PIL import ImageDraw, ImageFont

    font = ImageFont.load_default()
    draw = ImageDraw.Draw(image)
    (left, right, top, bottom) = (xmin, xmax, ymin, ymax)
    draw.line([(left, top), (left, bottom), (right, bottom), (right, top), (left, top)],
              width=thickness, fill=color)
    if display_str:
        text_bottom = bottom
        _left, _top, _right, _bottom = font.getbbox(display_str)
        text_width, text_height = _right - _left, _bottom - _top
        margin = np.ceil(0.05 * text_height)
        draw.rectangle([(left, text_bottom - text_height - 2 * margin),
                        (left + text_width, text_bottom)], fill=color)
        draw.text((left + margin, text_bottom - text_height - margin), display_str,
                  fill=color_text, font=font)
    return image


def draw_boxes(disp_image, boxes, labels=None):
    """Red [x1, y1, x2, y2] boxes (and their labels) drawn on a PIL image."""
    for i in range(boxes.shape[0]):
        disp_image = _draw_single_box(disp_image, boxes[i, 0], boxes[i, 1], boxes[i, 2],
                                      boxes[i, 3], display_str=None if labels is None else
                                      labels[i], color="Red")
    return disp_image


def make_image(tensor, rescale=1, rois=None, labels=None):
    """A uint8 HWC array as a `Summary.Image` (PNG, through Pillow), boxes drawn when given."""
    from PIL import Image

    height, width, channel = tensor.shape
    scaled_height = int(height * rescale)
    scaled_width = int(width * rescale)
    image = Image.fromarray(tensor)
    if rois is not None:
        image = draw_boxes(image, rois, labels=labels)
    image = image.resize((scaled_width, scaled_height), Image.Resampling.LANCZOS)
    with io.BytesIO() as output:
        image.save(output, format="PNG")
        image_string = output.getvalue()
    return Summary.Image(height=height, width=width, colorspace=channel,
                         encoded_image_string=image_string)


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """An image (or a batch, tiled) as a `Summary`: floats are read in [0, 1] and uint8 in
    [0, 255], clipped."""
    tensor = convert_to_HWC(make_np(tensor), dataformats)
    scale_factor = _calc_scale_factor(tensor)
    tensor = tensor.astype(np.float32)
    tensor = (tensor * scale_factor).clip(0, 255).astype(np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(tensor, rescale=rescale))])


def image_boxes(tag, tensor_image, tensor_boxes, rescale=1, dataformats="CHW", labels=None):
    """An image with boxes drawn on it as a `Summary`."""
    tensor_image = convert_to_HWC(make_np(tensor_image), dataformats)
    tensor_boxes = make_np(tensor_boxes)
    tensor_image = tensor_image.astype(np.float32) * _calc_scale_factor(tensor_image)
    image = make_image(tensor_image.clip(0, 255).astype(np.uint8), rescale=rescale,
                       rois=tensor_boxes, labels=labels)
    return Summary(value=[Summary.Value(tag=tag, image=image)])


def make_video(tensor, fps):
    """A uint8 [time, height, width, channel] array as an animated GIF `Summary.Image`. Needs
    moviepy (torch's add_video does too): without it, an ImportError says so."""
    try:
        import moviepy  # noqa: F401
    except ImportError:
        raise ImportError("add_video needs the moviepy package to encode the video as a GIF "
                          "(pip install moviepy)", name="moviepy") from None
    try:
        from moviepy import editor as mpy
        clip_type = mpy.ImageSequenceClip
    except ImportError:
        try:  # (moviepy 2 has no moviepy.editor)
            from moviepy import ImageSequenceClip as clip_type
        except ImportError:
            raise ImportError("moviepy is installed, but neither moviepy.editor nor "
                              "moviepy.ImageSequenceClip imports: some of its packages may be "
                              "missing (imageio, requests)", name="moviepy") from None
    import os
    import tempfile

    _t, h, w, c = tensor.shape
    clip = clip_type(list(tensor), fps=fps)
    with tempfile.TemporaryDirectory() as folder:
        filename = os.path.join(folder, "video.gif")
        try:  # newer versions take logger, older ones progress_bar
            clip.write_gif(filename, verbose=False, logger=None)
        except TypeError:
            try:
                clip.write_gif(filename, verbose=False, progress_bar=False)
            except TypeError:
                try:
                    clip.write_gif(filename, verbose=False)
                except TypeError:
                    clip.write_gif(filename, logger=None)
        with open(filename, "rb") as f:
            tensor_string = f.read()
    return Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=tensor_string)


def video(tag, tensor, fps=4):
    """A [batch, time, channel, height, width] video as a `Summary` (a GIF; needs moviepy)."""
    tensor = _prepare_video(make_np(tensor))
    scale_factor = _calc_scale_factor(tensor)
    tensor = tensor.astype(np.float32)
    tensor = (tensor * scale_factor).clip(0, 255).astype(np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=make_video(tensor, fps))])


def audio(tag, tensor, sample_rate=44100):
    """Mono sound in [-1, 1] (clipped, with a warning printed, as torch does) as a 16-bit WAV
    `Summary`."""
    import wave

    array = make_np(tensor).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    array = (array * np.iinfo(np.int16).max).astype("<i2")
    with io.BytesIO() as fio:
        with wave.open(fio, "wb") as wave_write:
            wave_write.setnchannels(1)
            wave_write.setsampwidth(2)
            wave_write.setframerate(sample_rate)
            wave_write.writeframes(array.data)
        audio_string = fio.getvalue()
    sound = Summary.Audio(sample_rate=sample_rate, num_channels=1,
                          length_frames=array.shape[-1], encoded_audio_string=audio_string,
                          content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=sound)])


# -- numbers, tensors, histograms ------------------------------------------------------------------
def half_to_int(f):
    """torch's encoding of a half-precision value into a TensorProto's half_val: the bits of
    the value as a 32-bit float, read as an int (int_to_half undoes it)."""
    return struct.unpack("i", struct.pack("f", f))[0]


def int_to_half(i):
    """The value half_to_int encoded."""
    return struct.unpack("f", struct.pack("i", i))[0]


def _to_half_val(a):
    return [half_to_int(x) for x in a.reshape(-1).tolist()]


def _to_complex_val(a):
    return np.stack([a.real, a.imag], -1).reshape(-1).tolist()


def _to_list(a):
    return a.reshape(-1).tolist()


# NumPy dtype name -> (TensorProto dtype, its value field, conversion): torch's table for the
# dtypes jitensor tensors and NumPy arrays have (torch writes uint8 to uint32_val, its table's
# later entry)
_TENSOR_TYPE_MAP = {
    "float16": ("DT_HALF", "half_val", _to_half_val),
    "float32": ("DT_FLOAT", "float_val", _to_list),
    "float64": ("DT_DOUBLE", "double_val", _to_list),
    "int8": ("DT_INT8", "int_val", _to_list),
    "uint8": ("DT_UINT8", "uint32_val", _to_list),
    "int16": ("DT_INT16", "int_val", _to_list),
    "int32": ("DT_INT32", "int_val", _to_list),
    "int64": ("DT_INT64", "int64_val", _to_list),
    "bool": ("DT_BOOL", "bool_val", _to_list),
    "complex64": ("DT_COMPLEX64", "scomplex_val", _to_complex_val),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", _to_complex_val),
}


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """A one-element value as a `Summary`: old style (`simple_value`), or new style (a scalars
    plugin tensor, float or, with double_precision, double)."""
    tensor = make_np(tensor).squeeze()
    if tensor.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). \
            Was given size: {tensor.size} and {tensor.ndim} dimensions.")
    value = float(tensor)  # (a Python float is a double)
    if new_style:
        if double_precision:
            proto = TensorProto(double_val=[value], dtype="DT_DOUBLE")
        else:
            proto = TensorProto(float_val=[value], dtype="DT_FLOAT")
        smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
        return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=smd)])
    return Summary(value=[Summary.Value(tag=name, simple_value=value)])


def tensor_proto(tag, tensor):
    """A whole tensor (or NumPy array) as a `Summary` of the tensor plugin."""
    if isinstance(tensor, Tensor):
        nbytes = tensor.numel() * tensor.itemsize
    elif isinstance(tensor, np.ndarray):
        nbytes = tensor.nbytes
    else:  # (torch's error for what is not a tensor)
        raise AttributeError(f"'{type(tensor).__name__}' object has no attribute 'numel'")
    if nbytes >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    array = make_np(tensor)
    name = array.dtype.name
    if name not in _TENSOR_TYPE_MAP:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field_name, conversion_fn = _TENSOR_TYPE_MAP[name]
    proto = TensorProto(**{
        "dtype": dtype,
        "tensor_shape": TensorShapeProto(dim=[TensorShapeProto.Dim(size=x)
                                              for x in array.shape]),
        field_name: conversion_fn(array),
    })
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=smd, tensor=proto)])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits,  # noqa: A002
                  bucket_counts):
    """A histogram given by its statistics and buckets (upper limits and counts) as a
    `Summary`."""
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def histogram(name, values, bins, max_bins=None):
    """The histogram of `values` (any shape) as a `Summary`; `bins` as numpy.histogram takes."""
    values = make_np(values)
    hist = make_histogram(values.astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def make_histogram(values, bins, max_bins=None):
    """The `HistogramProto` of `values`: numpy.histogram's counts, at most max_bins of them,
    cut to the buckets from the first to the last nonempty one, with one empty bucket on the
    left (TensorBoard reads only the buckets' right limits), as torch does."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    num_bins = len(counts)
    if max_bins is not None and num_bins > max_bins:
        subsampling = num_bins // max_bins
        subsampling_remainder = num_bins % subsampling
        if subsampling_remainder != 0:
            counts = np.pad(counts, pad_width=[[0, subsampling - subsampling_remainder]],
                            mode="constant", constant_values=0)
        counts = counts.reshape(-1, subsampling).sum(axis=-1)
        new_limits = np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:subsampling]
        new_limits[-1] = limits[-1]
        limits = new_limits
    cum_counts = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum_counts, [0, cum_counts[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(),
                          bucket=counts.tolist())


# -- text, layouts, hyperparameters, curves, meshes ------------------------------------------------
def text(tag, text):
    """A string as a `Summary` of the text plugin, tagged `<tag>/text_summary`."""
    plugin_data = SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString())
    smd = SummaryMetadata(plugin_data=plugin_data)
    tensor = TensorProto(dtype="DT_STRING", string_val=[text.encode(encoding="utf_8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=smd, tensor=tensor)])


def custom_scalars(layout):
    """A custom-scalars layout, {category: {chart: ["Multiline" or "Margin", tags]}}, as the
    `Summary` of that plugin."""
    categories = []
    for k, v in layout.items():
        charts = []
        for chart_name, chart_metadata in v.items():
            tags = chart_metadata[1]
            if chart_metadata[0] == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                mgcc = layout_pb2.MarginChartContent(series=[
                    layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1],
                                                         upper=tags[2])])
                chart = layout_pb2.Chart(title=chart_name, margin=mgcc)
            else:
                mlcc = layout_pb2.MultilineChartContent(tag=tags)
                chart = layout_pb2.Chart(title=chart_name, multiline=mlcc)
            charts.append(chart)
        categories.append(layout_pb2.Category(title=k, chart=charts))
    layout = layout_pb2.Layout(category=categories)
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="custom_scalars"))
    tensor = TensorProto(dtype="DT_STRING", string_val=[layout.SerializeToString()],
                         tensor_shape=TensorShapeProto())
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=tensor,
                                        metadata=smd)])


def _hparams_summary(tag, content):
    from tensorboard.plugins.hparams.metadata import PLUGIN_NAME
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name=PLUGIN_NAME, content=content.SerializeToString()))
    return Summary(value=[Summary.Value(tag=tag, metadata=smd)])


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The three `Summary`s of the hparams plugin: the experiment (the hyperparameters' names
    and types, the metrics' tags), the session start (the values) and the session end."""
    from tensorboard.plugins.hparams.api_pb2 import (
        DataType,
        Experiment,
        HParamInfo,
        MetricInfo,
        MetricName,
        Status,
    )
    from tensorboard.plugins.hparams.metadata import (
        EXPERIMENT_TAG,
        PLUGIN_DATA_VERSION,
        SESSION_END_INFO_TAG,
        SESSION_START_INFO_TAG,
    )
    from tensorboard.plugins.hparams.plugin_data_pb2 import (
        HParamsPluginData,
        SessionEndInfo,
        SessionStartInfo,
    )

    if not isinstance(hparam_dict, dict):
        logger.warning("parameter: hparam_dict should be a dictionary, nothing logged.")
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        logger.warning("parameter: metric_dict should be a dictionary, nothing logged.")
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing "
                        "logged.")
    for k, v in hparam_domain_discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or \
                not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")

    def discrete(k, field):
        if k not in hparam_domain_discrete:
            return None
        return struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d})
                                            for d in hparam_domain_discrete[k]])

    hps = []
    ssi = SessionStartInfo()
    # (in torch's order: a bool is an int, so it is written as a number)
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, (int, float)):
            ssi.hparams[k].number_value = v
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64"),
                                  domain_discrete=discrete(k, "number_value")))
        elif isinstance(v, str):
            ssi.hparams[k].string_value = v
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_STRING"),
                                  domain_discrete=discrete(k, "string_value")))
        elif isinstance(v, bool):
            ssi.hparams[k].bool_value = v
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_BOOL"),
                                  domain_discrete=discrete(k, "bool_value")))
        elif isinstance(v, Tensor):
            ssi.hparams[k].number_value = make_np(v).reshape(-1)[0]
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
        else:
            raise ValueError("value should be one of int, float, str, bool, or jitensor.Tensor")

    ssi = _hparams_summary(SESSION_START_INFO_TAG, HParamsPluginData(
        session_start_info=ssi, version=PLUGIN_DATA_VERSION))
    mts = [MetricInfo(name=MetricName(tag=k)) for k in metric_dict]
    exp = _hparams_summary(EXPERIMENT_TAG, HParamsPluginData(
        experiment=Experiment(hparam_infos=hps, metric_infos=mts), version=PLUGIN_DATA_VERSION))
    sei = _hparams_summary(SESSION_END_INFO_TAG, HParamsPluginData(
        session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS")),
        version=PLUGIN_DATA_VERSION))
    return exp, ssi, sei


def _pr_curve_summary(tag, data, num_thresholds):
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="pr_curves",
                                                                 content=content))
    tensor = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                         tensor_shape=TensorShapeProto(dim=[
                             TensorShapeProto.Dim(size=data.shape[0]),
                             TensorShapeProto.Dim(size=data.shape[1])]))
    return Summary(value=[Summary.Value(tag=tag, metadata=smd, tensor=tensor)])


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    """A precision-recall curve given by its counts, precision and recall as a `Summary` (at
    most 127 thresholds, as in torch)."""
    num_thresholds = min(num_thresholds, 127)
    data = np.stack([make_np(x) for x in (tp, fp, tn, fn, precision, recall)])
    return _pr_curve_summary(tag, data, num_thresholds)


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    """The precision-recall curve of binary `labels` against `predictions` in [0, 1] as a
    `Summary` (at most 127 thresholds, as in torch)."""
    num_thresholds = min(num_thresholds, 127)
    data = compute_curve(make_np(labels), make_np(predictions), num_thresholds=num_thresholds,
                         weights=weights)
    return _pr_curve_summary(tag, data, num_thresholds)


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """[tp, fp, tn, fn, precision, recall] at num_thresholds thresholds (tensorboard's
    pr_curve plugin's computation)."""
    _MINIMUM_COUNT = 1e-7  # noqa: N806
    if weights is None:
        weights = 1.0
    bucket_indices = np.int32(np.floor(predictions * (num_thresholds - 1)))
    float_labels = labels.astype(np.float64)
    histogram_range = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(bucket_indices, bins=num_thresholds, range=histogram_range,
                                 weights=float_labels * weights)
    fp_buckets, _ = np.histogram(bucket_indices, bins=num_thresholds, range=histogram_range,
                                 weights=(1.0 - float_labels) * weights)
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(_MINIMUM_COUNT, tp + fp)
    recall = tp / np.maximum(_MINIMUM_COUNT, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def _get_tensor_summary(name, display_name, description, tensor, content_type, components,
                        json_config):
    from tensorboard.plugins.mesh import metadata

    tensor = make_np(tensor) if isinstance(tensor, Tensor) else np.asarray(tensor)
    tensor_metadata = metadata.create_summary_metadata(  # (a Size, as torch's errors show)
        name, display_name, content_type, components, Size(tensor.shape), description,
        json_config=json_config)
    proto = TensorProto(dtype="DT_FLOAT", float_val=tensor.reshape(-1).tolist(),
                        tensor_shape=TensorShapeProto(dim=[
                            TensorShapeProto.Dim(size=tensor.shape[0]),
                            TensorShapeProto.Dim(size=tensor.shape[1]),
                            TensorShapeProto.Dim(size=tensor.shape[2])]))
    return Summary.Value(tag=metadata.get_instance_name(name, content_type), tensor=proto,
                         metadata=tensor_metadata)


def _get_json_config(config_dict):
    return "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)


def mesh(tag, vertices, colors, faces, config_dict, display_name=None, description=None):
    """A mesh or point cloud (B x N x 3 vertices, and optionally colors and faces) as the
    merged `Summary` of the mesh plugin."""
    from tensorboard.plugins.mesh import metadata
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData

    json_config = _get_json_config(config_dict)
    tensors = [(vertices, MeshPluginData.VERTEX), (faces, MeshPluginData.FACE),
               (colors, MeshPluginData.COLOR)]
    tensors = [tensor for tensor in tensors if tensor[0] is not None]
    components = metadata.get_components_bitmask([content_type for _, content_type in tensors])
    return Summary(value=[
        _get_tensor_summary(tag, display_name, description, tensor, content_type, components,
                            json_config)
        for tensor, content_type in tensors])

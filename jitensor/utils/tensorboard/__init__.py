"""jitensor.utils.tensorboard: torch.utils.tensorboard's `SummaryWriter`, which logs scalars,
histograms, images, text, hyperparameters, PR curves, meshes and embeddings to event files for
TensorBoard (and `FileWriter`, `RecordWriter` under it).

It needs the tensorboard package (`pip install tensorboard`, or the `tensorboard` extra) and
writes with its pieces, as torch does; without it (or with one older than 1.15) importing this
module raises torch's ImportError. `jitensor.utils` does not import it: it is imported as
`jitensor.utils.tensorboard`, or `torch.utils.tensorboard` under `python -m jitensor.run`."""
import re as _re

try:
    import tensorboard as _tensorboard
except ImportError:
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above: the "
                      "tensorboard package is not installed (pip install tensorboard)",
                      name="tensorboard") from None


def _version(text):
    found = _re.match(r"(\d+)\.(\d+)", text)
    return (int(found[1]), int(found[2])) if found else (0, 0)


if _version(getattr(_tensorboard, "__version__", "")) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above (pip "
                      "install --upgrade tensorboard)", name="tensorboard")

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]

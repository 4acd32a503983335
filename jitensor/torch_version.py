"""torch.torch_version: `TorchVersion`, the str that `jitensor.__version__` is, compared as a
version (``jt.__version__ >= "0.1"``, or against a tuple such as ``(0, 1)``) rather than as text:
"0.10" > "0.9" holds here, where plain strings say the opposite."""
import re

from .version import __version__ as internal_version

__all__ = ["TorchVersion", "internal_version"]

_VERSION = re.compile(r"v?(\d+(?:\.\d+)*)(?:[-_.]?(dev|a|alpha|b|beta|c|rc|pre|preview|post)"
                      r"[-_.]?(\d*))?(?:\+([\w.]+))?")
_PHASES = {"dev": 0, "a": 1, "alpha": 1, "b": 2, "beta": 2, "c": 3, "rc": 3, "pre": 3,
           "preview": 3, None: 4, "post": 5}


def _key(value):
    """What versions compare by, as PEP 440 orders them: the release numbers (trailing zeros
    dropped), then dev < alpha < beta < rc < the release < post, then the local part ("+cpu"
    comes after the same version without one)."""
    if isinstance(value, (tuple, list)):
        value = ".".join(str(v) for v in value)
    if not isinstance(value, str):
        raise TypeError(f"TorchVersion compares with a str or a tuple of ints, not "
                        f"{type(value).__name__}")
    m = _VERSION.fullmatch(value.strip().lower())
    if m is None:
        raise ValueError(f"invalid version: {value!r}")
    numbers = [int(x) for x in m.group(1).split(".")]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers), _PHASES[m.group(2)], int(m.group(3) or 0), m.group(4) or ""


class TorchVersion(str):
    # != stays str's, as in torch: "0.1.0" != "0.1" although they compare equal with ==
    def __eq__(self, other):
        try:
            return _key(str(self)) == _key(other)
        except (TypeError, ValueError):
            return NotImplemented

    def __lt__(self, other):
        return _key(str(self)) < _key(other)

    def __le__(self, other):
        return _key(str(self)) <= _key(other)

    def __gt__(self, other):
        return _key(str(self)) > _key(other)

    def __ge__(self, other):
        return _key(str(self)) >= _key(other)

    __hash__ = str.__hash__

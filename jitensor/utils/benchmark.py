"""torch.utils.benchmark: `Timer` times a statement (the standard library's timeit runs it),
`Measurement` holds the times with their median, mean, IQR and significant figures, and
`Compare` prints measurements as a table. As torch's Timer, a measurement runs on
`num_threads` threads (default 1), restored after. C++ statements and Callgrind are torch's
C++ toolchain's and are refused."""
import enum
import math
import statistics
import timeit as _timeit
from dataclasses import dataclass

__all__ = ["Compare", "Language", "Measurement", "TaskSpec", "Timer", "select_unit",
           "trim_sigfig"]

_UNITS = ((1e-9, "ns"), (1e-6, "us"), (1e-3, "ms"), (1.0, "s"))
_ENGLISH = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds", "s": "seconds"}


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


@dataclass(frozen=True)
class TaskSpec:
    """What a measurement measured."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self):
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        return self.stmt if "\n" not in self.stmt else "stmt:\n" + self.stmt

    def summarize(self):
        lines = [self.title]
        if self.env:
            lines.append(f"{self.env}")
        if self.description:
            lines.append(self.description)
        return "\n".join(lines)


def select_unit(t):
    """(unit name, seconds per unit) to show `t` seconds in."""
    for scale, unit in reversed(_UNITS):
        if t >= scale:
            return unit, scale
    return _UNITS[0][1], _UNITS[0][0]


def trim_sigfig(x, n):
    """`x` rounded to `n` significant figures."""
    if not x:
        return x
    digits = n - 1 - int(math.floor(math.log10(abs(x))))
    return round(x, digits)


class Measurement:
    """The times of `task_spec`: `raw_times` are blocks of `number_per_run` runs each."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run, self.raw_times = number_per_run, list(raw_times)
        self.task_spec, self.metadata = task_spec, metadata

    @property
    def times(self):
        """Seconds per run, one per block."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        return statistics.median(self.times)

    @property
    def mean(self):
        return statistics.fmean(self.times)

    @property
    def iqr(self):
        times = self.times
        if len(times) < 2:
            return 0.0
        q = statistics.quantiles(times, n=4, method="inclusive")
        return q[2] - q[0]

    def meets_confidence(self, threshold=0.1):
        """Whether the IQR is below `threshold` of the median."""
        return self.iqr / self.median < threshold

    @property
    def has_warnings(self):
        return not self.meets_confidence()

    @property
    def significant_figures(self):
        """How many digits of the median the spread of the middle half of the times supports
        (1 to 4)."""
        times = sorted(self.times)
        middle = times[len(times) // 4:math.ceil(3 * len(times) / 4)] or times
        spread = statistics.pstdev(middle) / math.sqrt(len(middle))
        interval = max(1.645 * spread, 25e-9)  # (a 90% interval; at least the clock's grain)
        return min(max(int(math.floor(math.log10(self.median / interval))), 1), 4)

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        return self.task_spec.env

    @property
    def as_row_name(self):
        return self.task_spec.sub_label or self.task_spec.stmt or "[Unknown]"

    @staticmethod
    def merge(measurements):
        """One measurement per task, the blocks of those of one task (of one number of runs
        per block) pooled."""
        merged = {}
        for m in measurements:
            key = (m.task_spec, m.number_per_run)
            merged.setdefault(key, []).extend(m.raw_times)
        return [Measurement(n, times, spec) for (spec, n), times in merged.items()]

    def __repr__(self):
        unit, scale = select_unit(self.median)
        runs = self.number_per_run
        threads = self.task_spec.num_threads
        lines = [f"<{__name__}.Measurement object at {id(self):#x}>",
                 self.task_spec.summarize()]
        if len(self.times) == 1:
            lines += [f"  {self.median / scale:.2f} {unit}",
                      f"  1 measurement, {runs} runs , {threads} thread"
                      f"{'s' * (threads > 1)}"]
        else:
            times = sorted(self.times)
            q = statistics.quantiles(times, n=4, method="inclusive")
            lines += [f"  Median: {self.median / scale:.2f} {unit}",
                      f"  IQR:    {self.iqr / scale:.2f} {unit} ({q[0] / scale:.2f} to "
                      f"{q[2] / scale:.2f})",
                      f"  {len(times)} measurements, {runs} runs per measurement, {threads} "
                      f"thread{'s' * (threads > 1)}"]
        if self.has_warnings:
            lines.append(f"  WARNING: Interquartile range is {self.iqr / self.median:.1%} of the "
                         f"median measurement.\n           This suggests significant "
                         f"environmental influence.")
        return "\n".join(lines)


class Timer:
    """Times `stmt` after `setup` (and `global_setup`) with `globals` visible, on `num_threads`
    threads."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=_timeit.default_timer,
                 globals=None, label=None, sub_label=None, description=None, env=None,
                 num_threads=1, language=Language.PYTHON):
        if language not in (Language.PYTHON, "py", "python"):
            raise NotImplementedError("Timer: C++ statements need torch's C++ toolchain; "
                                      "jitensor times Python statements (language='python')")
        self._task_spec = TaskSpec(stmt, setup, global_setup, label, sub_label, description,
                                   env, num_threads)
        namespace = dict(globals or {})
        if global_setup:
            exec(global_setup, namespace)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=namespace)

    def _block(self, number):
        from ..threads import get_num_threads, set_num_threads
        before = get_num_threads()
        set_num_threads(self._task_spec.num_threads)
        try:
            return self._timer.timeit(number)
        finally:
            set_num_threads(before)

    def timeit(self, number=1000000):
        """One block of `number` runs (after one untimed run)."""
        self._block(1)
        return Measurement(number, [self._block(number)], self._task_spec)

    def _block_size(self):
        """Runs per block: the first power of ten whose block takes at least a hundredth of a
        second (bounded)."""
        number = 1
        while number < 10**7 and self._block(number) < 0.01:
            number *= 10
        return number

    def _blocks(self, stop, callback):
        number, times, total = self._block_size(), [], 0.0
        while not times or not stop(number, times, total):
            t = self._block(number)
            if callback is not None:
                callback(number, t)
            times.append(t)
            total += t
        return Measurement(number, times, self._task_spec)

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs until `min_run_time` seconds were spent timing them."""
        return self._blocks(lambda number, times, total: total >= min_run_time, callback)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Blocks of runs until the IQR is below `threshold` of the median (and at least
        `min_run_time` was spent), or `max_run_time` was."""
        def stop(number, times, total):
            if total >= max_run_time:
                return True
            return total >= min_run_time and len(times) > 3 and \
                Measurement(number, times, self._task_spec).meets_confidence(threshold)
        return self._blocks(stop, callback)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("Timer.collect_callgrind needs valgrind and torch's C++ "
                                  "toolchain, which jitensor does not have")


class Compare:
    """Measurements as tables: one per label, a row per (threads, sub_label), a column per
    description, in the unit that suits the table."""

    def __init__(self, results):
        self._results, self._trim, self._colorize, self._warn = [], False, None, False
        self.extend_results(results)

    def extend_results(self, results):
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} "
                                 f"instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim = True

    def colorize(self, rowwise=False):
        """Show the fastest time of each column (of each row with `rowwise`) in green."""
        self._colorize = "row" if rowwise else "column"

    def highlight_warnings(self):
        self._warn = True

    def print(self):
        print(str(self))

    def __str__(self):
        tables = {}
        for m in Measurement.merge(self._results):
            tables.setdefault(m.task_spec.label, []).append(m)
        return "\n".join(self._table(label, group) for label, group in tables.items())

    def _table(self, label, group):
        columns = list(dict.fromkeys(m.task_spec.description for m in group))
        rows = list(dict.fromkeys((m.task_spec.num_threads, m.as_row_name) for m in group))
        unit, scale = select_unit(min(m.median for m in group))
        cells, best = {}, {}
        for m in group:
            row, column = (m.task_spec.num_threads, m.as_row_name), m.task_spec.description
            digits = m.significant_figures if self._trim else 4
            text = f"{trim_sigfig(m.median / scale, digits):g}"
            if self._warn and m.has_warnings:
                text += f" (! {m.iqr / m.median:.0%})"
            cells[row, column] = text
            line = row if self._colorize == "row" else column
            if line not in best or m.median < best[line][0]:
                best[line] = m.median, (row, column)
        for _, where in best.values() if self._colorize else ():
            cells[where] = f"\033[92m\033[1m{cells[where]}\033[0m"
        names = [str(c) if c is not None else "" for c in columns]
        width0 = max([len(r[1]) for r in rows] + [10])
        shown = {k: v.replace("\033[92m\033[1m", "").replace("\033[0m", "")
                 for k, v in cells.items()}  # (the widths without the colour codes)
        widths = [max([len(n)] + [len(shown.get((r, c), "")) for r in rows]) + 2
                  for n, c in zip(names, columns, strict=True)]
        header = " " * width0 + "  |" + "|".join(n.center(w) for n, w in zip(names, widths,
                                                                            strict=True))
        lines = [f"[{(' ' + label + ' ') if label else ''}]".center(len(header), "-"), header]
        last = None
        for threads, name in rows:
            if threads != last:
                lines.append(f"{threads} threads: ".ljust(len(header), "-"))
                last = threads
            lines.append(name.rjust(width0) + "  |" + "|".join(
                cells.get(((threads, name), c), "").center(
                    w + len(cells.get(((threads, name), c), "")) -
                    len(shown.get(((threads, name), c), "")))
                for c, w in zip(columns, widths, strict=True)))
        lines.append(f"\nTimes are in {_ENGLISH[unit]} ({unit}).\n")
        return "\n".join(lines)

"""torch.autograd.profiler: the legacy `profile` context manager and `record_function`
(jitensor.profiler's recorder; see jitensor/profiler/_core.py for what it records)."""
import warnings

from ..profiler import _core
from ..profiler._core import (  # noqa: F401 (torch's names)
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    kineto_available,
    record_function,
)

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "kineto_available", "profile",
           "record_function"]


class profile:
    """torch.autograd.profiler.profile: records the ops of the thread that enters it (when
    `enabled`); `function_events`, `key_averages()`, `table()`, `export_chrome_trace()` after.
    `use_cuda`/`use_device` record no device time (jitensor has no Kineto/CUPTI)."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled, self.record_shapes, self.use_cpu = enabled, record_shapes, use_cpu
        if enabled and (use_cuda or use_device):
            warnings.warn("jitensor's profiler records no device time: a CUDA op shows the "
                          "CPU time of its launch", stacklevel=2)
        self.function_events = None
        self.entered = False
        self._rec = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        if self.use_cpu:
            self._rec = _core.start(self.record_shapes)
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        rec, self._rec = self._rec, None
        if rec is not None:
            _core.stop(rec)
            self.function_events = _core.events_of(rec)
        else:
            self.function_events = _core.EventList()
        return False

    def _events(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def events(self):
        return self._events()

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        return self._events().table(sort_by, row_limit, max_src_column_width,
                                    max_name_column_width, max_shapes_column_width, header,
                                    top_level_events_only)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self):
        return self._events().total_average()

    @property
    def self_cpu_time_total(self):
        return self._events().self_cpu_time_total

    def export_chrome_trace(self, path):
        self._events().export_chrome_trace(path)

    def __str__(self):
        return self.table() if self.function_events is not None else "<unfinished profile>"

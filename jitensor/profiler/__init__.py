"""torch.profiler: `profile` (a context manager with `step()`, `key_averages()`, `events()`,
`export_chrome_trace()`), `record_function`, `ProfilerActivity`, `ProfilerAction`, `schedule`
and `tensorboard_trace_handler`.

It records the CPU time of each public jitensor op the profiling thread calls, named as torch
names its op ("aten::add"; see _core.py for what is recorded and how it costs nothing while no
profiler is active), the backward nodes the autograd engine runs (`AddBackward0`), and
`record_function` ranges. `ProfilerActivity.CUDA` is accepted but records nothing of the
device: jitensor has no Kineto/CUPTI (`jitensor.autograd.kineto_available()` is False), so a
CUDA op shows the CPU time of its launch. `profile_memory`, `with_stack`, `with_flops` and
`with_modules` are accepted and record nothing more (with a warning)."""
import enum
import os
import socket
import time
import warnings

from . import _core
from ._core import EventList, FunctionEvent, FunctionEventAvg, kineto_available, record_function

__all__ = ["ProfilerAction", "ProfilerActivity", "kineto_available", "profile",
           "record_function", "schedule", "supported_activities", "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 2


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    """The activities jitensor's profiler records: the CPU's."""
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """torch.profiler.schedule: skip `skip_first` steps, then cycles of `wait` idle steps,
    `warmup` recorded and discarded, `active` recorded (the last one saves: on_trace_ready),
    `repeat` times (0: until the profiler stops)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise AssertionError("step must be non-negative")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:  # (the first cycle without its wait)
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 \
            else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """on_trace_ready handler writing each saved cycle's Chrome trace into `dir_name` as
    `<worker>.<ms>.pt.trace.json[.gz]` (what TensorBoard's profiler plugin reads)."""
    def handler_fn(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json" + \
            (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler_fn


_RECORDING = (ProfilerAction.WARMUP, ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile:
    """torch.profiler.profile: records the ops of the thread that enters it. With `schedule`
    each `step()` moves through its wait/warmup/active steps, each active cycle's events end in
    `on_trace_ready(self)`, and each step recorded is a "ProfilerStep#<n>" range."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None):
        activities = set(activities) if activities is not None else supported_activities()
        if use_cuda:
            activities.add(ProfilerActivity.CUDA)
        self.activities = activities
        if ProfilerActivity.CUDA in activities:
            warnings.warn("jitensor's profiler records no CUDA (device) activity: a CUDA op "
                          "shows the CPU time of its launch", stacklevel=2)
        unused = [n for n, v in (("profile_memory", profile_memory), ("with_stack", with_stack),
                                 ("with_flops", with_flops), ("with_modules", with_modules)) if v]
        if unused:
            warnings.warn(f"jitensor's profiler records no {', '.join(unused)} information",
                          stacklevel=2)
        self.record_shapes = record_shapes
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else _default_schedule_fn
        self.on_trace_ready = on_trace_ready
        self.acc_events = acc_events
        self.step_num = 0
        self.current_action = None
        self._rec = self._step_frame = None
        self._events = None

    # -- recording
    def _start_recording(self):
        if ProfilerActivity.CPU in self.activities:
            self._rec = _core.start(self.record_shapes)

    def _stop_recording(self):
        rec, self._rec, self._step_frame = self._rec, None, None
        if rec is not None:
            _core.stop(rec)
        return rec

    def _save(self):
        rec = self._stop_recording()
        events = _core.events_of(rec) if rec is not None else EventList()
        if self.acc_events and self._events is not None:
            events = EventList(list(self._events) + list(events))
        self._events = events
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transit(self, prev, cur):
        was = prev in _RECORDING
        if was and prev is not ProfilerAction.WARMUP and (
                prev is ProfilerAction.RECORD_AND_SAVE or cur not in _RECORDING):
            self._save()
            was = False
        elif prev is ProfilerAction.WARMUP and cur not in _RECORDING:
            self._stop_recording()
            was = False
        if cur in _RECORDING:
            if not was:
                self._start_recording()
            elif prev is ProfilerAction.WARMUP and cur is not ProfilerAction.WARMUP \
                    and self._rec is not None:  # warmup's events are discarded
                self._rec.roots.clear()
            if self.record_steps and self._rec is not None:
                self._step_frame = self._rec.push(f"ProfilerStep#{self.step_num}", None,
                                                  "user_annotation")

    def _close_step(self):
        if self._step_frame is not None and self._rec is not None:
            self._rec.pop(self._step_frame)
        self._step_frame = None

    def start(self):
        self.current_action = self.schedule(self.step_num)
        self._transit(None, self.current_action)

    def stop(self):
        self._close_step()
        if self.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._save()
        else:
            self._stop_recording()
        self.current_action = None

    def step(self):
        """One step more of the schedule (and a new ProfilerStep range)."""
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- results
    def events(self):
        """The last saved cycle's events (FunctionEvent), parents before their children."""
        return self._events if self._events is not None else EventList()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """The events as Chrome trace JSON (chrome://tracing, Perfetto)."""
        self.events().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        raise RuntimeError("export_stacks needs with_stack=True, which jitensor's profiler "
                           "does not record")

    def add_metadata(self, key, value):
        pass

    def add_metadata_json(self, key, value):
        pass


# (torch.profiler also exports the legacy event classes through its submodules)
_ = (EventList, FunctionEvent, FunctionEventAvg, kineto_available, record_function)

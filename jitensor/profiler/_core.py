"""The recorder under `jitensor.profiler` and `jitensor.autograd.profiler`.

No op pays for the profiler while none is active: the op path has no check. The first profiler
that starts (in any thread) swaps each public op, in the `jitensor`, `jitensor.nn.functional`,
`jitensor.linalg` and `jitensor.special` namespaces and among the Tensor methods, for a wrapper
that times the call; the last to stop puts the originals back. The wrapper records into the
calling thread's recorder (a `threading.local`), so a profiler sees only the ops of the thread
that started it; other threads' calls go straight through while the wrappers are in. Backward
nodes that the autograd engine runs are recorded from its one call of a node's rule
(`autograd.graph.profile_node`, set only while a profiler is active).

Event names are torch's spelling of the op: "aten::" and the jitensor function's name
("aten::add" for `x + y`, `jitensor.add` and `x.add`; "aten::add_" for `x += y`; "aten::mm";
"aten::linalg_inv"; "aten::linear"), although jitensor's ops are Python functions over Numba
kernels, not ATen's, and a composed op records the public ops it calls as its children where
torch may call others. Backward nodes are named as their class (`AddBackward0`); record_function
ranges by their name."""
import functools
import itertools
import json
import os
import threading
import time
import types

_local = threading.local()  # .recorder: the calling thread's active _Recorder, if any
_lock = threading.Lock()
_active = 0  # profilers started and not stopped, all threads together
_restore = []  # (owner, key, original value) of what _install replaced
_clock = time.perf_counter_ns

# op-defining modules: a namespace function from one of these is an op
_OP_MODULES = ("jitensor.ops", "jitensor.creation", "jitensor.nn.functional", "jitensor.linalg",
               "jitensor.special", "jitensor.autograd.wrap")
_NOT_OPS = {"broadcast_shapes", "from_numpy", "range", "einsum_path", "typename"}

# Tensor dunders and the op torch records for them
_DUNDERS = {"__neg__": "neg", "__pos__": "positive", "__abs__": "abs", "__invert__": "bitwise_not",
            "__getitem__": "index", "__setitem__": "index_put_"}
for _op, _name in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"),
                   ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "pow"),
                   ("matmul", "matmul"), ("and", "bitwise_and"), ("or", "bitwise_or"),
                   ("xor", "bitwise_xor"), ("lshift", "bitwise_left_shift"),
                   ("rshift", "bitwise_right_shift")):
    _DUNDERS[f"__{_op}__"] = _DUNDERS[f"__r{_op}__"] = _name
    _DUNDERS[f"__i{_op}__"] = _name + "_"
for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    _DUNDERS[f"__{_op}__"] = _op
# Tensor's own methods (tensor.py) that are ops in torch
_TENSOR_OPS = {"clone": "clone", "contiguous": "contiguous", "to": "to", "fill_": "fill_",
               "zero_": "zero_", "copy_": "copy_", "item": "item", "detach": "detach",
               "float": "to", "double": "to", "half": "to", "bfloat16": "to", "int": "to",
               "long": "to", "bool": "to", "cpu": "to", "cuda": "to", "type_as": "to",
               "new_zeros": "new_zeros", "new_ones": "new_ones", "new_full": "new_full",
               "new_empty": "new_empty", "new_tensor": "new_tensor"}


class _Recorder:
    """One profiler's frames in one thread. A frame: [name, input shapes, start ns, end ns,
    children, kind]; `roots` holds the outermost, in start order."""

    def __init__(self, record_shapes):
        self.record_shapes = record_shapes
        self.roots, self.stack = [], []
        self.start_ns = _clock()
        self.thread = threading.get_ident()

    def push(self, name, shapes, kind):
        frame = [name, shapes, 0, 0, [], kind]
        stack = self.stack
        (stack[-1][4] if stack else self.roots).append(frame)
        stack.append(frame)
        frame[2] = _clock()
        return frame

    def pop(self, frame):
        frame[3] = _clock()
        stack = self.stack
        if stack and stack[-1] is frame:
            stack.pop()
        elif frame in stack:  # (ranges closed out of order: close what it holds too)
            while stack.pop() is not frame:
                pass


def current():
    return getattr(_local, "recorder", None)


def _shapes(args, kwargs, tensor):
    def shape(a):
        if isinstance(a, tensor):
            return list(a.shape)
        if isinstance(a, (list, tuple)) and a and all(isinstance(x, tensor) for x in a):
            return [list(x.shape) for x in a]
        return []
    return [shape(a) for a in itertools.chain(args, kwargs.values())]


def _recording(fn, name):
    from ..tensor import Tensor

    @functools.wraps(fn)
    def op(*args, **kwargs):
        rec = getattr(_local, "recorder", None)
        if rec is None:
            return fn(*args, **kwargs)
        frame = rec.push(name, _shapes(args, kwargs, Tensor) if rec.record_shapes else None,
                         "cpu_op")
        try:
            return fn(*args, **kwargs)
        finally:
            rec.pop(frame)
    op.__profiled__ = fn
    return op


def _backward_node(node, g, result):
    """The autograd engine's call of `node`'s rule, recorded as the node's class name."""
    from ..autograd.graph import call_rule
    rec = getattr(_local, "recorder", None)
    if rec is None:
        return call_rule(node, g, result)
    frame = rec.push(type(node).__name__, None, "cpu_op")
    try:
        return tuple(call_rule(node, g, result))
    finally:
        rec.pop(frame)


def _op_name(key):
    return _DUNDERS.get(key, key)


def _install():
    import importlib

    from ..autograd import graph
    from ..tensor import Tensor
    wrappers = {}

    def swap(owner, key, value, name):
        w = wrappers.get(id(value))
        if w is None:
            w = wrappers[id(value)] = _recording(value, name)
        _restore.append((owner, key, value))
        setattr(owner, key, w)

    for path, prefix in (("jitensor", ""), ("jitensor.nn.functional", ""),
                         ("jitensor.linalg", "linalg_"), ("jitensor.special", "special_")):
        try:
            module = importlib.import_module(path)
        except ImportError:  # pragma: no cover
            continue
        for key, value in list(vars(module).items()):
            if (isinstance(value, types.FunctionType) and not key.startswith("_")
                    and key not in _NOT_OPS and not key.startswith(("get_", "set_", "is_"))
                    and (value.__module__ or "").startswith(_OP_MODULES)):
                swap(module, key, value, "aten::" + prefix + key)
    for key, value in list(vars(Tensor).items()):
        if not isinstance(value, types.FunctionType):
            continue
        if key in _DUNDERS or key in _TENSOR_OPS:
            name = _DUNDERS.get(key) or _TENSOR_OPS[key]
        elif (not key.startswith("_") and not key.startswith(("is_", "get_", "set_"))
              and (value.__module__ or "").startswith(_OP_MODULES)):
            name = key
        else:
            continue
        swap(Tensor, key, value, "aten::" + name)
    _restore.append((graph, "profile_node", graph.profile_node))
    graph.profile_node = _backward_node


def _uninstall():
    while _restore:
        owner, key, value = _restore.pop()
        setattr(owner, key, value)


def start(record_shapes):
    """Start recording the calling thread's ops: its _Recorder."""
    global _active
    if current() is not None:
        raise RuntimeError("Profiler is already enabled on this thread")
    with _lock:
        if not _active:
            _install()
        _active += 1
    rec = _local.recorder = _Recorder(record_shapes)
    return rec


def stop(rec):
    """Stop `rec` (started by this thread) and put the ops back when no profiler is left."""
    global _active
    end = _clock()
    for frame in rec.stack:  # (ranges still open: they end now)
        frame[3] = end
    rec.stack.clear()
    if current() is rec:
        _local.recorder = None
    with _lock:
        _active -= 1
        if not _active:
            _uninstall()


# -- events ----------------------------------------------------------------------------------

class Interval:
    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class FunctionEvent:
    """One recorded call: an op, a backward node or a record_function range. Times in us from
    the profiler's start, as torch's."""

    device_type = "CPU"
    device_time_total = cuda_time_total = self_device_time_total = self_cuda_time_total = 0
    cpu_memory_usage = self_cpu_memory_usage = 0
    device_memory_usage = self_device_memory_usage = 0
    is_async = is_legacy = False
    node_id = -1
    sequence_nr = -1
    count = 1

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, kind="cpu_op"):
        self.id, self.name, self.thread = id, name, thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.is_user_annotation = kind == "user_annotation"
        self.kind = kind
        self.cpu_children, self.cpu_parent, self.stack = [], None, []

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    cpu_time = cpu_time_total

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"cpu_time={_format_time(self.cpu_time_total)} "
                f"self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one key (and input shapes, when grouped by them), summed."""

    device_type = "CPU"
    device_time_total = cuda_time_total = self_device_time_total = self_cuda_time_total = 0
    cpu_memory_usage = self_cpu_memory_usage = 0
    is_legacy = is_async = False
    node_id = -1

    def __init__(self):
        self.key, self.count, self.input_shapes = None, 0, None
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.is_user_annotation = False

    def add(self, other):
        if self.key is None:
            self.key, self.input_shapes = other.key, other.input_shapes
            self.is_user_annotation = other.is_user_annotation
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        return self

    __iadd__ = add

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time="
                f"{_format_time(self.self_cpu_time_total)} cpu_time="
                f"{_format_time(self.cpu_time)} input_shapes={self.input_shapes}>")


class EventList(list):
    """Events with torch's EventList methods: table, key_averages, export_chrome_trace."""

    def __init__(self, *args, show_input_shapes=False, **kwargs):
        super().__init__(*args, **kwargs)
        self._show_input_shapes = show_input_shapes

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        stats = {}
        for e in self:
            k = (e.key, str(e.input_shapes)) if group_by_input_shape else e.key
            stats.setdefault(k, FunctionEventAvg()).add(e)
        return EventList(stats.values(), show_input_shapes=group_by_input_shape)

    def total_average(self):
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        return _build_table(self, sort_by, row_limit, max_name_column_width,
                            max_shapes_column_width, header, top_level_events_only)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        _write_trace(self, path)


def events_of(rec):
    """The FunctionEvents of a stopped recorder, in start order (parents before children)."""
    out, ids, base, pid = EventList(), itertools.count(), rec.start_ns, rec.thread

    def walk(frame, parent):
        name, shapes, start, end, children, kind = frame
        e = FunctionEvent(next(ids), name, pid, (start - base) / 1e3, (end - base) / 1e3,
                          shapes, kind)
        e.cpu_parent = parent
        if parent is not None:
            parent.cpu_children.append(e)
        out.append(e)
        for c in children:
            walk(c, e)

    for frame in rec.roots:
        walk(frame, None)
    return out


def _build_table(events, sort_by, row_limit, name_width, shapes_width, header, top_level):
    if top_level:
        events = [e for e in events if getattr(e, "cpu_parent", None) is None]
    shown = list(events)
    if sort_by is not None:
        shown.sort(key=lambda e: getattr(e, sort_by, 0), reverse=True)
    if row_limit is not None and row_limit > 0:
        shown = shown[:row_limit]
    total = sum(e.self_cpu_time_total for e in events) or 1e-30
    with_shapes = getattr(events, "_show_input_shapes", False)
    name_w = min(max([len(str(e.key)) for e in shown] + [len("Name")]) + 4, name_width)
    heads = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
             "# of Calls"]
    widths = [name_w] + [12] * 6
    shape_strs = {}
    if with_shapes:
        for e in shown:
            shape_strs[id(e)] = s = str(e.input_shapes)
            if len(s) > shapes_width:
                shape_strs[id(e)] = s[:shapes_width - 3] + "..."
        heads.append("Input Shapes")
        widths.append(min(max([len(s) for s in shape_strs.values()] + [12]) + 2, shapes_width))
    line = "".join("-" * w + "  " for w in widths)
    rows = [line, "".join(f"{h:>{w}}  " for h, w in zip(heads, widths, strict=True)), line]
    for e in shown:
        name = str(e.key)
        if len(name) >= name_w:
            name = name[:name_w - 3] + "..."
        cells = [name, f"{100 * e.self_cpu_time_total / total:.2f}%",
                 _format_time(e.self_cpu_time_total), f"{100 * e.cpu_time_total / total:.2f}%",
                 _format_time(e.cpu_time_total), _format_time(e.cpu_time), str(e.count)]
        if with_shapes:
            cells.append(shape_strs[id(e)])
        rows.append("".join(f"{c:>{w}}  " for c, w in zip(cells, widths, strict=True)))
    rows.append(line)
    text = "\n".join(r.rstrip() for r in rows) + \
        f"\nSelf CPU time total: {_format_time(sum(e.self_cpu_time_total for e in events))}\n"
    return (header + "\n" + text) if header else text


def _write_trace(events, path):
    pid = os.getpid()
    trace = []
    for e in events:
        if not isinstance(e, FunctionEvent):
            continue
        item = {"ph": "X", "cat": e.kind, "name": e.name, "pid": pid, "tid": e.thread,
                "ts": e.time_range.start, "dur": e.time_range.elapsed_us(), "args": {}}
        if e.input_shapes:
            item["args"]["Input Dims"] = e.input_shapes
        trace.append(item)
    doc = {"schemaVersion": 1, "traceEvents": trace, "displayTimeUnit": "ms",
           "traceName": str(path)}
    opener = open
    if str(path).endswith(".gz"):
        import gzip
        opener = gzip.open
    with opener(path, "wt") as f:
        json.dump(doc, f)


# -- record_function --------------------------------------------------------------------------

class record_function:
    """torch.autograd.profiler.record_function: a named range around the ops it holds, as a
    context manager or a decorator; nothing when no profiler is active on this thread."""

    def __init__(self, name, args=None):
        self.name, self.args = name, args
        self._frame = self._rec = None

    def __enter__(self):
        rec = current()
        if rec is not None:
            self._rec, self._frame = rec, rec.push(self.name, None, "user_annotation")
        return self

    def __exit__(self, *exc):
        if self._frame is not None:
            self._rec.pop(self._frame)
            self._frame = self._rec = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped


def kineto_available():
    """False: jitensor has no Kineto (its profiler is its own recorder)."""
    return False


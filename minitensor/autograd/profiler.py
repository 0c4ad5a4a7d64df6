"""`torch.autograd.profiler`: how long each op, each VJP and each range of your own code took.

Inside `profile()`, `Function.apply` and the engine hand every op and every node's backward to the
profiler (`grad_mode.modes.profiler`), which times it as one event; `record_function("name")` opens a
range of your own. Events nest by time: an op inside a range is its child, the Tensor ops a VJP runs
are children of that node's event. So each event has a total time and a self time (its total minus
its children's), and `key_averages().table()` sums them per name, as PyTorch's table does:

    with profile(record_shapes=True) as prof:
        with record_function("forward"):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

Names follow PyTorch's where they can: an op is `aten::<its name>` (`aten::matmul`, `aten::layer_norm`),
a user's `Function` its class name, a node's backward `autograd::engine::evaluate_function: MmBackward0`
around `MmBackward0` (the node's name as `grad_fn` prints it). minitensor's ops are not PyTorch's: one
minitensor op may be several aten ops in PyTorch's table (`aten::linear` holds `aten::addmm` there).
Memory (`profile_memory=True`) counts the bytes of the arrays each op returns; frees are not counted.
Only the thread that entered the profiler is recorded, and only what goes through `Function.apply`:
in-place updates nothing records, factories and a `compile`d model's replayed ops are not events (an
optimizer's `step` and `zero_grad`, and a replayed call, are ranges named as PyTorch names them).
"""
from __future__ import annotations

import enum
import math
import os
import re
import threading
import time
from collections import defaultdict
from typing import Any, Callable

from ..tensor import Tensor
from . import grad_mode
from .torch_names import torch_node_name

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]

_ATEN_NAMES = {"CrossEntropy": "cross_entropy_loss", "Log1p": "log1p", "Cast": "_to_copy", "Expm1": "expm1"}


class DeviceType(enum.Enum):
    """Where an event ran (PyTorch's device kinds): minitensor's events are all on the CPU."""
    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


def op_name(op: type) -> str:
    """The event's name of a Function: `aten::<op in snake case>` for minitensor's, the class name for a user's."""
    name = op.__name__
    if not op.__module__.startswith("minitensor."):
        return name
    return "aten::" + _ATEN_NAMES.get(name, re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower())


def _shapes(args: tuple[Any, ...]) -> list[list[int]]:
    """PyTorch's `input_shapes`: a tensor argument's shape, [] for anything else."""
    return [list(a._array.shape) if isinstance(a, Tensor) else [] for a in args]


def _matmul_flops(op_name: str, args: tuple[Any, ...], out: Any) -> int:
    """2 M N K for a matrix product (the multiply-adds of each output element), 0 for other ops."""
    if op_name not in ("aten::matmul", "aten::linear") or not isinstance(out, Tensor):
        return 0
    a = args[0]
    k = a._array.shape[-1] if isinstance(a, Tensor) and a._array.ndim else 1
    return 2 * int(out._array.size) * int(k)


def _user_stack() -> list[str]:
    """The caller's Python frames, innermost first, without minitensor's own (PyTorch's `with_stack`)."""
    import traceback  # (imported where used: most programs never profile)
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frames = [f for f in traceback.extract_stack() if not os.path.abspath(f.filename).startswith(package)]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)]


# ---- the events ------------------------------------------------------------------------------------------

def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_memory(nbytes: int) -> str:
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _share(us: float, total: float) -> str:
    return "NaN" if total == 0 else f"{us * 100.0 / total:.2f}%"


class _Times:
    """The formatted times and the device fields (always 0: no device) that both event kinds have."""
    count: int
    cpu_time_total: float
    self_cpu_time_total: float
    device_time_total = self_device_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0
    node_id, is_async, is_remote, is_legacy, use_device = -1, False, False, False, None
    device_type = DeviceType.CPU

    @property
    def cpu_time(self) -> float:  # the average over the calls
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self) -> float:
        return 0.0

    cuda_time = device_time

    @property
    def cuda_time_total(self) -> float:
        return self.device_time_total

    @property
    def self_cuda_time_total(self) -> float:
        return self.self_device_time_total

    @property
    def cpu_time_str(self) -> str:
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        return _format_time(self.self_cpu_time_total)


class Interval:
    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end

    def elapsed_us(self) -> float:
        return self.end - self.start


class FunctionEvent(_Times):
    """One timed call: an op, a node's backward, or a `record_function` range (times in microseconds
    from the profiler's start; `cpu_memory_usage` counts what it and the events inside it allocated)."""
    count = 1

    def __init__(self, id: int, name: str, thread: int, start_us: float, end_us: float,
                 overload_name: str | None = None, fwd_thread: int | None = None, input_shapes: list[Any] | None = None,
                 stack: list[str] | None = None, scope: int = 0, use_device: str | None = None,
                 cpu_memory_usage: int = 0, device_memory_usage: int = 0, is_async: bool = False,
                 is_remote: bool = False, sequence_nr: int = -1, node_id: int = -1, device_type: Any = None,
                 device_index: int = 0, device_resource_id: int | None = None, is_legacy: bool = False,
                 flops: int | None = None, trace_name: str | None = None, concrete_inputs: Any = None,
                 kwinputs: Any = None, is_user_annotation: bool = False) -> None:
        self.id, self.name, self.thread, self.fwd_thread = id, name, thread, fwd_thread
        self.trace_name = trace_name or name  # (its name in a trace, where the table groups it under another)
        self.time_range = Interval(start_us, end_us)
        self.overload_name = overload_name or ""
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.scope, self.sequence_nr, self.node_id, self.is_async = scope, sequence_nr, node_id, is_async
        self.cpu_memory_usage, self.flops = cpu_memory_usage, flops or 0
        self.device_type = device_type if device_type is not None else DeviceType.CPU
        self.is_user_annotation = is_user_annotation
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None

    def append_cpu_child(self, child: FunctionEvent) -> None:
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: FunctionEvent) -> None:
        self.cpu_parent = parent

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:  # type: ignore[override]  # (an average's is a plain sum)
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:  # type: ignore[override]
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_total_str} "
                f"start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_Times):
    """The events of one key summed: `count` calls, their total and self times and memory."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = self.flops = 0
        self.input_shapes: Any = None
        self.stack: list[str] = []
        self.cpu_parent: FunctionEvent | None = None
        self.cpu_children: list[FunctionEvent] | None = None
        self.is_user_annotation, self.scope, self.overload_name = False, 0, ""

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        if self.key is None:  # the first one names the group
            self.key, self.input_shapes, self.stack = other.key, other.input_shapes, other.stack
            self.cpu_parent, self.cpu_children = other.cpu_parent, other.cpu_children
            self.is_user_annotation = other.is_user_annotation
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {self.key} vs {other.key}")
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.flops += other.flops
        return self

    def __iadd__(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list[Any]):
    """A list of events (or of their averages) that prints as PyTorch's table."""

    def __init__(self, *args: Any, use_device: str | None = None, profile_memory: bool = False,
                 with_flops: bool = False) -> None:
        super().__init__(*args)
        self._profile_memory, self._with_flops = profile_memory, with_flops

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """One `FunctionEventAvg` per name (and per input shapes, per innermost `group_by_stack_n`
        frames, when asked), in the order the names first occur. (The profilers' own `key_averages`
        call the first argument `group_by_input_shape`, as PyTorch's do.)"""
        group_by_input_shape = group_by_input_shapes
        groups: dict[tuple[Any, ...], FunctionEventAvg] = defaultdict(FunctionEventAvg)
        for e in self:
            key: tuple[Any, ...] = (e.key, e.is_user_annotation)
            if group_by_input_shape:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(e.stack[:group_by_stack_n])
            groups[key].add(e)
        averages = EventList(groups.values(), profile_memory=self._profile_memory, with_flops=self._with_flops)
        for avg in averages:
            avg.stack = avg.stack[:group_by_stack_n]
            if not group_by_input_shape:
                avg.input_shapes = ""
        return averages

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg()
        for e in self:
            total.count += e.count
            total.cpu_time_total += e.cpu_time_total
            total.self_cpu_time_total += e.self_cpu_time_total
            total.cpu_memory_usage += e.cpu_memory_usage
            total.self_cpu_memory_usage += e.self_cpu_memory_usage
        total.key = "Total"
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        return _table(self, sort_by, row_limit, max_src_column_width, max_name_column_width,
                      max_shapes_column_width, header, top_level_events_only, time_unit,
                      self._profile_memory, self._with_flops)

    def export_chrome_trace(self, path: str) -> None:
        """The events as Chrome's trace format (chrome://tracing, Perfetto): one complete event ("X") each."""
        import gzip
        import json
        trace = {"traceEvents": [
            {"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
             "name": getattr(e, "trace_name", e.name),
             "pid": os.getpid(), "tid": e.thread, "ts": e.time_range.start, "dur": e.cpu_time_total,
             "args": {"Input Dims": e.input_shapes, "Sequence number": e.sequence_nr}}
            for e in self], "displayTimeUnit": "ms"}
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "wt") as f:
            json.dump(trace, f)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Each event's stack (outermost frame first, ';'-joined) and its `metric` in whole microseconds,
        one line each: the folded format flame-graph tools read (needs `with_stack=True`)."""
        with open(path, "w") as f:
            for e in self:
                if e.stack:
                    f.write(";".join(reversed(e.stack)) + " " + str(int(getattr(e, metric.replace("cuda", "device"))))
                            + "\n")


def _table(events: list[Any], sort_by: str | None, row_limit: int, max_src_width: int | None,
           max_name_width: int | None, max_shapes_width: int | None, header: str | None, top_level_only: bool,
           time_unit: str | None, profile_memory: bool, with_flops: bool) -> str:
    """PyTorch's summary table: right-aligned columns two spaces apart, a name column as wide as the
    longest name (at most `max_name_width`), times scaled to us/ms/s, and the self time total below."""
    if not events:
        return ""
    if sort_by is not None:  # (a cuda_/device_ key sorts by the device times, all 0 here: the order stays)
        attr = sort_by.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    has_stack = any(e.stack for e in events)
    flops = [e.flops for e in events if e.flops > 0] if with_flops else []
    name_width = min(max(len(e.key) for e in events) + 4, max_name_width or 10 ** 9)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    headers += ["CPU Mem", "Self CPU Mem"] if profile_memory else []
    headers += ["# of Calls"]
    widths = [name_width] + [12] * (len(headers) - 1)
    aligns = [">"] * len(headers)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_width or 10 ** 9))
        aligns.append(">")
    if has_stack:
        headers.append("Source Location")
        widths.append(min(max(len(s) for e in events for s in e.stack) + 4, max_src_width or 10 ** 9))
        aligns.append("<")
    if flops:
        scale_power = min(int(max(0.0, math.log10(min(flops)) / 3)), 5)
        headers.append("Total " + ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"][scale_power])
        widths.append(12)
        aligns.append(">")
    row = "".join("{:" + a + str(w) + "}  " for a, w in zip(aligns, widths))
    rule = "".join("-" * w + "  " for w in widths)
    line_length = sum(widths) + 2 * len(widths) - 2

    def shown(us: float) -> str:
        return {"s": f"{us / 1e6:.3f}s", "ms": f"{us / 1e3:.3f}ms", "us": f"{us:.3f}us"}.get(time_unit or "",
                                                                                            _format_time(us))

    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [rule, row.format(*headers), rule]
    shown_rows = 0
    for e in events:
        if shown_rows == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown_rows += 1
        name = e.key
        if max_name_width is not None and len(name) >= max_name_width - 3:
            name = name[:max_name_width - 3] + "..."
        values = [name, _share(e.self_cpu_time_total, total), shown(e.self_cpu_time_total),
                  _share(e.cpu_time_total, total), shown(e.cpu_time_total), shown(e.cpu_time)]
        if profile_memory:
            values += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        values.append(e.count)
        if has_shapes:
            values.append(str(e.input_shapes)[:widths[len(values)]])
        if has_stack:
            values.append(_trim_path(e.stack[0], widths[len(values)]) if e.stack else "")
        if flops:
            values.append("--" if e.flops <= 0 else f"{e.flops * 10.0 ** (-3 * scale_power):8.3f}")
        lines.append(row.format(*values))
        if has_stack:
            blanks = [""] * (len(headers) - 1 - bool(flops))
            for frame in e.stack[1:]:
                lines.append(row.format(*blanks, _trim_path(frame, widths[len(blanks)]), *([""] if flops else [])))
            lines.append(row.format(*([""] * len(headers))))
    lines += [rule, f"Self CPU time total: {shown(total)}"]
    return "".join(line + "\n" for line in lines)


def _trim_path(path: str, width: int) -> str:
    """A source location too long for its column keeps its end, with '...' in front."""
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


# ---- recording -------------------------------------------------------------------------------------------

class Recorder:
    """What `grad_mode.modes.profiler` holds inside a profile: it opens and closes events, nesting them."""

    def __init__(self, record_shapes: bool = False, profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False) -> None:
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.with_flops = with_stack, with_flops
        self.events: list[FunctionEvent] = []
        self.open_events: list[FunctionEvent] = []
        self.thread = threading.get_ident()
        self.origin_ns = time.perf_counter_ns()

    def now_us(self) -> float:
        return (time.perf_counter_ns() - self.origin_ns) / 1000.0

    def open(self, name: str, shapes: list[Any] | None = None, sequence_nr: int = -1,
             user: bool = False) -> FunctionEvent:
        start = self.now_us()
        event = FunctionEvent(len(self.events), name, self.thread, start, start,
                              input_shapes=shapes if self.record_shapes else [], sequence_nr=sequence_nr,
                              is_user_annotation=user, stack=_user_stack() if self.with_stack else None)
        if self.open_events:
            event.set_cpu_parent(self.open_events[-1])
            self.open_events[-1].append_cpu_child(event)
        self.events.append(event)
        self.open_events.append(event)
        return event

    def close(self, event: FunctionEvent, allocated: int = 0) -> None:
        """End `event` now; what it allocated itself is `allocated` bytes, the events inside it add theirs."""
        event.time_range.end = self.now_us()
        if self.profile_memory:
            event.cpu_memory_usage = allocated + sum(c.cpu_memory_usage for c in event.cpu_children)
        if event in self.open_events:  # (a range closed out of order closes what it holds too)
            while self.open_events and self.open_events.pop() is not event:
                pass

    def run_op(self, op: Any, args: tuple[Any, ...]) -> Any:
        """`op.apply(*args)` as one event (Function.apply hands it here inside a profile)."""
        name = op_name(op)
        event = self.open(name, _shapes(args))
        modes = grad_mode.modes
        modes.profiler = None  # the call below is the op's own apply, run once
        out = None
        try:
            out = op.apply(*args)
        finally:
            modes.profiler = self
            self.close(event, int(out._array.nbytes) if isinstance(out, Tensor) else 0)
        if isinstance(out, Tensor):
            if self.with_flops:
                event.flops = _matmul_flops(name, args, out)
            if out.grad_fn is not None:
                event.sequence_nr = id(out.grad_fn) & 0x7FFFFFFF
        return out

    def run_backward(self, node: Any, g: Any, call: Callable[[Any, Any], tuple[Any, ...]]) -> tuple[Any, ...]:
        """`call(node, g)`, a node's VJP, as PyTorch's two events: the engine's evaluation around the node's."""
        outer, inner = self._open_evaluation(torch_node_name(node), g, sequence_nr=id(node) & 0x7FFFFFFF)
        grads: tuple[Any, ...] = ()
        try:
            grads = call(node, g)
        finally:
            # (a VJP in Tensor ops: its ops counted their arrays; a numpy twin's gradients are arrays)
            made = 0 if inner.cpu_children else sum(int(getattr(x, "_array", x).nbytes) for x in grads
                                                    if x is not None)
            self.close(inner, made)
            self.close(outer)
        return grads

    def run_accumulate(self, store: Callable[..., None], leaf: Tensor, g: Tensor, create_graph: bool) -> None:
        """`store(leaf, g, create_graph)`, a leaf's `.grad` accumulated, as PyTorch's AccumulateGrad events."""
        outer, inner = self._open_evaluation("torch::autograd::AccumulateGrad", g)
        try:
            store(leaf, g, create_graph)
        finally:
            self.close(inner)
            self.close(outer)

    def _open_evaluation(self, name: str, g: Any, sequence_nr: int = -1) -> tuple[FunctionEvent, FunctionEvent]:
        """PyTorch's two events of one backward step: the engine's evaluation, and the node's own inside it."""
        outer = self.open(f"autograd::engine::evaluate_function: {name}")
        return outer, self.open(name, [list(g._array.shape)] if isinstance(g, Tensor) else [], sequence_nr)


def _install(recorder: Recorder) -> Recorder | None:
    """Make `recorder` this thread's profiler; the one it replaces."""
    modes = grad_mode.modes
    previous, modes.profiler = modes.profiler, recorder
    return previous


class record_function:
    """A range of your own code, named, as one event inside a profile (nothing outside one). A context
    manager (`with record_function("attention"):`) or a decorator."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name, self.args = name, args
        self._recorder: Recorder | None = None
        self._event: FunctionEvent | None = None

    def __enter__(self) -> record_function:
        recorder = grad_mode.modes.profiler
        if recorder is not None:
            self._recorder, self._event = recorder, recorder.open(self.name, user=True)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._recorder is not None and self._event is not None:
            self._recorder.close(self._event)
        self._recorder = self._event = None

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        import functools

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped


class profile:
    """PyTorch's autograd profiler: every op, VJP and `record_function` range on this thread inside the
    `with` block is an event (`function_events`; `key_averages().table()` summarises them). Device and
    tracing options are accepted for scripts written for a GPU; there is no device to time."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: str | None = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None) -> None:
        self.enabled, self.use_cpu = enabled, use_cpu
        self.record_shapes, self.with_flops, self.profile_memory = record_shapes, with_flops, profile_memory
        self.with_stack, self.with_modules = with_stack, with_modules
        self.use_device = "cuda" if use_cuda else use_device
        self.entered = False
        self.function_events: EventList | None = None
        self._recorder: Recorder | None = None
        self._previous: Recorder | None = None

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._recorder = Recorder(self.record_shapes, self.profile_memory, self.with_stack, self.with_flops)
        self._previous = _install(self._recorder)
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.enabled or self._recorder is None:
            return
        grad_mode.modes.profiler = self._previous
        for event in list(self._recorder.open_events):  # (a range left open ends with the profile)
            self._recorder.close(event)
        self.function_events = EventList(self._recorder.events, profile_memory=self.profile_memory,
                                         with_flops=self.with_flops)
        self._recorder = None
        self.entered = False

    def _check_finished(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        return self._check_finished().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs: Any) -> str:
        return self._check_finished().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def export_chrome_trace(self, path: str) -> None:
        self._check_finished().export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self._check_finished().export_stacks(path, metric)

    def total_average(self) -> FunctionEventAvg:
        return self._check_finished().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._check_finished().self_cpu_time_total

    def __str__(self) -> str:
        return self._check_finished().table()

    __repr__ = __str__

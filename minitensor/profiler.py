"""`torch.profiler`: the autograd profiler (autograd/profiler.py) with PyTorch's newer interface: the
activities to record, a `schedule` of steps to wait, warm up and record over a training loop, and a
handler called when a cycle's trace is ready.

    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2),
                 on_trace_ready=tensorboard_trace_handler("./log")) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

minitensor runs on the CPU only: `supported_activities()` is {CPU}, and CUDA among the activities
records nothing more (as PyTorch's CPU build).
"""
from __future__ import annotations

import enum
import os
import time
import warnings
from typing import Any, Callable, Iterable

from .autograd import profiler as _autograd_profiler
from .autograd.profiler import DeviceType, EventList, record_function

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "kineto_available", "DeviceType", "record_function"]


class ProfilerActivity(enum.Enum):
    """What a profile records: CPU ops (the only kind minitensor has), or a device's kernels."""
    CPU = 0
    XPU = 1
    MTIA = 4
    CUDA = 2
    HPU = 3
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does at a step, as a `schedule` says."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4  # (PyTorch's, when a device's collection stops early: never here)


def supported_activities() -> set[ProfilerActivity]:
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    """True, as in PyTorch's builds with Kineto: this module's whole interface (schedules, traces) works.
    (The recorder is minitensor's own, autograd/profiler.py.)"""
    return True


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """The action at each step: after `skip_first` steps, cycles of `wait` steps doing nothing, `warmup`
    steps running the profiler without keeping events, then `active` steps recorded (the last of them
    saves: `on_trace_ready` is called), `repeat` times (0: until the profile ends). With
    `skip_first_wait` the first cycle does not wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:  # (the first cycle starts past its wait)
            step += wait
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


_warned_of_cycles = False


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable[[profile], None]:
    """An `on_trace_ready` handler writing each cycle's trace into `dir_name` as
    `<worker>.<time in ns>.pt.trace.json` (`.gz` with `use_gzip`), the name TensorBoard's plugin looks for."""
    def handler(prof: profile) -> None:
        import socket
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler


class profile:
    """Record the ops, VJPs and `record_function` ranges run inside the `with` block (or between
    `start()` and `stop()`), step by step as `schedule` says; `key_averages().table()` prints PyTorch's
    summary, `export_chrome_trace` writes a trace. Each recorded cycle replaces the last one's events
    (`acc_events=True` keeps them all)."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[profile], Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None,
                 execution_trace_observer: Any = None, acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback: Any = None, post_processing_timeout_s: float | None = None) -> None:
        chosen = set(activities) if activities is not None else supported_activities()
        for activity in chosen:
            if not isinstance(activity, ProfilerActivity):
                raise TypeError(f"profile: activities must be ProfilerActivity values, got {activity!r}")
        if use_cuda:
            warnings.warn("The use_cuda parameter is deprecated. Use activities=[ProfilerActivity.CUDA] instead",
                          FutureWarning, stacklevel=2)
        self.activities = chosen
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.with_flops, self.with_modules = with_stack, with_flops, with_modules
        self.acc_events = acc_events
        self.schedule = schedule or _always_record
        self.record_steps = schedule is not None  # ProfilerStep#N ranges mark the steps in the table
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(0)
        self.profiler: _autograd_profiler.profile | None = None
        self._events: list[Any] = []
        self._step_range: record_function | None = None

    # ---- the actions -------------------------------------------------------------------------------------
    def _prepare(self) -> None:
        """(Nothing to load or warm up: minitensor's recorder starts in a call.) A second cycle's events
        replace the first's, unless `acc_events`: PyTorch's warning, once."""
        global _warned_of_cycles
        if self.profiler is not None and not self.acc_events and not _warned_of_cycles:
            _warned_of_cycles = True
            warnings.warn("Warning: Profiler clears events at the end of each cycle. Only events from the current "
                          "cycle will be reported. To keep events across cycles, set acc_events=True.", stacklevel=4)

    def _start_trace(self) -> None:
        self.profiler = _autograd_profiler.profile(record_shapes=self.record_shapes, with_flops=self.with_flops,
                                                   profile_memory=self.profile_memory, with_stack=self.with_stack)
        self.profiler.__enter__()

    def _stop_trace(self) -> None:
        if self.profiler is not None and self.profiler.entered:
            self.profiler.__exit__(None, None, None)
            recorded = list(self.profiler.function_events or [])
            for e in recorded:  # each step's range: "ProfilerStep#3" in the trace, one row "ProfilerStep*" in the table
                if e.name.startswith("ProfilerStep#"):
                    e.name = "ProfilerStep*"
            self._events = self._events + recorded if self.acc_events else recorded

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transit(self, before: ProfilerAction | None, after: ProfilerAction | None) -> None:
        """The actions between two steps' actions (None: the profile's start or end), as PyTorch runs them."""
        A = ProfilerAction
        recording = (A.RECORD, A.RECORD_AND_SAVE)
        if before in (None, A.NONE):
            if after == A.WARMUP:
                self._prepare()
            elif after in recording:
                self._prepare()
                self._start_trace()
        elif before == A.WARMUP:
            if after in (A.NONE, None):
                if after == A.NONE:
                    warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
                self._start_trace()
                self._stop_trace()
            elif after in recording:
                self._start_trace()
        elif before == A.RECORD:
            if after in (A.NONE, A.WARMUP):
                warnings.warn(f"Incorrect schedule: RECORD followed by {after.name}", stacklevel=3)
                self._stop_trace()
            elif after is None:
                self._stop_trace()
                self._trace_ready()
        elif before == A.RECORD_AND_SAVE:
            self._stop_trace()
            self._trace_ready()
            if after == A.WARMUP:
                self._prepare()
            elif after in recording:
                self._prepare()
                self._start_trace()

    # ---- the interface -----------------------------------------------------------------------------------
    def start(self) -> None:
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step_range()

    def stop(self) -> None:
        self._close_step_range()
        self._transit(self.current_action, None)

    def step(self) -> None:
        """The next training step starts: the schedule's action for it is taken."""
        self._close_step_range()
        before = self.current_action
        action = self.schedule(self.step_num + 1)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must not be "
                             "returned by a user-provided schedule")
        self.step_num += 1
        self.current_action = action
        self._transit(before, self.current_action)
        self._open_step_range()

    def _open_step_range(self) -> None:
        if self.record_steps:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}")
            self._step_range.__enter__()

    def _close_step_range(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def events(self) -> EventList:
        """The events of the last recorded cycle (of every cycle, with `acc_events`)."""
        return EventList(self._events, profile_memory=self.profile_memory, with_flops=self.with_flops)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        return self.events().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path: str) -> None:
        self.events().export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self.events().export_stacks(path, metric)


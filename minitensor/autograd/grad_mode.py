"""Switching graph recording on and off: `no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode`.

Each works as a context manager and as a decorator (also bare, `@no_grad`, and on generator
functions), as in PyTorch. The switches are per thread, as in PyTorch: a `no_grad` block in one
thread never stops another thread from recording its graph.
"""
from __future__ import annotations

import functools
import inspect
import threading
from typing import TYPE_CHECKING, Any, Callable, Literal, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import Self

_F = TypeVar("_F", bound=Callable[..., Any])


class _Modes(threading.local):
    """This thread's autograd switches. The class attributes are the defaults every new thread starts with."""

    grad_enabled = True  # Function.apply records a node only when this is True (never inside inference_mode)
    inference = False  # inside inference_mode(): nothing records, whatever enable_grad or set_grad_enabled say
    grad_in_inference = False  # what is_grad_enabled() reports inside inference_mode (those switches set it)
    anomaly_enabled = False  # detect_anomaly(): check every op's output and every VJP for NaN/inf
    recorder = None  # a list while fast.Replay records a step: Function.apply appends each op it runs
    profiler: Any = None  # inside `profiler.profile()`: Function.apply and the engine hand it each op and VJP to time
    in_backward = False  # the engine is running VJPs (anomaly blames the node, not the ops inside its VJP)
    step: Any = None  # inside `autograd.step(...)`: the StepName that Function.apply gives every node it makes
    saved_hooks: Any = None  # inside `saved_tensors_hooks(...)`: the innermost, which packs what new nodes keep
    forward_ad: Any = None  # inside `forward_ad.dual_level()`: called after a user's Function runs, to apply its jvp


modes = _Modes()


def is_grad_enabled() -> bool:
    return modes.grad_in_inference if modes.inference else modes.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside `inference_mode()` (where nothing records, even under `enable_grad`)."""
    return modes.inference


def _state() -> tuple[bool, bool, bool]:
    return modes.grad_enabled, modes.inference, modes.grad_in_inference


def _restore(state: tuple[bool, bool, bool]) -> None:
    modes.grad_enabled, modes.inference, modes.grad_in_inference = state


def _set_grad(mode: bool) -> None:
    """Grad mode as no_grad/enable_grad/set_grad_enabled set it: inside inference_mode only the reported mode
    changes, as in PyTorch, where inference mode wins over grad mode and nothing records."""
    if modes.inference:
        modes.grad_in_inference = mode
    else:
        modes.grad_enabled = mode


class _GradSwitch:
    """Set grad mode to `self.mode` inside a `with` block or a decorated function; restore it after."""

    mode = True

    def _switch(self) -> None:
        _set_grad(self.mode)

    def _fresh(self) -> _GradSwitch:
        """The same switch, for one call of a decorated function (each call restores its own state)."""
        return _Fixed(self.mode)

    def __enter__(self) -> Self:
        self.prev = _state()
        self._switch()
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        _restore(self.prev)
        return False

    def __call__(self, fn: _F) -> _F:
        fresh = self._fresh
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def generator(*args, **kwargs):
                gen = fn(*args, **kwargs)
                sent, thrown = None, None
                # each step of the generator runs under the switch; the caller's code between steps does not
                while True:
                    with fresh():
                        try:
                            item = gen.send(sent) if thrown is None else gen.throw(thrown)
                        except StopIteration as stop:
                            return stop.value
                    sent, thrown = None, None
                    try:
                        sent = yield item
                    except GeneratorExit:
                        with fresh():
                            gen.close()
                        raise
                    except BaseException as error:  # the caller's gen.throw(): pass it on
                        thrown = error

            return generator  # type: ignore[return-value]  # (what fn takes and yields)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with fresh():  # a fresh switch per call, so a nested or recursive call restores its own `prev`
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]  # (what fn takes and returns)


class _Fixed(_GradSwitch):
    def __init__(self, mode: bool) -> None:
        self.mode = mode


class no_grad(_GradSwitch):
    """Ops inside record no graph: results have `requires_grad=False`. Use for evaluation and updates.

    `@no_grad()` and bare `@no_grad` both decorate a function."""

    mode = False

    @overload
    def __new__(cls, orig_func: None = None) -> Self: ...
    @overload
    def __new__(cls, orig_func: _F) -> _F: ...  # type: ignore[misc]  # (bare `@no_grad` returns the function)
    def __new__(cls, orig_func: Callable[..., Any] | None = None) -> Any:  # (PyTorch's name)
        self = super().__new__(cls)
        return self if orig_func is None else self(orig_func)  # bare `@no_grad`: decorate at once


class enable_grad(_GradSwitch):
    """Turn recording back on inside a `no_grad` region."""

    mode = True

    @overload
    def __new__(cls, orig_func: None = None) -> Self: ...
    @overload
    def __new__(cls, orig_func: _F) -> _F: ...  # type: ignore[misc]
    def __new__(cls, orig_func: Callable[..., Any] | None = None) -> Any:  # (PyTorch's name)
        self = super().__new__(cls)
        return self if orig_func is None else self(orig_func)


class inference_mode(_GradSwitch):
    """Nothing records inside, not even under `enable_grad()` or `set_grad_enabled(True)` (which only change
    what `is_grad_enabled()` reports), as in PyTorch. `inference_mode(False)` turns it off again and grad mode on.

    A difference from PyTorch: a tensor made inside is an ordinary tensor, not an "inference tensor", so
    using it in a recorded graph later is allowed (PyTorch refuses to save such a tensor for backward)."""

    @overload
    def __new__(cls, mode: bool = True) -> Self: ...
    @overload
    def __new__(cls, mode: _F) -> _F: ...  # type: ignore[misc]
    def __new__(cls, mode: bool | Callable[..., Any] = True) -> Any:
        self = super().__new__(cls)
        if callable(mode):  # bare `@inference_mode`
            self.mode = False
            return self(mode)
        return self

    def __init__(self, mode: bool | Callable[..., Any] = True) -> None:
        if not callable(mode):
            self.mode = not mode

    def _switch(self) -> None:
        if self.mode:  # inference_mode(False): an ordinary region, recording
            modes.grad_enabled, modes.inference = True, False
        else:
            modes.grad_enabled, modes.inference, modes.grad_in_inference = False, True, False

    def _fresh(self) -> _GradSwitch:
        return inference_mode(not self.mode)


class set_grad_enabled(_GradSwitch):
    """Set recording to `mode`: in a `with` block, as a decorator, or (called plainly) from now on."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self.prev = _state()
        _set_grad(self.mode)  # as in PyTorch, the plain call `set_grad_enabled(False)` takes effect

    def __enter__(self) -> Self:
        return self  # __init__ already switched; __exit__ restores `prev`

    def __call__(self, fn: _F) -> _F:
        _restore(self.prev)  # used as a decorator, the switch must not outlive decoration
        return super().__call__(fn)

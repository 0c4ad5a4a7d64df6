"""`torch.utils.checkpoint` as a stand-in: the checkpointed function simply runs, and keeps its graph.

PyTorch's activation checkpointing trades compute for memory: the forward pass of the wrapped
function runs without saving its intermediate tensors, and the backward pass runs it again to
get them back. The values and gradients are those of the plain call; only the peak memory is
lower. Here `checkpoint(fn, *args, ...)` is the plain call, so values and gradients are exactly
PyTorch's and the memory saving is missing (the graph keeps every intermediate, as without
checkpointing). What PyTorch checks and says is kept: the warning when `use_reentrant` is not
passed, the errors for arguments the chosen variant refuses, and the reentrant variant's rule
that with no input requiring grad nothing is recorded ("Gradients will be None").

Two differences remain (docs/pytorch_compatibility.md): `autograd.grad` through a reentrant
checkpoint works here where PyTorch refuses it, and a function that gives different results
when run twice (no preserved RNG state needed: it is never run twice) cannot trip PyTorch's
recomputation checks.
"""
from __future__ import annotations

import contextlib
import enum
import warnings
from typing import Any, Callable, ContextManager, Iterable, Iterator

from ..autograd import grad_mode
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "check_backward_validity",
           "detach_variable", "get_device_states", "set_device_states", "noop_context_fn", "set_checkpoint_early_stop",
           "DefaultDeviceType", "set_checkpoint_debug_enabled", "CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts", "GraphExecGroup"]

_DETERMINISM_CHECKS = ("default", "none")  # PyTorch's allowed values (the check itself needs a recomputation)
_early_stop = True  # (set_checkpoint_early_stop: read by nothing here, kept so the context manager nests)
_debug_enabled: bool | None = None


class CheckpointError(RuntimeError):
    """PyTorch's error for a recomputation that differs from the forward pass (never raised here: no recomputation)."""


def noop_context_fn() -> tuple[ContextManager[Any], ContextManager[Any]]:
    """The default `context_fn`: no context around the forward pass, none around the (absent) recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Each tensor of the tuple detached, keeping its requires_grad; other items as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for item in inputs:
        if isinstance(item, Tensor):
            detached = item.detach()
            detached.requires_grad = item.requires_grad
            item = detached
        out.append(item)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn, as PyTorch's reentrant checkpoint does, when no tensor among `inputs` requires grad."""
    if not any(x.requires_grad for x in inputs if isinstance(x, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def get_device_states(*args: Any) -> tuple[list[int], list[Any]]:
    """The GPUs the tensors among `args` live on and their RNG states: none, on a CPU-only library."""
    return [], []


def set_device_states(devices: list[int], states: list[Any], *, device_type: str | None = None) -> None:
    """Restore GPU RNG states saved by get_device_states: there are none to restore."""


class DefaultDeviceType:
    """The device type whose RNG state checkpointing saves when no tensor is on an accelerator: the
    accelerator's, or 'cpu' without one (as here); only recorded, since nothing is recomputed."""

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """PyTorch's switch for stopping a recomputation early once it has what backward needs (no recomputation here)."""
    global _early_stop
    previous, _early_stop = _early_stop, enable
    try:
        yield
    finally:
        _early_stop = previous


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """PyTorch's switch for the recomputation's debug trace (None: each checkpoint's own `debug`); nothing to trace."""
    global _debug_enabled
    previous, _debug_enabled = _debug_enabled, enabled
    try:
        yield
    finally:
        _debug_enabled = previous


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's output: save it, or recompute (or offload) it in backward."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """What a selective-checkpoint policy function receives first (as PyTorch's: `is_recompute`, `op_output`)."""

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


def create_selective_checkpoint_contexts(policy_fn_or_list: Callable[..., Any] | list[Any],
                                         allow_cache_entry_mutation: bool = False
                                         ) -> tuple[ContextManager[Any], ContextManager[Any]]:
    """The (forward, recompute) contexts for `checkpoint(..., context_fn=...)` that save the ops the policy picks.
    Everything is saved here anyway, so both are empty contexts; the argument is checked as PyTorch does."""
    if not (callable(policy_fn_or_list) or isinstance(policy_fn_or_list, list)):
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    return contextlib.nullcontext(), contextlib.nullcontext()


class GraphExecGroup:
    """PyTorch's context under which backward calls recompute each checkpointed region at most once. Nothing is
    recomputed here; the rule that these contexts do not nest is kept."""

    _current: GraphExecGroup | None = None

    def __enter__(self) -> GraphExecGroup:
        if GraphExecGroup._current is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{GraphExecGroup._current}")
        GraphExecGroup._current = self
        return self

    def __exit__(self, *exc: object) -> None:
        GraphExecGroup._current = None


class CheckpointFunction:
    """The reentrant variant's entry point, `CheckpointFunction.apply(function, preserve_rng_state, *args)`.

    In PyTorch an autograd Function that runs `function` without a graph and reruns it in backward; here
    `function(*args)` with its graph when an input requires grad, and without one (PyTorch's warning
    included) when none does, which is what PyTorch's gradients amount to."""

    @staticmethod
    def apply(function: Callable[..., Any], preserve_rng_state: bool, *args: Any) -> Any:
        check_backward_validity(args)
        if any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return function(*args)
        with grad_mode.no_grad():
            return function(*args)


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple[ContextManager[Any], ContextManager[Any]]] = noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               **kwargs: Any) -> Any:
    """`function(*args, **kwargs)`, with PyTorch's checks: the values and gradients of checkpointing, without its
    memory saving (see the module doc). `preserve_rng_state` may be passed among the keywords, as in PyTorch."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
                      "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                      "the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, but got "
                         f"{determinism_check}")
    forward_context, _ = context_fn()
    with forward_context:
        return function(*args, **kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Any:
    """Run `functions` (a Sequential or a list of callables) one after another on `input`, all but the last
    segment through `checkpoint` (PyTorch's split: `segments` chunks of len(functions) // segments)."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                      "the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential  # (nn sits above utils' own imports: imported when first needed)
    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)

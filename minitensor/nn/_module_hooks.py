"""Module hooks as PyTorch runs them: forward (pre-)hooks, full backward (pre-)hooks, global ones.

What a call `module(*args, **kwargs)` does once any hook is registered (`call_with_hooks`):

    1. forward pre-hooks (the global ones first): hook(module, args) -> None or new args
       (with_kwargs=True: hook(module, args, kwargs) -> None or (new_args, new_kwargs))
    2. if backward hooks exist: the inputs that require grad pass through an identity node
    3. out = module.forward(*args, **kwargs)
    4. forward hooks (global first): hook(module, args, out) -> None or a new output
       (with_kwargs=True: hook(module, args, kwargs, out)); an `always_call` hook also runs when
       forward raised
    5. if backward hooks exist: the outputs pass through a second identity node

Backward reaches the second identity node first, with the gradients of the outputs: the backward
pre-hooks see them (hook(module, grad_output), may replace them). It reaches the first one with the
gradients of the inputs: the full backward hooks see hook(module, grad_input, grad_output), and may
replace grad_input. Both tuples have one slot per positional argument / per element of the output
tuple, None where no gradient flows (a non-tensor, a tensor not requiring grad, an unused output).
"""
from __future__ import annotations

import itertools
import warnings
from typing import Any, Callable

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..autograd.function import Function
from ..tensor import Tensor

_ids = itertools.count()  # one counter for every hook, so a handle's id names one hook wherever it lives


class RemovableHandle:
    """What registering a hook returns: `remove()` unregisters it; as a context manager, on leaving."""

    def __init__(self, hooks_dict: dict[int, Any], *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = hooks_dict
        self.id = next(_ids)
        extras = extra_dict if isinstance(extra_dict, (list, tuple)) else [extra_dict] if extra_dict is not None else []
        self.extra_dict_ref = tuple(extras)

    def remove(self) -> None:
        self.hooks_dict_ref.pop(self.id, None)
        for d in self.extra_dict_ref:
            d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def add_hook(store: dict[int, Any], hook: Callable[..., Any], prepend: bool = False,
             flags: tuple[dict[int, bool], ...] = (), extras: tuple[dict[int, bool], ...] = ()) -> RemovableHandle:
    """Put `hook` in `store` (first if `prepend`), marked in each of `flags`; its handle also clears `extras`."""
    handle = RemovableHandle(store, extra_dict=list(flags) + list(extras))
    if prepend:  # a dict keeps insertion order: rebuild it with the new hook in front
        rest = dict(store)
        store.clear()
        store[handle.id] = hook
        store.update(rest)
    else:
        store[handle.id] = hook
    for f in flags:
        f[handle.id] = True
    return handle


# ---- global hooks: every module's call runs them, before its own -----------------------------------
_global_forward_pre_hooks: dict[int, Callable[..., Any]] = {}
_global_forward_hooks: dict[int, Callable[..., Any]] = {}
_global_forward_hooks_with_kwargs: dict[int, bool] = {}
_global_forward_hooks_always_called: dict[int, bool] = {}
_global_backward_pre_hooks: dict[int, Callable[..., Any]] = {}
_global_backward_hooks: dict[int, Callable[..., Any]] = {}
_global_parameter_registration_hooks: dict[int, Callable[..., Any]] = {}
_global_buffer_registration_hooks: dict[int, Callable[..., Any]] = {}
_global_module_registration_hooks: dict[int, Callable[..., Any]] = {}


def any_global_call_hooks() -> bool:
    return bool(_global_forward_pre_hooks or _global_forward_hooks or _global_backward_pre_hooks
                or _global_backward_hooks)


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """hook(module, args) before every module's forward (and before its own pre-hooks)."""
    return add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable[..., Any], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """hook(module, args, output) after every module's forward (and before its own hooks)."""
    flags = ((_global_forward_hooks_with_kwargs,) if with_kwargs else ()) + (
        (_global_forward_hooks_always_called,) if always_call else ())
    return add_hook(_global_forward_hooks, hook, flags=flags)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """hook(module, grad_output) for every module, when its outputs' gradients are computed."""
    return add_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """hook(module, grad_input, grad_output) for every module, when its inputs' gradients are computed."""
    return add_hook(_global_backward_hooks, hook)


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """The legacy name: here the same as `register_module_full_backward_hook` (see Module.register_backward_hook)."""
    return register_module_full_backward_hook(hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """hook(module, name, param) whenever a parameter is registered; a non-None result replaces it."""
    return add_hook(_global_parameter_registration_hooks, hook)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """hook(module, name, buffer) whenever a buffer is registered; a non-None result replaces it."""
    return add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """hook(module, name, submodule) whenever a submodule is registered; a non-None result replaces it."""
    return add_hook(_global_module_registration_hooks, hook)


def run_registration_hooks(store: dict[int, Callable[..., Any]], module: Any, name: str, value: Any) -> Any:
    for hook in list(store.values()):
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


# ---- the call ------------------------------------------------------------------------------------
def call_with_hooks(mod: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """`mod(*args, **kwargs)` with its hooks and the global ones, in PyTorch's order (see the module doc)."""
    d = mod.__dict__
    pre_kwargs = d.get("_forward_pre_hooks_with_kwargs", {})
    for hid, hook in [*_global_forward_pre_hooks.items(), *d.get("_forward_pre_hooks", {}).items()]:
        if hid in pre_kwargs:
            res = hook(mod, args, kwargs)
            if res is not None:
                if not (isinstance(res, tuple) and len(res) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {res}.")
                args, kwargs = res
        else:
            res = hook(mod, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
    full = [*_global_backward_hooks.values(), *d.get("_backward_hooks", {}).values()]
    pre = [*_global_backward_pre_hooks.values(), *d.get("_backward_pre_hooks", {}).values()]
    bw = _BackwardHook(mod, full, pre) if (full or pre) and grad_mode.modes.grad_enabled else None
    if bw is not None:
        args = bw.setup_input_hook(args)
    hooks = [*_global_forward_hooks.items(), *d.get("_forward_hooks", {}).items()]
    with_kwargs = {**_global_forward_hooks_with_kwargs, **d.get("_forward_hooks_with_kwargs", {})}
    always = {**_global_forward_hooks_always_called, **d.get("_forward_hooks_always_called", {})}
    called = set()
    try:
        out = mod.forward(*args, **kwargs)
        for hid, hook in hooks:
            called.add(hid)
            res = hook(mod, args, kwargs, out) if hid in with_kwargs else hook(mod, args, out)
            if res is not None:
                out = res
    except Exception:
        for hid, hook in hooks:  # an always_call hook still sees the call, with output None
            if hid in always and hid not in called:
                try:
                    hook(mod, args, kwargs, None) if hid in with_kwargs else hook(mod, args, None)
                except Exception as e:
                    warnings.warn("forward hook with ``always_call=True`` raised an exception that was silenced "
                                  f"as another error was raised in forward: {e}", stacklevel=2)
        raise
    if bw is not None:
        out = bw.setup_output_hook(out)
    return out


class BackwardHookFunction(Function):
    r"""The identity on several tensors, whose backward hands their gradients to a module's hooks.

    forward: out_i = x_i   (the same memory)
    VJP:     gx = on_grads(g_1, ..., g_n)   (the hooks see them and may replace them; None where none came)
    """

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        ctx.set_materialize_grads(False)  # an unused output's gradient is None, as the hooks expect
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.on_grads(grads))


def _wrap(tensors_at: list[int], items: list[Any], on_grads: Callable[..., Any]) -> list[Any]:
    """items with those at `tensors_at` replaced by their identity-node outputs."""
    outs = BackwardHookFunction.apply(on_grads, *[items[i] for i in tensors_at])
    items = list(items)
    for i, o in zip(tensors_at, outs):
        items[i] = o
    return items


def _as_grads(res: Any, what: str) -> tuple[Any, ...]:
    if not isinstance(res, (tuple, list)):
        raise TypeError(f"Backward {what} must return None or a tuple of gradients (None where there is none), "
                        f"got {type(res).__name__}")
    return tuple(res)


def _zeros_like(t: Tensor) -> Tensor:
    return Tensor._make(np.zeros(t._array.shape, t.dtype))


def _needs_grad(x: Any) -> bool:
    return isinstance(x, Tensor) and x.requires_grad and _dtype.kind(x.dtype) == "f"


class _BackwardHook:
    """One call's backward hooks: what `register_full_backward_hook` and `_pre_hook` see for that call."""

    def __init__(self, module: Any, full: list[Callable[..., Any]], pre: list[Callable[..., Any]]) -> None:
        self.module, self.full, self.pre = module, full, pre
        self.n_inputs, self.args = 0, ()
        self.input_at: list[int] | None = None
        self.grad_outputs: tuple[Any, ...] | None = None

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        self.n_inputs, self.args = len(args), args
        at = [i for i, a in enumerate(args) if _needs_grad(a)]
        if not at or not self.full:
            return args
        self.input_at = at
        return tuple(_wrap(at, list(args), self._on_input_grads))

    def setup_output_hook(self, out: Any) -> Any:
        single = not isinstance(out, tuple)
        items = [out] if single else list(out)
        at = [i for i, o in enumerate(items) if _needs_grad(o)]
        if not at:
            return out
        n = len(items)

        def on_output_grads(grads):
            grad_output = [None] * n
            for i, g in zip(at, grads):
                grad_output[i] = g
            grad_output = tuple(grad_output)
            for hook in self.pre:
                res = hook(self.module, grad_output)
                if res is None:
                    continue
                res = _as_grads(res, "pre hook")
                if len(res) != n:
                    raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                       f"{len(res)}, but expected {n}")
                grad_output = res
            self.grad_outputs = grad_output
            if self.input_at is None and self.full:
                self._hooks_without_input_grads()
            return tuple(grad_output[i] for i in at)

        items = _wrap(at, items, on_output_grads)
        return items[0] if single else tuple(items)

    def _on_input_grads(self, grads):
        # as PyTorch: every float tensor argument has a gradient, zeros where none came (or none can)
        grad_input = [_zeros_like(a) if isinstance(a, Tensor) and _dtype.is_floating(a.dtype) else None
                      for a in self.args]
        for i, g in zip(self.input_at or (), grads):
            if g is not None:
                grad_input[i] = g
        grad_input = tuple(grad_input)
        for hook in self.full:
            res = hook(self.module, grad_input, self.grad_outputs)
            if res is None:
                continue
            res = _as_grads(res, "hook")
            if len(res) != len(grad_input):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(res)}, but "
                                   f"expected {len(grad_input)}")
            grad_input = res
        return tuple(grad_input[i] for i in self.input_at or ())

    def _hooks_without_input_grads(self):
        """No input needs a gradient: the full hooks fire with the outputs' gradients, grad_input all None."""
        warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                      "since no inputs require gradients.", stacklevel=2)
        grad_input = (None,) * self.n_inputs
        for hook in self.full:
            res = hook(self.module, grad_input, self.grad_outputs)
            if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                   "return None or None for all gradients.")

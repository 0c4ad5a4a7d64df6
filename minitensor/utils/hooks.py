"""`torch.utils.hooks`: the handle that registering a hook returns, the marker for hooks that are not meant to
be saved, and the per-call helper behind a module's full backward hooks."""
from __future__ import annotations

import warnings
from typing import Any, Callable, TypeVar

from ..autograd import grad_mode
from ..nn._module_hooks import RemovableHandle, _BackwardHook
from ..tensor import Tensor

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]

_F = TypeVar("_F", bound=Callable[..., Any])


def unserializable_hook(f: _F) -> _F:
    """Mark a tensor hook as one that is not expected to survive saving: warn_if_has_hooks stays quiet about it."""
    f.__torch_unserializable__ = True  # type: ignore[attr-defined]
    return f


def _tensor_hooks(tensor: Tensor) -> list[Any]:
    """The hooks `tensor.register_hook` put on this tensor (a leaf keeps them, a result's node holds them)."""
    node = tensor.grad_fn
    hooks = tensor._hooks if node is None else node.hooks
    return list(hooks or ())


def warn_if_has_hooks(tensor: Tensor) -> None:
    """Warn once per backward hook of `tensor` that is not marked with @unserializable_hook: saving a tensor keeps
    its values, not its hooks."""
    for hook in _tensor_hooks(tensor):
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this is expected, you can "
                          "decorate the function with @torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)


class BackwardHook(_BackwardHook):
    """One call's full backward hooks and backward pre-hooks of `module`, as `Module.__call__` sets them up:

        args = bw.setup_input_hook(args)     # inputs that need a gradient pass through an identity node
        out = bw.setup_output_hook(forward(*args))   # and so do the outputs

    In backward, user_pre_hooks see hook(module, grad_output) when the outputs' gradients arrive and may
    replace them; user_hooks see hook(module, grad_input, grad_output) when the inputs' gradients are known
    and may replace grad_input. Tuples have one slot per argument / output, None where no gradient flows."""

    def __init__(self, module: Any, user_hooks: list[Callable[..., Any]],
                 user_pre_hooks: list[Callable[..., Any]]) -> None:
        super().__init__(module, user_hooks, user_pre_hooks)

    # standalone use as in PyTorch: with gradients off there is no backward to hook, so the values pass as they are
    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        self.n_inputs, self.args = len(args), args
        return super().setup_input_hook(args) if grad_mode.modes.grad_enabled else args

    def setup_output_hook(self, out: Any) -> Any:
        return super().setup_output_hook(out) if grad_mode.modes.grad_enabled else out

    @property
    def user_hooks(self) -> list[Callable[..., Any]]:
        return self.full

    @property
    def user_pre_hooks(self) -> list[Callable[..., Any]]:
        return self.pre

"""`minitensor.nn.utils.prune`: zero out some entries of a module's parameter, by a rule, and keep them zero.

How pruning `weight` of a module works (every method here does the same three things):

- the parameter moves to `weight_orig`: still a Parameter, still the one the optimizer trains;
- a buffer `weight_mask` of the same shape holds 1 for each entry kept and 0 for each entry pruned;
- `weight` becomes a plain attribute, `weight_orig * weight_mask`, recomputed before every forward by a
  forward pre-hook: the pruning method object itself, which `module._forward_pre_hooks` holds.
  So the forward sees the pruned weight, and the gradient reaching `weight_orig` is 0 where the mask is 0.

Pruning the same parameter again prunes among the entries still kept: the methods are chained in a
`PruningContainer` and the new mask is the old one with more zeros. `remove(module, "weight")` makes the
pruning permanent: `weight` is a Parameter again, holding orig * mask; `weight_orig`, `weight_mask` and the
hook are gone. `amount` is an int (how many entries, or channels, to prune) or a float in [0, 1] (the fraction
of them, rounded). Which entries go: the smallest |w| (`l1_unstructured`), random ones (`random_unstructured`),
whole channels along `dim` of smallest norm or at random (`ln_structured`, `random_structured`), the smallest
|w| over several parameters together (`global_unstructured`), or your own mask (`custom_from_mask`). A rule of
your own is a subclass of `BasePruningMethod` with `PRUNING_TYPE` and `compute_mask`.
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, Callable, Iterator

from ...autograd.grad_mode import no_grad
from ...factories import ones_like, rand, rand_like, zeros_like
from ...ops.order import kthvalue
from ...ops.reduce import norm as _norm
from ...tensor import Tensor
from . import parameters_to_vector
from ._topk_ties import topk_indices

__all__ = [
    "BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured", "RandomStructured",
    "LnStructured", "CustomFromMask", "identity", "random_unstructured", "l1_unstructured", "random_structured",
    "ln_structured", "global_unstructured", "custom_from_mask", "remove", "is_pruned",
]


class BasePruningMethod(ABC):
    """The base of every pruning method: a subclass sets `PRUNING_TYPE` ('unstructured', 'structured' with a
    `dim` attribute, or 'global': what a later pruning may act on) and defines `compute_mask`; the class
    method `apply(module, name, ...)` then does the reparametrisation (see the module's docstring)."""

    PRUNING_TYPE: str
    _tensor_name: str | None = None  # the parameter's name, set by `apply`

    def __call__(self, module: Any, inputs: Any) -> None:
        """The forward pre-hook: recompute `module.<name>` as orig * mask."""
        setattr(module, self._tensor_name, self.apply_mask(module))  # type: ignore[arg-type]

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask for `t` (the importance scores: the parameter itself unless given), keeping every zero
        of `default_mask` (the mask so far; ones before any pruning), of t's shape."""

    def apply_mask(self, module: Any) -> Tensor:
        """orig * mask, from the module's `<name>_orig` and `<name>_mask`."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned (this method was never applied to it)")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Any, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> BasePruningMethod:
        """Prune `module.<name>` with `cls(*args, **kwargs)`; return the hook now in charge of it (the new
        method, or the PruningContainer chaining it after the earlier ones)."""
        old_keys = [k for k, h in module._forward_pre_hooks.items()
                    if isinstance(h, BasePruningMethod) and h._tensor_name == name]
        if len(old_keys) > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                                 "Use a PruningContainer.")
        old = module._forward_pre_hooks[old_keys[0]] if old_keys else None
        method = cls(*args, **kwargs)
        method._tensor_name = name
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif importance_scores.shape != orig.shape:
            raise AssertionError(f"importance_scores should have the same shape as parameter {name} of {module}, "
                                 f"got {importance_scores.shape} vs {orig.shape}")

        if old is None:
            hook: BasePruningMethod = method
            default_mask = ones_like(orig)
        else:  # pruned before: chain the new method after the old ones, starting from the current mask
            hook = old if isinstance(old, PruningContainer) else PruningContainer(old)
            hook.add_pruning_method(method)
            default_mask = getattr(module, name + "_mask").detach().clone()
        # The mask first, the module's attributes after: a method that fails (amount too large, ...) leaves the
        # module as it was. (PyTorch rearranges first and puts things back, but loses an old hook on the way.)
        try:
            mask = hook.compute_mask(importance_scores, default_mask=default_mask)
        except Exception:
            if isinstance(hook, PruningContainer) and hook is old:  # take the failed method back out
                hook._pruning_methods = hook._pruning_methods[:-1]
            raise
        if old is None:
            module.register_parameter(name + "_orig", orig)  # (a TypeError for a buffer: only parameters prune)
            del module._parameters[name]
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, hook.apply_mask(module))
        for k in old_keys:
            del module._forward_pre_hooks[k]
        module.register_forward_pre_hook(hook)
        return hook

    def prune(self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None) -> Tensor:
        """t times this method's mask for it (no module involved)."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError(f"importance_scores should have the same shape as tensor t, "
                                 f"got {importance_scores.shape} vs {t.shape}")
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Any) -> None:
        """Make the pruning permanent: `<name>` becomes a Parameter holding orig * mask (the same Parameter
        object as `<name>_orig`, so an optimizer holding it carries on); `_orig`, `_mask` are removed."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        name = self._tensor_name
        pruned = self.apply_mask(module)
        if name in module.__dict__:
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = pruned.data
        delattr(module, name + "_orig")
        delattr(module, name + "_mask")
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """The pruning methods applied one after another to one parameter (what iterative pruning builds).

    Its `compute_mask` runs only the latest method, on the part of the tensor still unpruned: the entries
    where the mask is 1 ('unstructured'), the channels along `dim` not yet all zero ('structured'), or all of
    it ('global'); the result is written back into the mask there.
    """

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if args:
            self._tensor_name = getattr(args[0], "_tensor_name", None)
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append `method`, which must act on the same parameter name."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' "
                             f"to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator[BasePruningMethod]:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: Any) -> Any:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        slc: Any
        if kind == "unstructured":
            slc = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                                     "`dim` defined.")
            ndim = t.dim()
            dim = method.dim + ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
            keep_channel = default_mask.sum(dim=[d for d in range(ndim) if d != dim]) != 0
            slc = tuple(keep_channel if d == dim else slice(None) for d in range(ndim))
        elif kind == "global":
            slc = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        mask[slc] = partial.to(dtype=mask.dtype)
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing: the reparametrisation with a mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Any, name: str) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` of the still unpruned entries, chosen at random (minitensor's generator)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        # the entries with the largest uniform draw
        return _unstructured_mask(self.amount, t, default_mask, lambda: rand_like(t).numpy(), largest=True)

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the `amount` still unpruned entries of smallest |w| (ties broken as PyTorch breaks them)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _unstructured_mask(self.amount, t, default_mask, lambda: t.detach().abs().numpy(), largest=False)

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` whole channels (slices along `dim`) chosen at random (minitensor's generator)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured(t, self.dim)
        channels = t.shape[self.dim]
        k = _count_to_prune(self.amount, channels)
        if k == 0:
            return default_mask
        draw = rand(channels)  # keep the channels whose draw is above the k-th smallest
        return _channel_mask(t, self.dim, draw > kthvalue(draw, k).values) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float,  # type: ignore[override]
              dim: int = -1) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` whole channels (slices along `dim`) of smallest L`n` norm; `n` as `p` of
    `torch.norm` (a number, inf, -inf, 'fro' or 'nuc')."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured(t, self.dim)
        channels = t.shape[self.dim]
        k = _count_to_prune(self.amount, channels)
        kept = topk_indices(_channel_norms(t, self.n, self.dim).numpy(), channels - k, largest=True)
        if k == 0:
            return default_mask
        return _channel_mask(t, self.dim, Tensor._make(kept)) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float, n: Any, dim: int,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given `mask` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, mask: Tensor) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, mask=mask)


# ---- the functions: each applies its method and returns the module -------------------------------------------

def identity(module: Any, name: str) -> Any:
    """Reparametrise `module.<name>` for pruning (`<name>_orig`, `<name>_mask`, the hook) with a mask of ones."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Any, name: str, amount: int | float) -> Any:
    """Prune `amount` random entries (int: how many; float: the fraction) of `module.<name>` among those still
    unpruned."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Any, name: str, amount: int | float, importance_scores: Tensor | None = None) -> Any:
    """Prune the `amount` entries of `module.<name>` of smallest |importance_scores| (the parameter itself by
    default) among those still unpruned."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Any, name: str, amount: int | float, dim: int) -> Any:
    """Prune `amount` random channels (slices along `dim`) of `module.<name>`."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Any, name: str, amount: int | float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> Any:
    """Prune the `amount` channels (slices along `dim`) of `module.<name>` of smallest L`n` norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable[tuple[Any, str]], pruning_method: type[BasePruningMethod],
                        importance_scores: dict[tuple[Any, str], Tensor] | None = None, **kwargs: Any) -> None:
    """Prune several parameters as one: `pruning_method(**kwargs)` (an 'unstructured' one, e.g. L1Unstructured
    with amount=) picks among all their still unpruned entries together, then each (module, name) gets its
    share of the mask through `custom_from_mask`."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)  # (a generator would run dry after the first pass)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, name), getattr(m, name)) for m, name in parameters])
    default_mask = parameters_to_vector([getattr(m, name + "_mask", ones_like(getattr(m, name)))
                                         for m, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for m, name in parameters:
        param = getattr(m, name)
        custom_from_mask(m, name, mask=final_mask[start:start + param.numel()].view_as(param))
        start += param.numel()


def custom_from_mask(module: Any, name: str, mask: Tensor) -> Any:
    """Prune `module.<name>` where `mask` is 0."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Any, name: str) -> Any:
    """Make the pruning of `module.<name>` permanent: a Parameter again, holding orig * mask; the `_orig`
    parameter, the `_mask` buffer and the hook are removed. (The pruned entries stay zero.)"""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module: Any) -> bool:
    """Whether `module` or one of its submodules holds a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules() for hook in sub._forward_pre_hooks.values())


# ---- helpers -------------------------------------------------------------------------------------------------

def _validate_pruning_amount_init(amount: Any) -> None:
    """amount: a non-negative int, or a float in [0, 1] (checked when the method is made)."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (amount < 0) if isinstance(amount, numbers.Integral) else not 0.0 <= float(amount) <= 1.0:
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _count_to_prune(amount: int | float, size: int) -> int:
    """How many of `size` entries (or channels) `amount` prunes: itself if an int, else round(amount * size);
    more than `size` is a ValueError."""
    k = int(amount) if isinstance(amount, numbers.Integral) else round(amount * size)
    if k > size:
        raise ValueError(f"amount={k} should be smaller than the number of parameters to prune={size}")
    return k


def _unstructured_mask(amount: int | float, t: Tensor, default_mask: Tensor, scores: Callable[[], Any],
                       largest: bool) -> Tensor:
    """default_mask with the `amount` entries of t whose `scores()` (an array of t's shape) come first, largest
    or smallest, set to 0. `scores` is called only when something is pruned, as PyTorch draws its random ones."""
    k = _count_to_prune(amount, t.nelement())
    mask = default_mask.clone()
    if k:
        mask.view(-1)[Tensor._make(topk_indices(scores(), k, largest=largest))] = 0
    return mask


def _validate_structured(t: Tensor, dim: int) -> None:
    """Channels need a tensor of 2 or more dims, and `dim` one of them."""
    if t.dim() <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {t.shape} with {t.dim()} dims")
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _channel_norms(t: Tensor, n: Any, dim: int) -> Tensor:
    """The L`n` norm of each slice of `t` along `dim` (over all the other dims), as `torch.norm(t, p=n, dim=...)`
    gives it."""
    dims = [d for d in range(t.dim()) if d != dim % t.dim()]
    with no_grad():
        return _norm(t, p=n, dim=dims)


def _channel_mask(t: Tensor, dim: int, channels: Tensor) -> Tensor:
    """Zeros like `t`, with ones in the slices along `dim` that `channels` picks (a bool mask or indices)."""
    mask = zeros_like(t)
    mask[tuple(channels if d == dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
    return mask

r"""`torch.nn.utils.parametrize`: a module's tensor computed from other tensors each time it is read.

How it works. `register_parametrization(layer, "weight", f)` takes the Parameter out of `layer.weight`
and keeps it as `layer.parametrizations.weight.original`. The layer's class is swapped for a subclass
made for this layer alone (`ParametrizedLinear`), in which `weight` is a property:

    reading  layer.weight       computes f(original), with the ordinary ops, so backward reaches `original`
    writing  layer.weight = X   stores f.right_inverse(X) into `original` (X itself when f has none)

The optimizer trains `original` (that is the Parameter `named_parameters()` lists, as
`parametrizations.weight.original`), and every forward sees f(original): a symmetric, orthogonal or
normalised weight by construction. Several parametrizations registered on one tensor apply in order,
f2(f1(original)). When `right_inverse` returns several tensors, they are kept as `original0`,
`original1` ... and f takes them all. Inside `with cached():` each parametrized tensor is computed
once and reused, for a weight read many times in one forward (an RNN's recurrent kernel).
"""
from __future__ import annotations

import collections.abc
import contextlib
import copy
import copyreg
from typing import Any, Iterable, Iterator, Sequence, cast

import numpy as np

from ...autograd.grad_mode import no_grad
from ...tensor import Size, Tensor
from ..layers import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

__all__ = [
    "cached",
    "ParametrizationList",
    "register_parametrization",
    "is_parametrized",
    "remove_parametrizations",
    "type_before_parametrizations",
    "transfer_parametrizations_and_params",
]

# (id(module), tensor name) -> the tensor computed inside `cached()`; nesting depth of `cached()`
_cache: dict[tuple[int, str], Tensor] = {}
_cache_depth = 0


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Inside this block each parametrized tensor is computed on its first read and the same tensor is
    returned afterwards (one graph node for all its uses); leaving the outermost block forgets them."""
    global _cache, _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache = {}


def _set_data(dest: Tensor, src: Tensor) -> None:
    """Make `dest` (the same object, so optimizers and other references keep it) hold `src`'s values, as
    PyTorch's `set_`: sharing src's memory when it can be written, else a private copy."""
    arr = src._array
    dest._array = arr if arr.flags.writeable else np.array(arr)
    dest._bump_version()


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _apply_right_inverses(parametrizations: Iterable[Module], value: Any, *, skip_missing: bool) -> Any:
    """value passed through each right_inverse, last parametrization first (the inverse of the chain).

    At registration a parametrization without one (or one raising NotImplementedError) counts as the
    identity; at assignment it is an error, since `module.weight = X` could not be honoured."""
    with no_grad():
        for p in reversed(list(parametrizations)):
            inverse = getattr(p, "right_inverse", None)
            if inverse is None:
                if skip_missing:
                    continue
                raise RuntimeError(f"parametrization {type(p).__name__} does not implement right_inverse.")
            try:
                value = inverse(value)
            except NotImplementedError:
                if not skip_missing:
                    raise
    return value


def _check_same(what: str, unparametrized: str, parametrized: str, before: Any, after: Any, *,
                flag: str = "the `unsafe` flag") -> None:
    """The ValueError for a parametrization that changes a tensor's dtype or shape without unsafe=True."""
    if before != after:
        raise ValueError(f"Registering a parametrization may not change the {what} of the tensor, unless {flag} "
                         f"is enabled.\n{unparametrized}: {before}\n{parametrized}: {after}")


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, in the order they apply, and the tensors they start from.

    It is `module.parametrizations[tensor_name]`, made by `register_parametrization` (not meant to be built
    by hand). It holds the unparametrized tensor as `original` (a Parameter, or a buffer when a buffer was
    parametrized), or as `original0`, `original1` ... when the first parametrization's `right_inverse`
    returns several tensors. Calling it computes the parametrized tensor. `unsafe=True` skips the check
    that the parametrization keeps the tensor's shape and dtype.
    """

    original: Tensor
    unsafe: bool
    is_tensor: bool
    ntensors: int

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = tuple(original.shape), original.dtype
        new = _apply_right_inverses(self, original, skip_missing=True)
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        before = original._array  # put back if a check below fails: a failed registration changes nothing
        if isinstance(new, Tensor):
            if new.dtype != dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {dtype}\nright_inverse(original).dtype: {new.dtype}")
            if new is not original:
                _set_data(original, new)  # the same Parameter object lives on as `original`
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                     f"Got element {i} of the sequence with type {type(part).__name__}.")
                if isinstance(original, Parameter):
                    part = Parameter(part.detach(), original.requires_grad)
                else:
                    part = part.detach().requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)
        if not unsafe:
            try:
                value = self()
                if not isinstance(value, Tensor):
                    raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
                _check_same("dtype", "unparametrized dtype", "parametrized dtype", dtype, value.dtype,
                            flag="`unsafe` flag")
                _check_same("shape", "unparametrized shape", "parametrized shape", _size(shape),
                            _size(value.shape), flag="`unsafe` flag")
            except Exception:
                if original._array is not before:
                    original._array = before
                    original._bump_version()
                raise

    def right_inverse(self, value: Tensor) -> None:
        """Store what makes this list compute `value`: the right_inverses, last parametrization first, into
        `original` (or `original0`, `original1` ...). This is what `module.weight = value` runs."""
        value = _apply_right_inverses(self, value, skip_missing=False)
        if self.is_tensor:
            if not isinstance(value, Tensor):
                raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
            if value.dtype != self.original.dtype:
                raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                                 f"while `original` has dtype {self.original.dtype}")
            _set_data(self.original, value)
            return
        if not isinstance(value, collections.abc.Sequence):
            raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}.")
        if len(value) != self.ntensors:
            raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                             f"Got a sequence of length {len(value)}.")
        for i, part in enumerate(value):  # every part checked before any is stored
            if not isinstance(part, Tensor):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got element {i} of type "
                                 f"{type(part).__name__}.")
            if part.dtype != getattr(self, f"original{i}").dtype:
                raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {part.dtype} "
                                 f"while `original{i}` has dtype {getattr(self, f'original{i}').dtype}")
        for i, part in enumerate(value):
            _set_data(getattr(self, f"original{i}"), part)

    def forward(self) -> Tensor:
        """f_n(... f_2(f_1(original))): the first parametrization takes the original tensor(s), each next one
        the previous result."""
        first, *rest = list(self._modules.values())
        if self.is_tensor:
            x = first(self.original)
        else:
            x = first(*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for p in rest:
            x = p(x)
        return x


def _parametrizations(module: Module) -> ModuleDict:
    """module.parametrizations, typed for the checker."""
    return cast(ModuleDict, module.parametrizations)


def _plist(module: Module, tensor_name: str) -> ParametrizationList:
    """module.parametrizations[tensor_name], typed for the checker."""
    return cast(ParametrizationList, _parametrizations(module)[tensor_name])


def _size(shape: Any) -> Size:
    """A shape as `torch.Size` prints it, for the error messages."""
    return Size(tuple(shape))


# ---- the class swap and the property -------------------------------------------------------------------------

def _deepcopy_parametrized(self: Module, memo: dict[int, Any]) -> Module:
    """A copy of a parametrized module: its __dict__ deep-copied, its (per-module) class shared."""
    if id(self) in memo:
        return memo[id(self)]
    replica = self.__class__.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):  # type: ignore[attr-defined]
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _refuse_pickling(self: Module) -> None:
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                       "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                       "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _swap_class(module: Module) -> None:
    """Give `module` a class of its own, `Parametrized<Class>`, a subclass of its class, to hang properties
    on (a property lives on a class: one per module, so other Linear layers are untouched)."""
    cls = type(module)
    namespace: dict[str, Any] = {"__getstate__": _refuse_pickling}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _deepcopy_parametrized
    namespace["__module__"] = cls.__module__
    namespace["__qualname__"] = f"Parametrized{cls.__qualname__}"
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _add_property(module: Module, tensor_name: str) -> None:
    """`module.<tensor_name>` becomes a property: read, it computes the ParametrizationList (or takes the
    value `cached()` holds); assigned, it runs the list's right_inverse."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self: Module) -> Tensor:
        parametrization = _plist(self, tensor_name)
        if not _cache_depth:
            return parametrization()
        key = (id(self), tensor_name)
        value = _cache.get(key)
        if value is None:
            value = _cache[key] = parametrization()
        return value

    def set_original(self: Module, value: Tensor) -> None:
        _plist(self, tensor_name).right_inverse(value)

    setattr(type(module), tensor_name, property(get_parametrized, set_original))


# ---- the public functions ------------------------------------------------------------------------------------

def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make `module.<tensor_name>` read as `parametrization(original)`, `original` being the parameter or
    buffer that was there (kept in `module.parametrizations[tensor_name]`); returns `module`.

    At registration `original` is set to `parametrization.right_inverse(tensor)` when the parametrization
    has one (so the tensor keeps its value where the parametrization can express it). A second
    registration on the same name chains: the new parametrization applies to the previous result.
    `parametrization.forward` must keep the tensor's shape and dtype unless `unsafe=True`. A parameter
    registered after the optimizer was built must be added to it (`original` is the same Parameter object
    when `right_inverse` returns one tensor; `original0`, `original1` ... are new ones).
    ValueError if the module has no parameter, buffer or parametrized tensor called `tensor_name`.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_chained(module, tensor_name, parametrization)
        plist = _plist(module, tensor_name)
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _swap_class(module)
            module.parametrizations = ModuleDict()
        _add_property(module, tensor_name)
        _parametrizations(module)[tensor_name] = plist
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
                         f"with name '{tensor_name}'")
    return module


def _check_chained(module: Module, tensor_name: str, parametrization: Module) -> None:
    """A parametrization added on top of others must keep the current tensor's dtype and shape, and so must
    its right_inverse (unless unsafe=True)."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    _check_same("dtype", f"module.{tensor_name}.dtype", f"parametrization(module.{tensor_name}).dtype",
                y.dtype, x.dtype)
    _check_same("shape", f"module.{tensor_name}.shape", f"parametrization(module.{tensor_name}).shape",
                _size(y.shape), _size(x.shape))
    inverse = getattr(parametrization, "right_inverse", None)
    if inverse is None:
        return
    try:
        z = inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {type(z).__name__}")
    for what, got, want in (("dtype", z.dtype, y.dtype), ("shape", _size(z.shape), _size(y.shape))):
        if got != want:
            raise ValueError(f"The tensor returned by parametrization.right_inverse must have the same {what} as "
                             f"module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                             f"module.{tensor_name}.{what}: {want}\nreturned {what}: {got}")


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has a parametrization on `tensor_name` (on any tensor when it is None)."""
    parametrizations = getattr(module, "parametrizations", None)
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo `register_parametrization` on `tensor_name`: it is a plain parameter (or buffer) again.

    leave_parametrized=True: it keeps its current value, f(original), stored in the `original` Parameter
    object (optimizers holding it carry on); False: it is `original` as it stands (only possible when the
    parametrization starts from one tensor). The last removal gives the module its own class back.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = _plist(module, tensor_name)
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            _set_data(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        value = getattr(module, tensor_name)
        original = Parameter(value.detach()) if value.requires_grad else value
    delattr(type(module), tensor_name)
    del _parametrizations(module)[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before any parametrization (`Linear` for a `ParametrizedLinear`)."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register `from_module`'s parametrizations (the same parametrization objects) on `to_module`, and make
    to_module's originals the very tensors from_module trains; only `tensor_name`'s when given. A tensor
    to_module lacks is created first (a Parameter holding from_module's parametrized value)."""
    if not is_parametrized(from_module):
        return to_module
    names = list(_parametrizations(from_module)) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        source = _plist(from_module, name)
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = _plist(to_module, name)
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module

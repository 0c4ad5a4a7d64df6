"""`Module`: the base class of layers and models, with PyTorch's registration rules.

Assigning a `Parameter` or a `Module` to an attribute registers it; `register_buffer` registers
non-learnable state (saved in `state_dict` when persistent). Names in `state_dict()` are the
attribute paths joined by dots (`blocks.0.attn.w_q.weight`), exactly as PyTorch names them, and
come in the same order (a module's own parameters, then its persistent buffers, then each child's
entries, depth first), so weights move between the two libraries by name.
"""
from __future__ import annotations

import collections
import collections.abc
import warnings
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Protocol, TypeVar

import numpy as np

from .. import _dtype
from ..autograd.grad_mode import no_grad
from ..tensor import Size, Tensor, check_device
from ..types import DeviceLike, DTypeLike
from . import _module_hooks as _hooks
from ._module_hooks import (  # noqa: F401  (torch.nn.modules.module's global hooks live here too)
    RemovableHandle,
    register_module_backward_hook,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from .parameter import Buffer, Parameter
from .utils import _set_grad

if TYPE_CHECKING:
    from typing_extensions import Self

    # anything with a `forward`, whose type the checker-only `Module.__call__` below returns
    _Forward = TypeVar("_Forward", bound=Callable[..., Any], covariant=True)

    class _HasForward(Protocol[_Forward]):
        @property
        def forward(self) -> _Forward: ...


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What `load_state_dict(strict=False)` skipped: names the model has but the dict lacks, and the reverse."""

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


def _addindent(text, spaces):
    """Indent every line but the first, so a child's repr nests under its parent's '(name): '."""
    first, *rest = text.split("\n")
    if not rest:
        return text
    pad = " " * spaces
    return "\n".join([first] + [pad + line if line.strip() else "" for line in rest])


def _parameter_lines(items, legacy_names=False):
    """ParameterList's and ParameterDict's repr body: one '  (key): Parameter containing: [dtype of size 3x4]'
    line per entry, as PyTorch prints them (the dict names the legacy tensor type, 'torch.FloatTensor')."""
    from .._runtime import typename  # (a sibling of nn's imports: read when printing only)

    lines = []
    for k, p in items:
        if isinstance(p, Tensor):
            kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
            dtype = typename(p) if legacy_names else str(p.dtype)
            lines.append(f"  ({k}): {kind} containing: [{dtype} of size {'x'.join(str(n) for n in p.shape)}]")
        else:
            lines.append(f"  ({k}): Object of type: {type(p).__name__}")
    return "\n".join(lines)


class Module:
    """Base class for all layers: subclass it, call `super().__init__()`, define `forward`."""

    # what __init__ sets up (declared for type checkers): the training flag, and the stores that
    # registration fills, in registration order (name -> Parameter, Tensor or Module; None for an
    # optional one that is absent, such as a disabled bias)
    training: bool
    _parameters: dict[str, Any]
    _buffers: dict[str, Any]
    _non_persistent: set[str]
    _modules: dict[str, Any]
    _forward_hooks: dict[int, Callable[..., Any]]
    _forward_pre_hooks: dict[int, Callable[..., Any]]
    _forward_hooks_with_kwargs: dict[int, bool]
    _forward_hooks_always_called: dict[int, bool]
    _forward_pre_hooks_with_kwargs: dict[int, bool]
    _backward_hooks: dict[int, Callable[..., Any]]
    _backward_pre_hooks: dict[int, Callable[..., Any]]
    _state_dict_hooks: dict[int, Callable[..., Any]]
    _state_dict_pre_hooks: dict[int, Callable[..., Any]]
    _load_state_dict_pre_hooks: dict[int, Callable[..., Any]]
    _load_state_dict_post_hooks: dict[int, Callable[..., Any]]

    # PyTorch's class attributes, for code that reads them
    dump_patches: bool = False
    call_super_init: bool = False
    _version: int = 1
    T_destination = TypeVar("T_destination", bound=Mapping[str, Any])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            # The usual cause is `super().__init__(d_model)`: say so instead of silently ignoring it.
            raise TypeError(
                f"{type(self).__name__}.__init__() passed unexpected arguments to Module.__init__: "
                f"{args!r} {kwargs!r}"
            )
        set_ = object.__setattr__
        set_(self, "training", True)
        set_(self, "_parameters", {})
        set_(self, "_buffers", {})
        set_(self, "_non_persistent", set())
        set_(self, "_modules", {})
        for store in _HOOK_STORES:
            set_(self, store, {})

    def __setstate__(self, state: dict[str, Any]) -> None:
        # a module pickled before a hook store existed still gets an empty one
        self.__dict__.update(state)
        for store in _HOOK_STORES:
            self.__dict__.setdefault(store, {})

    # ---- registration -------------------------------------------------------------------------
    def _check_init(self, what):
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign {what} before Module.__init__() is called "
                "(call super().__init__() first in your __init__)"
            )

    def _check_name(self, kind, name, store):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got {name!r}')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in store:
            raise KeyError(f"attribute '{name}' already exists on {type(self).__name__}")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if isinstance(value, Parameter):
            self._check_init(f"parameter '{name}'")
            if name not in d["_parameters"]:  # (a replaced one keeps its place in the order, as in PyTorch)
                self._forget(name)
            self.register_parameter(name, value)
            return
        # nn.Buffer(t, persistent=...), and nn.UninitializedBuffer (a lazy buffer, which says so by `_is_buffer`):
        # registered as a buffer with its own persistence, as PyTorch
        if isinstance(value, Buffer) or getattr(type(value), "_is_buffer", False):
            self._check_init(f"buffer '{name}'")
            if name not in d["_buffers"]:  # (a replaced one keeps its place in the order, as in PyTorch)
                self._forget(name)
            self.register_buffer(name, value, persistent=value.persistent)
            return
        if isinstance(value, Module):
            self._check_init(f"module '{name}'")
            if name not in d["_modules"]:
                self._forget(name)
            d["_modules"][name] = _hooks.run_registration_hooks(_hooks._global_module_registration_hooks,
                                                                self, name, value)
            return
        params, modules, buffers = d.get("_parameters"), d.get("_modules"), d.get("_buffers")
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' (nn.Parameter or None expected)"
                )
            params[name] = None
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' (nn.Module or None expected)"
                )
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' (Tensor or None expected)")
            buffers[name] = _hooks.run_registration_hooks(_hooks._global_buffer_registration_hooks, self, name, value)
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name):
        d = self.__dict__
        d.pop(name, None)
        for store in ("_parameters", "_modules", "_buffers"):
            d[store].pop(name, None)
        d["_non_persistent"].discard(name)

    def __getattr__(self, name: str) -> Tensor | Module:
        # Only reached when normal lookup fails: parameters, buffers and children live in the stores.
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        if any(name in d.get(s, ()) for s in ("_parameters", "_modules", "_buffers")):
            self._forget(name)
        else:
            object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register `param` (a Parameter, or None for an optional one such as a disabled bias) as `name`."""
        self._check_init(f"parameter '{name}'")
        self._check_name("parameter", name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' (nn.Parameter or None required)"
            )
        self._parameters[name] = _hooks.run_registration_hooks(_hooks._global_parameter_registration_hooks,
                                                               self, name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register non-learnable state (e.g. a causal mask); saved in state_dict only if `persistent`."""
        self._check_init(f"buffer '{name}'")
        self._check_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (Tensor or None required)")
        self._buffers[name] = _hooks.run_registration_hooks(_hooks._global_buffer_registration_hooks,
                                                            self, name, tensor)
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register `module` as a child called `name` (what attribute assignment does for you)."""
        self._check_init(f"module '{name}'")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name("module", name, self._modules)
        self._modules[name] = _hooks.run_registration_hooks(_hooks._global_module_registration_hooks,
                                                            self, name, module)

    def register_module(self, name: str, module: Module | None) -> None:
        """`add_module` under its other name."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The descendant at dotted path `target` ('' is self); AttributeError naming the step that fails."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put `module` at dotted path `target`, replacing what is there (which must be a module).

        strict=True: the last name must exist already."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target` (e.g. 'blocks.0.proj.weight')."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target` (e.g. 'norm.running_mean')."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(mod, name)

    def get_extra_state(self) -> Any:
        """What a module keeps beyond its tensors, saved as '<prefix>_extra_state': override it (with
        `set_extra_state`) to have that entry; the base one is never called."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called: "
                           "a module defining its own extra state must override get_extra_state()")

    def set_extra_state(self, state: Any) -> None:
        """Restore what `get_extra_state` returned, from `load_state_dict`."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called: "
                           "a module defining its own extra state must override set_extra_state()")

    # ---- iteration ----------------------------------------------------------------------------
    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """(name, module) for this module and every descendant, depth first, parents before children.

        A module reachable by two paths is yielded once (at its first path) unless remove_duplicate=False.
        """
        memo = set() if memo is None else memo
        stack = [(prefix, self)]
        while stack:
            name, mod = stack.pop()
            if remove_duplicate:
                if id(mod) in memo:
                    continue
                memo.add(id(mod))
            yield name, mod
            children = [(f"{name}.{k}" if name else k, m) for k, m in mod._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, child) for the direct children, in registration order, each module once."""
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, store, prefix, recurse, remove_duplicate):
        seen = set()
        if recurse:
            mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            mods = [(prefix, self)]
        for mod_name, mod in mods:
            for k, v in getattr(mod, store).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield (f"{mod_name}.{k}" if mod_name else k), v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(name, parameter) pairs; a tied parameter appears once, under its first name."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes, gradients, conversion ---------------------------------------------------------
    def train(self, mode: bool = True) -> Self:
        """Set training mode here and, through each child's own `train`, in the whole subtree."""
        if not isinstance(mode, bool):
            raise ValueError(f"train: training mode is expected to be a bool, got {mode!r}")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Self:
        """Evaluation mode (`train(False)`): Dropout becomes the identity."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Self:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's `.grad`: to None (the default) or to zeros in place."""
        for p in self.parameters():
            _zero_grad(p, set_to_none)

    def apply(self, fn: Callable[[Module], object]) -> Self:
        """Call fn(m) on every submodule (children first) and on self, e.g. for custom init."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args: Any, dtype: DTypeLike | None = None, device: DeviceLike | None = None, **kwargs: Any) -> Self:
        """Cast floating-point parameters and buffers in place (`.to(float64)`); devices are 'cpu' only."""
        for a in args:
            if _dtype.names_device(a):
                check_device(a, "Module.to")  # (the CPU passes; 'cuda', 'meta' ... say minitensor runs on the CPU only)
            else:
                dtype = a
        check_device(device, "Module.to")
        if dtype is not None:
            d = _dtype.as_dtype(dtype)
            if _dtype.kind(d) != "f":
                raise TypeError(f"Module.to only accepts floating point dtypes, but got desired dtype={d}")
            for t in list(self.parameters()) + list(self.buffers()):
                if _dtype.kind(t.dtype) == "f" and t.dtype != d:
                    t._array = t._array.astype(d)
                    t._bump_version()
                    if t.grad is not None:
                        t.grad = Tensor._make(t.grad._array.astype(d))
        return self

    def float(self) -> Self:
        return self.to(np.float32)

    def double(self) -> Self:
        return self.to(np.float64)

    def half(self) -> Self:
        """Floating-point parameters and buffers to float16 (computed by numpy at that precision)."""
        return self.to(np.float16)

    def bfloat16(self) -> Self:
        """Floating-point parameters and buffers to bfloat16 (with the optional package ml_dtypes; refused
        without it, and nothing is changed)."""
        if not _dtype.has_bfloat16:
            raise TypeError(f"Module.bfloat16: {_dtype.bfloat16.refusal()}")
        return self.to(_dtype.bfloat16)

    def type(self, dst_type: DTypeLike) -> Self:
        """Cast every parameter and buffer (integer ones too, as PyTorch's `type`) to `dst_type`."""
        d = _dtype.as_dtype(dst_type, "Module.type")
        return self._apply(lambda t: Tensor._make(t._array.astype(d)))

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Self:
        """Replace each parameter's values (and gradient) by fn(them), and each buffer by fn(it).

        A parameter stays the same object, holding the new array: optimizers keep pointing at it."""
        if recurse:
            for m in self.children():
                m._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:
                    p._array = new._array
                    p._bump_version()
                if p.grad is not None:
                    p.grad = Tensor._make(fn(p.grad)._array)
            for k, b in self._buffers.items():
                if b is not None:
                    self._buffers[k] = fn(b)
        return self

    def to_empty(self, *, device: DeviceLike | None, recurse: bool = True) -> Self:
        """Give every parameter and buffer fresh uninitialized memory of its shape and dtype (CPU only)."""
        check_device(device, "Module.to_empty")
        return self._apply(lambda t: Tensor._make(np.empty_like(t._array)), recurse=recurse)

    def share_memory(self) -> Self:
        """A no-op: minitensor has no worker processes to share tensors with (DataLoader runs in-process)."""
        return self

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module in place, as PyTorch's: its calls record their ops once and replay them
        (`minitensor.compile`'s arguments; its parameters' names are unchanged, unlike the wrapper's)."""
        from .. import _runtime  # (a sibling below nn: the speed layer fills its slot from above)
        _runtime.compile(*args, **kwargs)  # (argument checks only: no model given, a decorator comes back)
        if _runtime.compiler is not None and not kwargs.get("disable", False):
            settings = _runtime._compile_settings(**{k: kwargs.get(k, d) for k, d in _runtime.COMPILE_DEFAULTS})
            _runtime.compiler(self, settings, True)
        return None

    def cpu(self) -> Self:
        return self

    def cuda(self, device: Any = None) -> Self:  # type: ignore[return]  # (raises: there is no GPU)
        check_device("cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device,
                     "Module.cuda")

    def xpu(self, device: Any = None) -> Self:  # type: ignore[return]
        check_device("xpu", "Module.xpu")

    def ipu(self, device: Any = None) -> Self:  # type: ignore[return]
        check_device("ipu", "Module.ipu")

    def mtia(self, device: Any = None) -> Self:  # type: ignore[return]
        check_device("mtia", "Module.mtia")

    # ---- state dicts ---------------------------------------------------------------------------
    def state_dict(self, *args: Any, destination: dict[str, Tensor] | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Tensor]:
        """name -> tensor for every parameter and persistent buffer, in PyTorch's order.

        Values share memory with the model (as in PyTorch): copy them, or `minitensor.save` them,
        to keep a snapshot. A module or parameter reachable by two paths appears under both names.
        Names start with `prefix` as given ('model.' gives 'model.weight'); keep_vars=True keeps the
        parameters themselves rather than detached views. A module overriding `get_extra_state` adds
        '<prefix>_extra_state'; state-dict pre- and post-hooks run around each module's entries.
        """
        if args:  # PyTorch's deprecated positional form: (destination, prefix, keep_vars)
            warnings.warn("Positional args are being deprecated, use kwargs instead.", FutureWarning, stacklevel=2)
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][len(args):])[:3]
        out = collections.OrderedDict() if destination is None else destination
        self._save_into(out, prefix, keep_vars)
        return out

    def _save_into(self, out, prefix, keep_vars):
        for hook in list(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        for k, p in self._parameters.items():
            if p is not None:
                out[prefix + k] = p if keep_vars else p.detach()
        for k, b in self._buffers.items():
            if b is not None and k not in self._non_persistent:
                out[prefix + k] = b if keep_vars else b.detach()
        if _has_extra_state(self):
            out[prefix + "_extra_state"] = self.get_extra_state()
        for name, child in self._modules.items():
            if child is not None:
                child._save_into(out, f"{prefix}{name}.", keep_vars)
        for hook in list(self._state_dict_hooks.values()):
            if hook(self, out, prefix, {"version": self._version}) is not None:
                raise RuntimeError("state_dict post-hook must return None")

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy values in by name. Everything is validated first: on any error nothing changes.

        Checked for every name: present (if strict), expected (if strict), same shape, and a numeric
        dtype: a value of another dtype is cast to the tensor's, as PyTorch's copy does (integers into a
        float parameter, floats into an integer buffer, truncated). A complex value is refused for a real
        tensor (PyTorch warns and drops the imaginary part: a silent loss here is worse). The error lists
        every missing, unexpected and mismatched key at once. With strict=False, missing and
        unexpected keys are skipped and returned as `(missing_keys, unexpected_keys)`; a shape or
        dtype mismatch is still an error. Values are copied into the existing arrays, so optimizers
        and tied weights keep seeing them; `assign=True` swaps in the given tensors instead.

        Hooks: each module's load pre-hooks see (a copy of) the dict first and may rewrite it. When a
        load post-hook is registered, it runs after the values are in and may clear missing/unexpected
        keys; a strict error about the keys left then comes after loading, as in PyTorch.
        """
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"load_state_dict: expected a dict-like state_dict, got {type(state_dict).__name__}")
        modules = list(self.named_modules(remove_duplicate=False))
        hook_errors: list[str] = []
        hook_missing: list[str] = []
        hook_unexpected: list[str] = []
        if any(m._load_state_dict_pre_hooks for _, m in modules):
            state_dict = collections.OrderedDict(state_dict)  # the hooks may edit it: never the caller's
            for name, m in modules:
                for hook in list(m._load_state_dict_pre_hooks.values()):
                    hook(m, state_dict, f"{name}." if name else "", {}, strict, hook_missing, hook_unexpected,
                         hook_errors)
        own = self._state_slots()
        extra = {f"{name}._extra_state" if name else "_extra_state": m for name, m in modules if _has_extra_state(m)}
        missing = [k for k in own if k not in state_dict] + [k for k in extra if k not in state_dict] + hook_missing
        unexpected = [k for k in state_dict if k not in own and k not in extra] + hook_unexpected
        problems, staged = [], []
        for key, (mod, store, name, target) in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            try:
                arr = value._array if isinstance(value, Tensor) else np.asarray(value)
            except (ValueError, TypeError):
                arr = np.empty((), dtype=object)  # ragged data: reported as a dtype mismatch below
            if _dtype.kind(arr.dtype) not in "biufc":
                problems.append(f"dtype mismatch for {key}: got a value of type {type(value).__name__} "
                                f"with dtype {arr.dtype}, expected a {target.dtype} array")
            elif not getattr(target, "_uninitialized", False) and tuple(arr.shape) != tuple(target.shape):
                problems.append(f"size mismatch for {key}: copying a param with shape {Size(arr.shape)} from "
                                f"checkpoint, the shape in current model is {Size(target.shape)}.")
            elif arr.dtype.kind == "c" and target.dtype.kind != "c":
                problems.append(f"dtype mismatch for {key}: got {arr.dtype}, the current model has {target.dtype}")
            else:
                # A private copy made now: the cast can no longer fail half way, and a dict whose values
                # alias other entries of this model (a swap) still loads correctly.
                dtype = arr.dtype if assign else target.dtype
                staged.append((mod, store, name, target, np.array(arr, dtype=dtype, copy=True)))
        post_hooks = [(m, h) for _, m in modules for h in m._load_state_dict_post_hooks.values()]
        key_errors = [] if post_hooks else _key_errors(strict, missing, unexpected)
        errors = key_errors + problems + hook_errors
        if errors:
            _raise_load_errors(self, errors)
        for mod, store, name, target, arr in staged:
            if assign:
                new = (Parameter(arr, requires_grad=target.requires_grad) if store == "_parameters"
                       else Tensor._make(arr))
                getattr(mod, store)[name] = new
            else:
                if getattr(target, "_uninitialized", False):  # a lazy module's placeholder takes the loaded shape
                    target.materialize(arr.shape)
                # In place, as PyTorch's copy_: optimizers and tied weights keep pointing at the same array.
                target._array[...] = arr
                target._bump_version()
        for key, m in extra.items():
            if key in state_dict:
                m.set_extra_state(state_dict[key])
        result = _IncompatibleKeys(missing, unexpected)
        if post_hooks:
            for m, hook in post_hooks:
                if hook(m, result) is not None:
                    raise RuntimeError("load_state_dict post-hook must return None")
            key_errors = _key_errors(strict, result.missing_keys, result.unexpected_keys)
            if key_errors:
                _raise_load_errors(self, key_errors)
        return result

    def _state_slots(self, prefix=""):
        """state-dict name -> (owning module, store, attribute name, tensor), in state_dict order."""
        out = collections.OrderedDict()
        for mod_name, mod in self.named_modules(prefix=prefix, remove_duplicate=False):
            dot = f"{mod_name}." if mod_name else ""
            for k, p in mod._parameters.items():
                if p is not None:
                    out[dot + k] = (mod, "_parameters", k, p)
            for k, b in mod._buffers.items():
                if b is not None and k not in mod._non_persistent:
                    out[dot + k] = (mod, "_buffers", k, b)
        return out

    # ---- calling -------------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    if TYPE_CHECKING:
        # What a type checker sees: calling a module calls its `forward`, so `layer(x)` has the types
        # of that layer's forward (arguments checked, result known: `nn.Linear(2, 3)(x)` is a Tensor).
        @property
        def __call__(self: _HasForward[_Forward]) -> _Forward: ...
    else:
        def _call_impl(self, *args, **kwargs):
            d = self.__dict__
            if not (d.get("_forward_pre_hooks", True) or d.get("_forward_hooks", True) or d.get("_backward_hooks")
                    or d.get("_backward_pre_hooks") or _hooks.any_global_call_hooks()):
                return self.forward(*args, **kwargs)  # no hooks: straight to forward
            return _hooks.call_with_hooks(self, args, kwargs)

        __call__ = _wrapped_call_impl = _call_impl

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call hook(module, args) before each forward; a non-None result replaces args (a non-tuple is
        wrapped in one). with_kwargs=True: hook(module, args, kwargs), returning None or (args, kwargs).
        prepend=True runs it before the hooks already registered. `handle.remove()` unregisters it."""
        flags = (self._forward_pre_hooks_with_kwargs,) if with_kwargs else ()
        return _hooks.add_hook(self._forward_pre_hooks, hook, prepend, flags)

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Call hook(module, args, output) after each forward (e.g. to capture attention maps); a non-None
        result replaces the output. with_kwargs=True: hook(module, args, kwargs, output). always_call=True:
        also called (with output None) when forward raised. `handle.remove()` unregisters it."""
        flags = ((self._forward_hooks_with_kwargs,) if with_kwargs else ()) + (
            (self._forward_hooks_always_called,) if always_call else ())
        return _hooks.add_hook(self._forward_hooks, hook, prepend, flags)

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call hook(module, grad_output) when the gradients of this call's outputs are computed; a non-None
        result (a tuple of the same length) replaces them. grad_output has one slot per output, None where
        no gradient came."""
        return _hooks.add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call hook(module, grad_input, grad_output) when the gradients of this call's inputs are computed;
        a non-None result (a tuple with one slot per positional argument) replaces grad_input. When no
        input requires grad it fires with the outputs' gradients and grad_input all None (with a warning)."""
        return _hooks.add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """PyTorch's deprecated hook; here the same as `register_full_backward_hook` (PyTorch's old one saw
        the gradients of the last op inside forward, which is rarely what was meant)."""
        return self.register_full_backward_hook(hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call hook(module, prefix, keep_vars) before `state_dict` collects this module's entries."""
        return _hooks.add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call hook(module, state_dict, prefix, local_metadata) after this module's entries are in; it may
        change `state_dict` in place and must return None."""
        return _hooks.add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs) before `load_state_dict` reads this module's entries; it may rename or convert entries
        of `state_dict` (a copy of the caller's) in place, and append messages to error_msgs to refuse."""
        return _hooks.add_hook(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call hook(module, incompatible_keys) after `load_state_dict`; it may clear keys from
        incompatible_keys.missing_keys / unexpected_keys in place (before strict checks them)."""
        return _hooks.add_hook(self._load_state_dict_post_hooks, hook)

    # ---- printing ------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The one-line settings shown inside this module's repr, e.g. 'in_features=4, out_features=3'."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): {_addindent(repr(m), 2)}" for name, m in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))


def _has_extra_state(m):
    return type(m).get_extra_state is not Module.get_extra_state


def _key_errors(strict, missing, unexpected):
    errors = []
    if strict and missing:
        errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
    if strict and unexpected:
        errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
    return errors


def _raise_load_errors(module, errors):
    # PyTorch's text as it is, trailing spaces included (scripts print it). Raised before any value is
    # loaded, unless a post-hook ran: as in PyTorch, its changes to the key lists are then checked after.
    raise RuntimeError(f"Error(s) in loading state_dict for {type(module).__name__}:\n\t" + "\n\t".join(errors))


def _zero_grad(p, set_to_none):
    if p.grad is None:
        return
    if set_to_none:
        p.grad = None
    else:
        _set_grad(p, np.zeros_like(p.grad._array))
        p.grad.requires_grad_(False)


_RemovableHandle = RemovableHandle  # (its earlier private name)

# the hook stores every Module has, in the order __init__ makes them
_HOOK_STORES = ("_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_forward_pre_hooks",
                "_forward_pre_hooks_with_kwargs", "_backward_hooks", "_backward_pre_hooks", "_state_dict_hooks",
                "_state_dict_pre_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")

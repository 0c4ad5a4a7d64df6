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
from typing import TYPE_CHECKING, Any, Callable, Iterator, Literal, Mapping, Protocol, TypeVar

import numpy as np

from .. import _dtype
from ..tensor import Tensor, check_device
from ..types import DeviceLike, DTypeLike
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
    _next_hook_id: int

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
        set_(self, "_forward_hooks", {})
        set_(self, "_forward_pre_hooks", {})
        set_(self, "_next_hook_id", 0)

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
            self._forget(name)
            self.register_parameter(name, value)
            return
        if isinstance(value, Buffer):  # nn.Buffer(t, persistent=...): registered as a buffer, as PyTorch
            self._check_init(f"buffer '{name}'")
            self._forget(name)
            self.register_buffer(name, value, persistent=value.persistent)
            return
        if isinstance(value, Module):
            self._check_init(f"module '{name}'")
            self._forget(name)
            d["_modules"][name] = value
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
            buffers[name] = value
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
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register non-learnable state (e.g. a causal mask); saved in state_dict only if `persistent`."""
        self._check_init(f"buffer '{name}'")
        self._check_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (Tensor or None required)")
        self._buffers[name] = tensor
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
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The descendant at dotted path `target` ('' is self)."""
        mod = self
        for part in target.split(".") if target else ():
            child = mod._modules.get(part)
            if not isinstance(child, Module):
                raise AttributeError(f"{type(mod).__name__} has no submodule `{part}` (looking up {target!r})")
            mod = child
        return mod

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
            if isinstance(a, str) and a.split(":")[0] in ("cpu", "cuda", "mps") or type(a).__name__ == "device":
                check_device(a, "Module.to")
            else:
                dtype = a
        check_device(device, "Module.to")
        if dtype is not None:
            d = _dtype.as_dtype(dtype)
            if d.kind != "f":
                raise TypeError(f"Module.to only accepts floating point dtypes, but got desired dtype={d}")
            for t in list(self.parameters()) + list(self.buffers()):
                if t.dtype.kind == "f" and t.dtype != d:
                    t._array = t._array.astype(d)
                    t._bump_version()
                    if t.grad is not None:
                        t.grad = Tensor._make(t.grad._array.astype(d))
        return self

    def float(self) -> Self:
        return self.to(np.float32)

    def double(self) -> Self:
        return self.to(np.float64)

    def cpu(self) -> Self:
        return self

    def cuda(self, *args: Any, **kwargs: Any) -> Self:  # type: ignore[return]  # (raises: there is no GPU)
        check_device("cuda", "Module.cuda")

    # ---- state dicts ---------------------------------------------------------------------------
    def state_dict(self, *, destination: dict[str, Tensor] | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Tensor]:
        """name -> tensor for every parameter and persistent buffer, in PyTorch's order.

        Values share memory with the model (as in PyTorch): copy them, or `minitensor.save` them,
        to keep a snapshot. A module or parameter reachable by two paths appears under both names.
        """
        out = collections.OrderedDict() if destination is None else destination
        for key, (_, _, _, t) in self._state_slots(prefix.rstrip(".")).items():
            out[key] = t if keep_vars else t.detach()
        return out

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
        """
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"load_state_dict: expected a dict-like state_dict, got {type(state_dict).__name__}")
        own = self._state_slots()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        problems, staged = [], []
        for key, (mod, store, name, target) in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            try:
                arr = value._array if isinstance(value, Tensor) else np.asarray(value)
            except (ValueError, TypeError):
                arr = np.empty((), dtype=object)  # ragged data: reported as a dtype mismatch below
            if arr.dtype.kind not in "biufc":
                problems.append(f"dtype mismatch for {key}: got a value of type {type(value).__name__} "
                                f"with dtype {arr.dtype}, expected a {target.dtype} array")
            elif tuple(arr.shape) != tuple(target.shape) and not getattr(target, "_uninitialized", False):
                problems.append(f"size mismatch for {key}: copying a param with shape {tuple(arr.shape)} from "
                                f"checkpoint, the shape in current model is {tuple(target.shape)}")
            elif arr.dtype.kind == "c" and target.dtype.kind != "c":
                problems.append(f"dtype mismatch for {key}: got {arr.dtype}, the current model has {target.dtype}")
            else:
                # A private copy made now: the cast can no longer fail half way, and a dict whose values
                # alias other entries of this model (a swap) still loads correctly.
                dtype = arr.dtype if assign else target.dtype
                staged.append((mod, store, name, target, np.array(arr, dtype=dtype, copy=True)))
        errors = []
        if strict and missing:
            errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
        if strict and unexpected:
            errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
        errors += problems
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__} (nothing was changed):\n\t"
                + "\n\t".join(errors)
            )
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
        return _IncompatibleKeys(missing, unexpected)

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
        def __call__(self, *args, **kwargs):
            d = self.__dict__
            # no hooks: straight to forward
            if not (d.get("_forward_pre_hooks", True) or d.get("_forward_hooks", True)):
                return self.forward(*args, **kwargs)
            for hook in list(self._forward_pre_hooks.values()):
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
            out = self.forward(*args, **kwargs)
            for hook in list(self._forward_hooks.values()):
                res = hook(self, args, out)
                if res is not None:
                    out = res
            return out

    def _add_hook(self, store, hook):
        key = self._next_hook_id
        object.__setattr__(self, "_next_hook_id", key + 1)
        store[key] = hook
        return _RemovableHandle(store, key)

    def register_forward_hook(self, hook: Callable[..., Any]) -> _RemovableHandle:
        """Call hook(module, inputs, output) after each forward (e.g. to capture attention maps).

        A non-None return value replaces the output. Returns a handle whose `remove()` unregisters it.
        """
        return self._add_hook(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook: Callable[..., Any]) -> _RemovableHandle:
        """Call hook(module, inputs) before each forward; a non-None return value replaces the inputs."""
        return self._add_hook(self._forward_pre_hooks, hook)

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


def _zero_grad(p, set_to_none):
    if p.grad is None:
        return
    if set_to_none:
        p.grad = None
    else:
        _set_grad(p, np.zeros_like(p.grad._array))
        p.grad.requires_grad_(False)


class _RemovableHandle:
    def __init__(self, store: dict[int, Any], key: int) -> None:
        self._store, self._key = store, key

    def remove(self) -> None:
        self._store.pop(self._key, None)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.remove()
        return False

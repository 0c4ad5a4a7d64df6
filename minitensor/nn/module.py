"""`Module`: the base class of layers and models, with PyTorch's registration rules.

Assigning a `Parameter` or a `Module` to an attribute registers it; `register_buffer` registers
non-learnable state (saved in `state_dict` when persistent). Names in `state_dict()` are the
attribute paths joined by dots (`blocks.0.attn.w_q.weight`), exactly as PyTorch names them, so
weights move between the two libraries by name.
"""
import collections
import itertools

import numpy as np

from ..autograd import grad_mode
from ..tensor import Tensor
from .parameter import Parameter

_IncompatibleKeys = collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class Module:
    """Base class for all layers: subclass it, call `super().__init__()`, define `forward`."""

    def __init__(self, *args, **kwargs):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_hooks", {})
        object.__setattr__(self, "_hook_ids", itertools.count())

    # ---- registration -------------------------------------------------------------------------
    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__ and isinstance(value, (Parameter, Module)):
            raise AttributeError(
                f"cannot assign {type(value).__name__} '{name}' before Module.__init__() is called "
                "(call super().__init__() first in your __init__)"
            )
        params, modules, buffers = self.__dict__.get("_parameters"), self.__dict__.get("_modules"), self.__dict__.get("_buffers")
        if isinstance(value, Parameter):
            self._forget(name)
            params[name] = value
        elif isinstance(value, Module):
            self._forget(name)
            modules[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' (nn.Parameter or None expected)")
            params[name] = None
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' (nn.Module or None expected)")
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' (Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name):
        self.__dict__.pop(name, None)
        for store in (self._parameters, self._modules, self._buffers):
            store.pop(name, None)
        self._non_persistent.discard(name)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        if name in self._parameters or name in self._modules or name in self._buffers:
            self._forget(name)
        else:
            object.__delattr__(self, name)

    def register_parameter(self, name, param):
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: '{name}' must be a Parameter or None, got {type(param).__name__}")
        self._forget(name)
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Register non-learnable state (e.g. a causal mask); saved in state_dict if `persistent`."""
        if "." in name or not name:
            raise KeyError(f"register_buffer: invalid buffer name {name!r}")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: '{name}' must be a Tensor or None, got {type(tensor).__name__}")
        self._forget(name)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {type(module).__name__} is not a Module subclass")
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        mod = self
        for part in target.split(".") if target else ():
            mod = mod._modules[part]
        return mod

    # ---- iteration ----------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(name, module) for this module and every descendant, depth first (iterative)."""
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

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named(self, store, prefix, recurse, remove_duplicate=True):
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mod_name, mod in mods:
            for k, v in getattr(mod, store).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield (f"{mod_name}.{k}" if mod_name else k), v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes, gradients, conversion ---------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("train: training mode is expected to be a bool")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad = Tensor._make(np.zeros_like(p.grad.data))

    def apply(self, fn):
        """Call fn(m) on every submodule (children first) and on self, e.g. for custom init."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args, dtype=None, device=None, **kwargs):
        """Cast floating-point parameters and buffers in place (`.to(float64)`); devices are 'cpu' only."""
        from ..tensor import check_device
        from .. import _dtype

        for a in args:
            if isinstance(a, str) and a.split(":")[0] in ("cpu", "cuda", "mps") or type(a).__name__ == "device":
                check_device(a, "Module.to")
            else:
                dtype = a
        check_device(device, "Module.to")
        if dtype is not None:
            d = _dtype.as_dtype(dtype)
            for t in itertools.chain(self.parameters(), self.buffers()):
                if t.dtype.kind == "f":
                    t.data = t.data.astype(d)
                    if t.grad is not None:
                        t.grad = t.grad.to(d)
        return self

    def float(self):
        return self.to(np.float32)

    def double(self):
        return self.to(np.float64)

    def cpu(self):
        return self

    def cuda(self, *args, **kwargs):
        from ..tensor import check_device

        check_device("cuda", "Module.cuda")

    # ---- state dicts ---------------------------------------------------------------------------
    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """name -> tensor for every parameter and persistent buffer, in registration order."""
        out = collections.OrderedDict() if destination is None else destination
        for mod_name, mod in self.named_modules(prefix=prefix.rstrip(".")):
            dot = f"{mod_name}." if mod_name else ""
            for k, p in mod._parameters.items():
                if p is not None:
                    out[dot + k] = p if keep_vars else p.detach()
            for k, b in mod._buffers.items():
                if b is not None and k not in mod._non_persistent:
                    out[dot + k] = b if keep_vars else b.detach()
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values in by name. Everything is validated first: on any error nothing changes."""
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        problems = []
        staged = []
        for k, target in own.items():
            if k not in state_dict:
                continue
            value = state_dict[k]
            arr = value.data if isinstance(value, Tensor) else np.asarray(value)
            if tuple(arr.shape) != tuple(target.shape):
                problems.append(f"size mismatch for {k}: copying a param with shape {tuple(arr.shape)}, "
                                f"the shape in the current model is {tuple(target.shape)}")
            elif arr.dtype != target.dtype and not (arr.dtype.kind == target.dtype.kind == "f"):
                problems.append(f"dtype mismatch for {k}: got {arr.dtype}, the model has {target.dtype}")
            else:
                staged.append((target, arr))
        if strict:
            if missing:
                problems.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing))
            if unexpected:
                problems.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected))
        if problems:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__} (nothing was changed):\n\t" + "\n\t".join(problems)
            )
        with grad_mode.no_grad():
            for target, arr in staged:
                target.data[...] = arr  # in place, as PyTorch's copy_: tied weights stay tied
                target._version += 1
        return _IncompatibleKeys(missing, unexpected)

    # ---- calling -------------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            res = hook(self, args, out)
            if res is not None:
                out = res
        return out

    def register_forward_hook(self, hook):
        """Call hook(module, inputs, output) after each forward (e.g. to capture attention maps)."""
        key = next(self._hook_ids)
        self._forward_hooks[key] = hook
        return _RemovableHandle(self._forward_hooks, key)

    # ---- printing ------------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            child = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        if not self._modules:
            return f"{type(self).__name__}({extra})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))


class _RemovableHandle:
    def __init__(self, store, key):
        self._store, self._key = store, key

    def remove(self):
        self._store.pop(self._key, None)

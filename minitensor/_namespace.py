"""The rest of PyTorch's top-level namespace that is not an op (issue 29, h-torchns): the determinism
and warning switches, small questions about a tensor, `fill` and `detach` as functions,
`broadcast_shapes`, `empty_permuted`, DLPack exchange, the legacy `set_default_tensor_type` and
`BFloat16Tensor`, and `GradScaler` (the layouts and memory formats are minitensor/_layout.py's).

Switches that have nothing to switch in minitensor (every op is deterministic, numpy computes on
the CPU in each tensor's own dtype) are recorded and read back, and say so in their docstrings.
"""
from __future__ import annotations

import warnings
from typing import Any, Iterable, Sequence

import numpy as np

from . import _dtype
from .ops import inplace as _inplace
from .ops._util import broadcast_shapes as _broadcast_shapes, tensor_input as _tensor_input
from .tensor import Size, Tensor, _size_arg

newaxis = None  # x[:, newaxis] is x[:, None], as numpy's

# ---- determinism and warnings: recorded switches -------------------------------------------------------
_switches: dict[str, Any] = {"deterministic": False, "warn_only": False, "warn_always": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Recorded (read back by `are_deterministic_algorithms_enabled`): every minitensor op is already
    deterministic (numpy on the CPU, no atomic adds), so none has to refuse or warn."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"use_deterministic_algorithms expects a bool, but got {type(mode).__name__}")
    _switches["deterministic"], _switches["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _switches["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _switches["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """0 ('default'), 1 ('warn') or 2 ('error'): `use_deterministic_algorithms` under another name."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _switches["deterministic"]:
        return 0
    return 1 if _switches["warn_only"] else 2


def set_warn_always(b: bool) -> None:
    """Recorded: minitensor's warnings go through Python's `warnings`, whose filters decide how often they show."""
    _switches["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _switches["warn_always"]


def set_flush_denormal(mode: bool) -> bool:
    """False: numpy gives no control of the CPU's denormal flushing, so nothing is changed (PyTorch also
    returns False where flushing is unsupported)."""
    return False


def init_num_threads() -> None:
    """Nothing to do: numpy's BLAS sets up its threads when it loads."""


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """False: minitensor's `autocast` is a stand-in that changes no dtype (see _runtime.autocast)."""
    return False


def thread_safe_generator() -> None:
    """None, which means the default generator: PyTorch returns a worker's own generator only inside a
    DataLoader thread worker, and minitensor's DataLoader has no thread workers."""
    return None


# ---- questions about a tensor, as functions -------------------------------------------------------------

def is_inference(input: Tensor) -> bool:
    return input.is_inference()


def is_signed(input: Tensor) -> bool:
    return input.is_signed()


def get_device(input: Tensor) -> int:
    return _tensor_input(input, "get_device").get_device()


def fill(input: Tensor, value: Any) -> Tensor:
    """A new tensor of input's shape and dtype filled with value (a number or a 0-d tensor, whose
    gradient it receives; input gets none): `input.clone().fill_(value)` out of place."""
    return _inplace._filled(input, value)


def detach(input: Tensor) -> Tensor:
    return input.detach()


def broadcast_shapes(*shapes: int | Sequence[int] | Size) -> Size:
    """The shape tensors of these shapes broadcast to (an int is a 1-d shape), without making any tensor."""
    as_tuples = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    for s in as_tuples:
        if any(n < 0 for n in s):
            raise RuntimeError(f"broadcast_shapes: Trying to create tensor with negative dimension {min(s)}: "
                               f"{list(s)}")
    return Size(_broadcast_shapes("broadcast_shapes", *as_tuples))


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of `size` (zeros: PyTorch's are uninitialized). PyTorch lays its dims out in memory in
    `physical_layout`'s order; minitensor's tensors are row-major, so the order is checked, not used."""
    from .factories import zeros
    shape = _size_arg(tuple(size), "empty_permuted")
    if sorted(int(d) for d in physical_layout) != list(range(len(shape))):
        raise RuntimeError(f"empty_permuted: physical_layout must be a permutation of the dims 0..{len(shape) - 1}, "
                           f"got {list(physical_layout)}")
    return zeros(shape, dtype=dtype, device=device, requires_grad=requires_grad)


# ---- DLPack: sharing memory with numpy, PyTorch, JAX ... -------------------------------------------------

class _Capsule:
    """A DLPack capsule offered again through the protocol numpy's `from_dlpack` reads."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # (kDLCPU, device 0)


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule of tensor's memory (shared, not copied), for another library's `from_dlpack`."""
    return tensor._array.__dlpack__()


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor sharing the memory of `ext_tensor`: an object with `__dlpack__` (a numpy array, a PyTorch
    or JAX tensor on the CPU) or a capsule from `to_dlpack`. Its dtype must be one minitensor has.
    `copy=True` copies instead; `device` must be the CPU."""
    from .tensor import check_device
    check_device(device, "from_dlpack")
    source = ext_tensor if hasattr(ext_tensor, "__dlpack__") else _Capsule(ext_tensor)
    array = np.from_dlpack(source)
    if _dtype.kind(array.dtype) not in "biuf" or array.dtype.itemsize > 8:  # (complex, float128, strings ...)
        raise TypeError(f"from_dlpack: minitensor has no tensors of dtype {array.dtype}")
    return Tensor._make(array.copy() if copy else array)


# ---- legacy types ------------------------------------------------------------------------------------

def set_default_tensor_type(t: Any) -> None:
    """PyTorch's deprecated way to set the default float dtype: `FloatTensor` or `DoubleTensor` (or their
    names, 'torch.FloatTensor' ...). Use `set_default_dtype`."""
    from . import legacy
    warnings.warn("set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "set_default_dtype() and set_default_device() as alternatives.", UserWarning, stacklevel=2)
    if isinstance(t, str):
        name = t.split(".")[-1]
        t = getattr(legacy, name, None)
        if t is None:
            raise TypeError(f"set_default_tensor_type: invalid type string {name!r}")
    dtype = getattr(t, "dtype", None)
    if dtype is None or not isinstance(t, legacy._TypedTensorType):
        raise TypeError(f"set_default_tensor_type: expected a tensor type such as minitensor.FloatTensor, got {t!r}")
    if _dtype.kind(dtype) != "f":
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(dtype)


class _StoragelessTensorType(type):
    """`BFloat16Tensor`: a name for code that tests types; no tensor is one, and making one is refused."""

    def __instancecheck__(cls, obj: object) -> bool:
        return False

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:
        raise TypeError("BFloat16Tensor: minitensor has no bfloat16 tensors (numpy has no bfloat16 storage); "
                        "use FloatTensor or HalfTensor")

    def __repr__(cls) -> str:
        return f"<class 'minitensor.{cls.__name__}'>"


if _dtype.has_bfloat16:  # the optional ml_dtypes gives numpy a bfloat16: a typed tensor as the others
    from .legacy import _typed
    BFloat16Tensor: Any = _typed("BFloat16Tensor", _dtype.bfloat16)
else:
    BFloat16Tensor = _StoragelessTensorType("BFloat16Tensor", (), {"dtype": _dtype.bfloat16})


# ---- GradScaler: loss scaling for float16 training -------------------------------------------------------

class GradScaler:
    """PyTorch's loss scaler (`torch.GradScaler`, `torch.amp.GradScaler`): `scaler.scale(loss).backward()`
    multiplies the gradients by `scale`; `scaler.step(opt)` divides them back and skips the step if any
    is inf or NaN; `scaler.update()` halves the scale after such a step (`backoff_factor`) and doubles it
    (`growth_factor`) after `growth_interval` clean steps in a row. With `enabled=False` every method
    passes through. Only the 'cpu' device exists here."""

    def __init__(self, device: str = "cpu", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        from .tensor import check_device
        check_device(device, "GradScaler")
        if not growth_factor > 1.0:
            raise ValueError("GradScaler: The growth factor must be > 1.0.")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError("GradScaler: The backoff factor must be < 1.0.")
        self._device, self._enabled = "cpu", bool(enabled)
        self._scale, self._growth_factor, self._backoff_factor = float(init_scale), growth_factor, backoff_factor
        self._growth_interval, self._growth_tracker = int(growth_interval), 0
        self._unscaled: dict[int, bool] = {}  # id(optimizer) -> whether it found inf/NaN, this step
        self._found_inf_this_step = False

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def scale(self, outputs: Any) -> Any:
        """outputs (a tensor, or a list/tuple of them) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("GradScaler.scale: outputs must be a Tensor or an iterable of Tensors")

    def _params(self, optimizer: Any) -> Iterable[Any]:
        return (p for group in optimizer.param_groups for p in group["params"])

    def unscale_(self, optimizer: Any) -> None:
        """Divide optimizer's gradients by the scale (once per step), noting whether any is inf or NaN."""
        if not self._enabled:
            return
        if id(optimizer) in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        found = False
        inv = 1.0 / self._scale
        for p in self._params(optimizer):
            if p.grad is not None:
                g = p.grad._array
                found = found or not bool(np.isfinite(g).all())
                g *= inv
        self._unscaled[id(optimizer)] = found

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """optimizer.step(...) with the gradients unscaled, skipped if one of them is inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if self._unscaled[id(optimizer)]:
            self._found_inf_this_step = True
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """The next step's scale: `new_scale` if given, else backed off after inf/NaN or grown after a run."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
        elif self._found_inf_this_step or any(self._unscaled.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._unscaled.clear()
        self._found_inf_this_step = False

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def state_dict(self) -> dict[str, Any]:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])

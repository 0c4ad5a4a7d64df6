r"""`save` and `load`: checkpoints as plain `.npz` files, written atomically, read without pickle.

Format. A checkpoint is an ordinary numpy `.npz` (a zip of `.npy` arrays) holding one entry per
array, named by its path in the saved object with dots (`body.0.weight`, `model.body.0.weight`,
`optim.state.0.exp_avg`), plus one entry `__minitensor__` (JSON text as uint8 bytes) that
records the nesting: dicts (keys may be str or int, order kept), lists, tuples, and the plain
values ints, floats, strings, bools and None. So a model's state dict saved on its own is, for
`numpy.load`, exactly the flat name -> array mapping PyTorch users expect.

Safety. Files are read with `allow_pickle=False`, so loading never runs code (a pickle can:
CVE-2019-6446); object arrays are refused on save and on load. `save` writes to a temporary file
in the target's folder, flushes and fsyncs it, then `os.replace`s it over the target (atomic on
POSIX and Windows) and fsyncs the folder, so a crash at any moment leaves either the old file or
the new one, never half of one. A save killed outright (kill -9) leaves its temporary file behind;
the next successful save of the same target removes such leftovers. Any unreadable file raises
`CheckpointError` naming the path, and so does a hostile one: a header claiming a shape larger
than the bytes its member holds is refused before anything is allocated, metadata nested too
deeply to walk is refused, and a big-endian array is read into the machine's own byte order (so
its dtype is `float64`, never `>f8`).

Whole objects. `save(model, f)` of a whole module (or any object that is not one of the plain values
above) stores it as a pickle inside the same file (a `uint8` member), whose tensors are not pickled
but stored as ordinary arrays (a module's under its state-dict names) and referred to by name. `load`
unpickles it with a restricted unpickler (`weights_only=True`, the default, as in PyTorch): it rebuilds
only minitensor's own module and optimizer classes, a few plain containers (`OrderedDict`, `set` ...)
and the classes the user allow-lists (`add_safe_globals`, `safe_globals`); anything else is refused by
name before it is looked up, so no module is imported and no code from the file runs. A raw pickle
file is read the same way. `weights_only=False` unpickles anything: only for files you trust.
"""
from __future__ import annotations

import _compat_pickle
import collections
import contextlib
import io
import json
import math
import os
import pickle
import re
import stat
import struct
import sys
import tempfile
import time
import zipfile
import zlib
from typing import IO, Any

import numpy as np

from . import _dtype
from .tensor import Size, Tensor

_META = "__minitensor__"
_FORMAT = "minitensor.checkpoint"
_VERSION = 1


class CheckpointError(RuntimeError):
    """A checkpoint file is missing pieces, corrupt, truncated, or not a minitensor/npz checkpoint."""


class WeightsOnlyError(CheckpointError, pickle.UnpicklingError):
    """`load(weights_only=True)` met a pickled global that is not allow-listed (PyTorch raises an
    UnpicklingError: `except pickle.UnpicklingError` catches this one too)."""


# ---- save -------------------------------------------------------------------------------------
def save(obj: object, f: str | os.PathLike[str] | IO[bytes], pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Save `obj` (a state dict, or a dict/list/tuple of them with ints, floats, strings) to `f`.

    `f` is a path (written atomically; no suffix is added) or a binary file object. Tensors and
    numpy arrays are stored bit-exactly with their dtype; `load` returns them as Tensors. Any other
    object (a whole module: `save(model, f)`) is pickled inside the file, its tensors as arrays; see
    the module's doc for what `load` accepts back. `pickle_protocol` (at least 2) is the pickle's;
    `pickle_module` and the other arguments exist for PyTorch-style calls.
    """
    arrays: dict[str, Any] = {}
    root = _encode(obj, "", arrays, set(), _Pickling(max(2, int(pickle_protocol))))
    header = {"format": _FORMAT, "version": _VERSION, "root": root}
    bf16 = _bfloat16_as_bits(arrays)
    if bf16:
        header["bfloat16"] = bf16
    meta = json.dumps(header, allow_nan=True)
    members = [(_META, np.frombuffer(meta.encode("utf-8"), dtype=np.uint8))] + list(arrays.items())
    if hasattr(f, "write"):
        _write_npz(f, members)
        return
    path = os.fspath(f)
    folder = os.path.dirname(os.path.abspath(path))
    started = time.time()
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            _write_npz(handle, members)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _default_mode(path))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _remove_stale_temps(folder, os.path.basename(path), started)
    _fsync_folder(folder)


def _remove_stale_temps(folder, name, started):
    """Delete the temporary files of earlier saves of `name` that were killed before their rename
    (a kill -9 runs no cleanup): only regular files named as `save` names them for this target,
    and only those last written before this save began, so a save still running elsewhere keeps its own."""
    pattern = re.compile(r"\." + re.escape(name) + r"\.[a-z0-9_]{8}\.tmp")
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        if not pattern.fullmatch(entry):
            continue
        candidate = os.path.join(folder, entry)
        try:
            info = os.lstat(candidate)
            if stat.S_ISREG(info.st_mode) and info.st_mtime < started:
                os.unlink(candidate)
        except OSError:
            pass  # gone already, or not ours to remove: the save itself succeeded


def _encode(obj, path, arrays, active, pickling=None):
    """The JSON node for `obj`; arrays go into `arrays` under a unique dotted name."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return obj
    if isinstance(obj, (Tensor, np.ndarray, np.generic)):
        arr = np.asarray(obj._array if isinstance(obj, Tensor) else obj)
        if _dtype.kind(arr.dtype) not in "biufc":
            raise TypeError(f"save: cannot store an array of dtype {arr.dtype} at {_where(path)} (numeric arrays only)")
        name = _unique(path or "tensor", arrays)
        arrays[name] = arr
        return {"t": "tensor", "k": name}
    if isinstance(obj, (dict, list, tuple)):
        if id(obj) in active:
            raise ValueError(f"save: {_where(path)} contains itself (a reference cycle)")
        active.add(id(obj))
        try:
            if isinstance(obj, dict):
                items = []
                for k, v in obj.items():
                    if isinstance(k, bool) or not isinstance(k, (str, int)):
                        raise TypeError(
                            f"save: dict keys must be str or int, got {type(k).__name__} {k!r} at {_where(path)}"
                        )
                    items.append([k, _encode(v, _join(path, k), arrays, active, pickling)])
                return {"t": "dict", "items": items}
            kind = "list" if isinstance(obj, list) else "tuple"
            items = [_encode(v, _join(path, i), arrays, active, pickling) for i, v in enumerate(obj)]
            return {"t": kind, "items": items}
        finally:
            active.discard(id(obj))
    return _encode_pickled(obj, path, arrays, pickling or _Pickling(2))


# ---- whole objects: pickled, their tensors stored as arrays -----------------------------------------
class _Pickler(pickle.Pickler):
    """Pickles an object, putting each tensor, array and dtype it holds beside it (`persistent_id`)."""

    def __init__(self, file, pickling, path, arrays, names):
        super().__init__(file, protocol=pickling.protocol)
        self.path, self.arrays, self.names, self.stored = path, arrays, names, pickling.stored

    def persistent_id(self, obj):
        if isinstance(obj, (Tensor, np.ndarray, np.generic)):
            key = id(obj)
            if key not in self.stored:  # a tensor held twice (tied weights) is stored once, loaded as one
                arr = np.asarray(obj._array if isinstance(obj, Tensor) else obj)
                if _dtype.kind(arr.dtype) not in "biufc":
                    raise TypeError(f"save: cannot store an array of dtype {arr.dtype} in {_where(self.path)}")
                base = self.names.get(key) or _join(self.path, f"tensor{len(self.stored)}")
                name = _unique(base, self.arrays)
                self.arrays[name] = arr
                kind = ("Parameter" if type(obj).__name__ == "Parameter" else "Tensor" if isinstance(obj, Tensor)
                        else "ndarray" if isinstance(obj, np.ndarray) else "scalar")
                rg = bool(obj.requires_grad) if isinstance(obj, Tensor) else False
                self.stored[key] = ("tensor", name, kind, rg, obj)  # (obj: kept alive, so its id stays its own)
            return self.stored[key][:4]
        if isinstance(obj, (np.dtype, _dtype.StoragelessDType)):
            return ("dtype", obj.name)
        if isinstance(obj, _dtype.PublicDType):  # (`x.dtype`, `minitensor.float32`: loads as the same object)
            return ("dtype", obj.name, "minitensor")
        return None


def _tensor_names(obj, path):
    """id -> a readable member name for a module's parameters and buffers: its state-dict names."""
    named = getattr(obj, "named_parameters", None)
    if not callable(named) or not callable(getattr(obj, "named_buffers", None)):
        return {}
    names = {}
    try:
        for n, t in [*obj.named_parameters(remove_duplicate=False), *obj.named_buffers(remove_duplicate=False)]:
            names.setdefault(id(t), _join(path, n))
    except TypeError:  # a state_dict-bearing object of another kind
        return {}
    return names


class _Pickling:
    """What the pickles of one `save` share: the protocol, and the tensors stored so far (id -> its
    reference), so a parameter held by a model and by its optimizer is stored once and loads as one."""

    def __init__(self, protocol):
        self.protocol, self.stored = protocol, {}


def _encode_pickled(obj, path, arrays, pickling):
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickling, path, arrays, _tensor_names(obj, path))
    try:
        pickler.dump(obj)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        raise TypeError(f"save: cannot store the {type(obj).__name__} at {_where(path)}: it can't be pickled "
                        f"({e}); save its state_dict() (tensors, dicts, lists, numbers, strings) instead") from e
    name = _unique(_join(path, "__pickle__") if path else "__pickle__", arrays)
    arrays[name] = np.frombuffer(buf.getvalue(), dtype=np.uint8)
    return {"t": "pickle", "k": name}


def _join(path, key):
    return f"{path}.{key}" if path else str(key)


def _where(path):
    return f"'{path}'" if path else "the top level"


def _unique(name, taken):
    # Dotted names can collide ({'a.b': x} and {'a': {'b': y}}); the metadata says which is which.
    if name not in taken and name != _META:
        return name
    i = 1
    while f"{name}~{i}" in taken:
        i += 1
    return f"{name}~{i}"


def _write_npz(handle, members):
    # One .npy per member through zipfile (as numpy does), so names are not Python keywords of
    # np.savez and nothing is ever pickled.
    with zipfile.ZipFile(handle, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, arr in members:
            with zf.open(name + ".npy", mode="w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(arr), allow_pickle=False)


def _default_mode(path):
    """Keep an existing file's permissions; a new one gets the usual 0o666 minus the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _fsync_folder(folder):
    """Make the rename itself durable; not possible (nor needed) on every platform."""
    flags = getattr(os, "O_DIRECTORY", None)
    if flags is None:
        return
    try:
        fd = os.open(folder, os.O_RDONLY | flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---- load -------------------------------------------------------------------------------------
def load(f: str | os.PathLike[str] | IO[bytes], map_location: object = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Read a checkpoint written by `save` (or any pickle-free `.npz`) back into dicts and Tensors.

    A plain `.npz` without minitensor's metadata loads as a flat dict name -> Tensor. A whole object
    saved by `save(model, f)`, or a raw pickle file, is unpickled: with `weights_only=True` (the
    default, also for None) only allow-listed classes are rebuilt (minitensor's modules and optimizers,
    plain containers, and `get_safe_globals()`), anything else is refused with a `WeightsOnlyError`
    naming it; `weights_only=False` unpickles anything, which can run any code the file holds: only
    for files you trust. `map_location` ('cpu' or None) and `mmap` exist for PyTorch-style calls.
    """
    if map_location not in (None, "cpu") and str(map_location) != "cpu":
        raise RuntimeError(f"load: map_location={map_location!r} is not available; minitensor runs on the CPU only")
    if weights_only is None:
        weights_only = pickle_module is None  # PyTorch's default: an explicit pickle module means the old way
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    where = repr(os.fspath(f)) if not hasattr(f, "read") else repr(f)
    if _is_raw_pickle(f):
        return _unpickle_raw(f, where, bool(weights_only))
    try:
        arrays = _read_npz(f, where)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, zlib.error, struct.error, EOFError, ValueError, OSError, KeyError,
            # zipfile: a flipped bit can ask for an unknown method or a password
            NotImplementedError, RuntimeError) as e:
        raise CheckpointError(f"load: {where} is not a readable checkpoint (truncated or corrupt?): {e}") from e
    except MemoryError as e:  # the size checks make this unlikely; still the file's fault, so said as such
        raise CheckpointError(f"load: {where} asks for more memory than there is: {e}") from e
    if _META not in arrays:
        return {k: Tensor._make(v) for k, v in arrays.items()}
    meta_bytes = arrays.pop(_META)
    try:
        meta = json.loads(meta_bytes.tobytes().decode("utf-8"))
        if meta.get("format") != _FORMAT:
            raise ValueError(f"unknown format {meta.get('format')!r}")
        if meta.get("version") != _VERSION:
            raise ValueError(f"format version {meta.get('version')!r}; this minitensor reads version {_VERSION}")
        _bfloat16_from_bits(arrays, meta.get("bfloat16", []), where)
        used: set[str] = set()
        obj = _decode(meta["root"], arrays, used, _Unpickling(where, bool(weights_only)))
    except RecursionError as e:  # json and _decode both recurse once per level of nesting
        raise CheckpointError(f"load: {where} has metadata nested too deeply to read") from e
    except CheckpointError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise CheckpointError(f"load: {where} has unreadable metadata: {e}") from e
    stray = sorted(set(arrays) - used)
    if stray:
        raise CheckpointError(f"load: {where} has arrays its metadata does not mention: {stray}")
    return obj


def _bfloat16_as_bits(arrays):
    """The .npy format has no bfloat16 (ml_dtypes' is written as raw bytes, which load refuses): such
    arrays are stored as their 16-bit patterns (uint16), their names listed in the metadata."""
    names = [k for k, a in arrays.items() if _dtype.has_bfloat16 and a.dtype == _dtype.bfloat16]
    for k in names:
        arrays[k] = arrays[k].view(np.uint16)
    return names


def _bfloat16_from_bits(arrays, names, where):
    for k in names:
        if not _dtype.has_bfloat16:
            raise CheckpointError(f"load: {where} holds bfloat16 tensors ('{k}'); {_dtype.bfloat16.refusal()}")
        if arrays.get(k) is None or arrays[k].dtype != np.uint16:
            raise CheckpointError(f"load: {where} lists '{k}' as bfloat16 but holds no 16-bit array under it")
        arrays[k] = arrays[k].view(_dtype.bfloat16)


def _read_npz(f, where):
    z = np.load(f, allow_pickle=False)
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise CheckpointError(f"load: {where} is a single .npy array, not an .npz checkpoint")
    with z:
        out = {}
        members = set(z.zip.namelist())
        for name in z.files:
            _check_claimed_size(z.zip, name + ".npy" if name + ".npy" in members else name, name, where)
            arr = z[name]
            if not isinstance(arr, np.ndarray):  # numpy hands back a member not named .npy as raw bytes
                raise CheckpointError(f"load: {where} holds member '{name}', which is not a .npy array")
            if _dtype.kind(arr.dtype) not in "biufc":
                raise CheckpointError(
                    f"load: {where} holds entry '{name}' of dtype {arr.dtype}; only numeric arrays are allowed"
                )
            # a file written on a big-endian machine (or by hand) holds '>f8': the same numbers, read
            # into this machine's order, so a float64 array's dtype is float64 like every other
            out[name] = arr if arr.dtype.isnative else arr.astype(arr.dtype.newbyteorder("="))
        return out


_DEFLATE_RATIO = 1032  # deflate never expands a byte of compressed data into more than about this many


def _check_claimed_size(zf, member, name, where):
    """Refuse a member whose .npy header claims more data than the member holds, before numpy
    allocates it: a forged header of shape (2**40,) would otherwise be a MemoryError, not an error
    naming the file."""
    info = zf.getinfo(member)
    if info.compress_type != zipfile.ZIP_STORED and info.file_size > _DEFLATE_RATIO * info.compress_size + 1024:
        raise CheckpointError(f"load: {where} entry '{name}' claims {info.file_size} bytes from "
                              f"{info.compress_size} compressed ones; the file is corrupt or forged")
    with zf.open(member) as fp:
        if fp.read(6) != b"\x93NUMPY":
            return  # not a .npy: the caller names it
        fp.seek(0)
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(fp)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(fp)
        else:  # (3, 0) only differs in allowing UTF-8 field names; numpy reads it privately
            shape, _, dtype = np.lib.format._read_array_header(fp, version)
        held = info.file_size - fp.tell()
    claimed = math.prod(shape) * dtype.itemsize
    if claimed > held:
        raise CheckpointError(f"load: {where} entry '{name}' claims shape {tuple(shape)} of {dtype} "
                              f"({claimed} bytes) but holds only {held} bytes; the file is corrupt or forged")


def _decode(node, arrays, used, unpickling=None):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if not isinstance(node, dict):
        raise ValueError(f"unexpected metadata node {node!r}")
    kind = node["t"]
    if kind == "tensor":
        name = node["k"]
        if name not in arrays:
            raise ValueError(f"array '{name}' is missing from the file")
        used.add(name)
        return Tensor._make(arrays[name])
    if kind == "dict":
        out = {}
        for k, v in node["items"]:
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                raise ValueError(f"bad dict key {k!r}")
            out[k] = _decode(v, arrays, used, unpickling)
        return out
    if kind == "list":
        return [_decode(v, arrays, used, unpickling) for v in node["items"]]
    if kind == "tuple":
        return tuple(_decode(v, arrays, used, unpickling) for v in node["items"])
    if kind == "pickle" and unpickling is not None:
        name = node["k"]
        if not isinstance(name, str) or name not in arrays or arrays[name].dtype != np.uint8:
            raise ValueError(f"pickled object '{name}' is missing from the file")
        used.add(name)
        return unpickling.run(arrays[name].tobytes(), arrays, used)
    raise ValueError(f"unknown metadata node type {kind!r}")


# ---- unpickling: allow-listed globals only, unless weights_only=False --------------------------------
_safe_globals: list[Any] = []  # what the user allow-listed: objects, or (object, "module.name") pairs

# plain containers a pickled module's attributes may use; calling them builds data, nothing else
_DEFAULT_GLOBALS = {
    "collections.OrderedDict": collections.OrderedDict, "collections.defaultdict": collections.defaultdict,
    "builtins.dict": dict, "builtins.list": list, "builtins.tuple": tuple, "builtins.set": set,
    "builtins.frozenset": frozenset,
    "builtins.complex": complex, "builtins.slice": slice, "builtins.range": range, "builtins.bytearray": bytearray,
}
_OWN_PACKAGES = ("minitensor", "attention")  # the project's packages: their module and optimizer classes


def _global_name(obj):
    return f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', getattr(obj, '__name__', obj))}"


def _check_safe_globals(entries, op):
    if not isinstance(entries, (list, tuple)):
        raise TypeError(f"{op}: expected a list of classes or functions (or (object, 'module.name') pairs), "
                        f"got {type(entries).__name__}")
    for e in entries:
        if isinstance(e, tuple):
            if len(e) != 2 or not isinstance(e[1], str):
                raise TypeError(f"{op}: a pair must be (object, 'module.name'), got {e!r}")
        elif not callable(e):
            raise TypeError(f"{op}: expected classes or functions, got {type(e).__name__} {e!r}")


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow `load(weights_only=True)` to rebuild these classes/functions (e.g. your own Module subclass).

    An entry is the object itself, or `(object, "module.name")` when the file names it otherwise."""
    _check_safe_globals(safe_globals, "add_safe_globals")
    _safe_globals.extend(safe_globals)


def get_safe_globals() -> list[Any]:
    """What the user has allow-listed so far (minitensor's own classes are allowed without being listed)."""
    return list(_safe_globals)


def clear_safe_globals() -> None:
    """Forget every allow-listed global."""
    _safe_globals.clear()


class safe_globals(contextlib.ContextDecorator):
    """`with safe_globals([Net]): model = load(f)`: allow-list these globals inside the block only."""

    def __init__(self, safe_globals: list[Any]) -> None:
        _check_safe_globals(safe_globals, "safe_globals")
        self.safe_globals = list(safe_globals)
        self._before: list[list[Any]] = []

    def __enter__(self) -> None:
        self._before.append(list(_safe_globals))
        _safe_globals.extend(self.safe_globals)

    def __exit__(self, *exc: object) -> None:
        _safe_globals[:] = self._before.pop()


def _allowed_global(module, name):
    """The object `module.name` names, if it may be rebuilt; else None. Never imports anything: a name
    from the file is only looked up in what is imported already, after its string is allowed."""
    full = f"{module}.{name}"
    for entry in _safe_globals:
        obj, given = entry if isinstance(entry, tuple) else (entry, None)
        if full == (given or _global_name(obj)):
            return obj
    if full in _DEFAULT_GLOBALS:
        return _DEFAULT_GLOBALS[full]
    if module.split(".")[0] not in _OWN_PACKAGES or module not in sys.modules:
        return None
    obj = sys.modules[module]
    for part in name.split("."):
        obj = obj.__dict__.get(part) if isinstance(obj, type) or hasattr(obj, "__dict__") else None
        if obj is None:
            return None
    from .nn.module import Module  # (serialization sits below nn: looked up only when a module is loaded)
    from .optim.optimizer import Optimizer
    if isinstance(obj, type) and (issubclass(obj, (Module, Optimizer)) or obj is Size):
        return obj
    if isinstance(obj, _dtype.PublicDType):  # `minitensor.float32` pickled by name, as torch's dtypes are allowed
        return obj
    return None


def _refusal(module, name, where):
    lib = _dtype.shown_as()
    full = f"{module}.{name}"
    return WeightsOnlyError(
        f"load: Weights only load failed for {where}. Re-running `{lib}.load` with `weights_only` set to `False` "
        "will likely succeed, but it can result in arbitrary code execution: do it only if you got the file "
        f"from a trusted source.\n\tWeightsUnpickler error: Unsupported global: GLOBAL {full} was not an allowed "
        f"global by default. Please use `{lib}.serialization.add_safe_globals([{full}])` or the "
        f"`{lib}.serialization.safe_globals([{full}])` context manager to allowlist this global if you trust "
        "this class/function."
    )


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, where, weights_only, arrays=None, used=None, loaded=None):
        super().__init__(file)
        self.where, self.weights_only = where, weights_only
        self.arrays, self.used, self.loaded = arrays, used, {} if loaded is None else loaded

    def find_class(self, module, name):
        if not self.weights_only:
            return super().find_class(module, name)
        # a protocol-2 pickle names builtins by their Python 2 names ('__builtin__.set'): read them as 3's
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        obj = _allowed_global(module, name)
        if obj is None:
            raise _refusal(module, name, self.where)
        return obj

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and len(pid) in (2, 3) and pid[0] == "dtype" and isinstance(pid[1], str):
            # ("dtype", name): a numpy dtype; ("dtype", name, "minitensor"): a minitensor dtype (`x.dtype`)
            if pid[1] == "bfloat16" and not _dtype.has_bfloat16:
                return _dtype.bfloat16  # (the storageless stand-in is both)
            np_dtype = _dtype.bfloat16 if pid[1] == "bfloat16" else _dtype.as_dtype(pid[1])
            return _dtype.public(np_dtype) if pid[2:] == ("minitensor",) else np_dtype
        if not (isinstance(pid, tuple) and len(pid) == 4 and pid[0] == "tensor" and isinstance(pid[1], str)
                and pid[2] in ("Tensor", "Parameter", "ndarray", "scalar") and self.arrays is not None
                and pid[1] in self.arrays):
            raise pickle.UnpicklingError(f"load: {self.where} refers to a tensor this file does not hold: {pid!r}")
        _, name, kind, requires_grad = pid
        if name not in self.loaded:
            arr = self.arrays[name]
            self.used.add(name)
            if kind == "ndarray":
                obj = arr
            elif kind == "scalar":
                obj = arr[()]
            elif kind == "Parameter":
                from .nn.parameter import Parameter
                obj = Parameter(Tensor._make(arr), requires_grad=bool(requires_grad))
            else:
                obj = Tensor._make(arr)
                if requires_grad and _dtype.kind(arr.dtype) in "fc":
                    obj.requires_grad_(True)
            self.loaded[name] = obj
        return self.loaded[name]


class _Unpickling:
    """How the pickles of one file are read: restricted or not, errors naming the file."""

    def __init__(self, where, weights_only):
        self.where, self.weights_only = where, weights_only
        self.loaded = {}  # array name -> the tensor made of it, shared by the file's pickles (as saving shared it)

    def run(self, data, arrays=None, used=None):
        try:
            return _Unpickler(io.BytesIO(data), self.where, self.weights_only, arrays, used, self.loaded).load()
        except CheckpointError:
            raise
        except pickle.UnpicklingError as e:
            raise CheckpointError(f"load: {self.where} holds a pickle that can't be read: {e}") from e
        except (EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError) as e:
            if not self.weights_only:
                raise
            raise CheckpointError(f"load: {self.where} holds a pickle that can't be read: "
                                  f"{type(e).__name__}: {e}") from e


def _is_raw_pickle(f):
    """Whether `f` starts like a pickle (protocol 2 and later open with PROTO, 0x80), not a zip."""
    if hasattr(f, "read"):
        if not hasattr(f, "seek"):
            return False
        pos = f.tell()
        head = f.read(1)
        f.seek(pos)
    else:
        try:
            with open(f, "rb") as handle:
                head = handle.read(1)
        except OSError:
            return False  # (the npz reader says what is wrong)
    return head == b"\x80"


def _unpickle_raw(f, where, weights_only):
    data = f.read() if hasattr(f, "read") else open(f, "rb").read()
    return _Unpickling(where, weights_only).run(data)


__all__ = ["save", "load", "CheckpointError", "WeightsOnlyError", "add_safe_globals", "get_safe_globals",
           "clear_safe_globals", "safe_globals"]

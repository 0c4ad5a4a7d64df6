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
"""
from __future__ import annotations

import json
import math
import os
import re
import stat
import struct
import tempfile
import time
import zipfile
import zlib
from typing import IO, Any

import numpy as np

from .tensor import Tensor

_META = "__minitensor__"
_FORMAT = "minitensor.checkpoint"
_VERSION = 1


class CheckpointError(RuntimeError):
    """A checkpoint file is missing pieces, corrupt, truncated, or not a minitensor/npz checkpoint."""


# ---- save -------------------------------------------------------------------------------------
def save(obj: object, f: str | os.PathLike[str] | IO[bytes]) -> None:
    """Save `obj` (a state dict, or a dict/list/tuple of them with ints, floats, strings) to `f`.

    `f` is a path (written atomically; no suffix is added) or a binary file object. Tensors and
    numpy arrays are stored bit-exactly with their dtype; `load` returns them as Tensors.
    """
    arrays: dict[str, Any] = {}
    root = _encode(obj, "", arrays, set())
    meta = json.dumps({"format": _FORMAT, "version": _VERSION, "root": root}, allow_nan=True)
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


def _encode(obj, path, arrays, active):
    """The JSON node for `obj`; arrays go into `arrays` under a unique dotted name."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return obj
    if isinstance(obj, (Tensor, np.ndarray, np.generic)):
        arr = np.asarray(obj._array if isinstance(obj, Tensor) else obj)
        if arr.dtype.kind not in "biufc":
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
                    items.append([k, _encode(v, _join(path, k), arrays, active)])
                return {"t": "dict", "items": items}
            kind = "list" if isinstance(obj, list) else "tuple"
            return {"t": kind, "items": [_encode(v, _join(path, i), arrays, active) for i, v in enumerate(obj)]}
        finally:
            active.discard(id(obj))
    if callable(getattr(obj, "state_dict", None)):  # a whole Module or Optimizer, as torch.save(model, path) pickles
        raise TypeError(
            f"save: cannot store a whole {type(obj).__name__} at {_where(path)}; save its state_dict() instead, "
            "e.g. save(model.state_dict(), path), and load it back with model.load_state_dict(load(path))"
        )
    raise TypeError(
        f"save: cannot store a {type(obj).__name__} at {_where(path)}; a checkpoint holds tensors, arrays, "
        "dicts, lists, tuples, int, float, str, bool and None"
    )


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
def load(f: str | os.PathLike[str] | IO[bytes], map_location: object = None, weights_only: bool = True) -> Any:
    """Read a checkpoint written by `save` (or any pickle-free `.npz`) back into dicts and Tensors.

    A plain `.npz` without minitensor's metadata loads as a flat dict name -> Tensor.
    `map_location` and `weights_only` exist for PyTorch-style calls; everything loads on the CPU and
    nothing is ever unpickled.
    """
    if map_location not in (None, "cpu") and str(map_location) != "cpu":
        raise RuntimeError(f"load: map_location={map_location!r} is not available; minitensor runs on the CPU only")
    where = repr(os.fspath(f)) if not hasattr(f, "read") else repr(f)
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
        used: set[str] = set()
        obj = _decode(meta["root"], arrays, used)
    except RecursionError as e:  # json and _decode both recurse once per level of nesting
        raise CheckpointError(f"load: {where} has metadata nested too deeply to read") from e
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise CheckpointError(f"load: {where} has unreadable metadata: {e}") from e
    stray = sorted(set(arrays) - used)
    if stray:
        raise CheckpointError(f"load: {where} has arrays its metadata does not mention: {stray}")
    return obj


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
            if arr.dtype.kind not in "biufc":
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


def _decode(node, arrays, used):
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
            out[k] = _decode(v, arrays, used)
        return out
    if kind == "list":
        return [_decode(v, arrays, used) for v in node["items"]]
    if kind == "tuple":
        return tuple(_decode(v, arrays, used) for v in node["items"])
    raise ValueError(f"unknown metadata node type {kind!r}")

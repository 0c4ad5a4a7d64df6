"""State behind `autograd.detect_anomaly()`: find the first op whose forward or backward made NaN/inf.

While enabled, every node remembers the line of user code that created it (the innermost frame
outside the minitensor package), so the error can point at the learner's own line.
"""
import os
import traceback

import numpy as np

enabled = False
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class AnomalyError(RuntimeError):
    """A NaN or inf first appeared in the named op."""


def _user_frame():
    for frame in reversed(traceback.extract_stack()):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR):
            return f'File "{frame.filename}", line {frame.lineno}, in {frame.name}\n    {frame.line}'
    return "<unknown location>"


def remember_origin(node):
    node.origin = _user_frame()


def _bad(arr):
    return arr.dtype.kind == "f" and not np.isfinite(arr).all()


def check_forward(node, out):
    """Raise if `out` holds NaN/inf although none of the op's tensor inputs did."""
    from .tensor import Tensor

    if not _bad(out.data):
        return
    if any(isinstance(a, Tensor) and _bad(a.data) for a in node.inputs or ()):
        return  # not the first: an input was already bad
    kind = "nan" if np.isnan(out.data).any() else "inf"
    raise AnomalyError(
        f"detect_anomaly: forward of '{node.name()}' produced {kind} in its output of shape "
        f"{tuple(out.shape)} from finite inputs. Created at:\n  {_user_frame()}"
    )


def check_backward(node, g, grads):
    """Raise if the VJP of `node` returned NaN/inf from a finite upstream gradient `g`."""
    if _bad(g.data):
        return
    for i, gi in enumerate(grads):
        if gi is not None and _bad(gi.data):
            kind = "nan" if np.isnan(gi.data).any() else "inf"
            raise AnomalyError(
                f"detect_anomaly: backward of '{node.name()}' returned {kind} in the gradient of "
                f"input {i} (shape {tuple(gi.shape)}) from a finite upstream gradient. The op was "
                f"created at:\n  {getattr(node, 'origin', '<unknown location>')}"
            )

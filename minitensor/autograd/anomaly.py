"""State behind `autograd.detect_anomaly()`: find the first op whose forward or backward made NaN/inf.

While enabled:
- every op's output is scanned. An op is blamed only for a NaN it *created* (none of its inputs
  held a NaN) or an inf it created (all its inputs were finite), so a NaN already in the data is
  not reported again at every later op;
- every recorded node remembers the line of user code that created it (the innermost frame
  outside the minitensor package), so a backward error can point at the learner's own line;
- every node's VJP result is scanned, and the node is blamed when the gradient it returns holds
  NaN/inf although the gradient it received and the values it saw in the forward were finite.
  (Inside a backward, the ops that make up the VJP are not checked one by one: the node whose
  backward it is gets the blame, which is the op the user knows about.)
"""
from __future__ import annotations

import linecache
import os
import sys

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from . import grad_mode

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # minitensor/


class AnomalyError(RuntimeError):
    """A NaN or inf first appeared in the named op.

    Attributes: `op` (node name, e.g. 'LogBackward'), `phase` ('forward' or 'backward'),
    `location` (the user's file and line, as text).
    """

    def __init__(self, message: str, op: str | None = None, phase: str | None = None,
                 location: str | None = None) -> None:
        super().__init__(message)
        self.op, self.phase, self.location = op, phase, location


def _user_site():
    """(filename, lineno, function) of the innermost frame outside the minitensor package."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(_PACKAGE_DIR):
            return filename, frame.f_lineno, frame.f_code.co_name
        frame = frame.f_back
    return None


def _format_site(site):
    if site is None:
        return "<unknown location>"
    filename, lineno, name = site
    line = linecache.getline(filename, lineno).strip()
    text = f'File "{filename}", line {lineno}, in {name}'
    return text + (f"\n    {line}" if line else "")


def remember_origin(node):
    # Only the frame's coordinates: reading the source line is left for when an error needs it.
    node.origin = _user_site()


def _floats(x):
    """The float array inside a Tensor, ndarray or number (a VJP may return any of them), else None."""
    arr = x._array if isinstance(x, Tensor) else x
    if isinstance(arr, (float, int, np.generic)):
        arr = np.asarray(arr)
    if isinstance(arr, np.ndarray) and _dtype.kind(arr.dtype) in "fc":
        return arr
    return None


def _has_nan(x):
    arr = _floats(x)
    return arr is not None and bool(np.isnan(arr).any())


def _has_nonfinite(x):
    arr = _floats(x)
    return arr is not None and not bool(np.isfinite(arr).all())


def _args(node):
    return [a for a in (node.inputs or ()) if _floats(a) is not None]


def _op(node):
    name = node.name()
    return name[: -len("Backward")] if name.endswith("Backward") else name


def _first_bad(arr):
    idx = np.argwhere(~np.isfinite(arr))
    return tuple(int(i) for i in idx[0]) if idx.size else ()


def _where(node, out):
    """' at index (i, j), where input 0 = -1' when the inputs line up with the output elementwise."""
    idx = _first_bad(out)
    parts = []
    for k, a in enumerate(node.inputs or ()):
        arr = _floats(a)
        if arr is None:
            continue
        if arr.ndim == 0:
            parts.append(f"input {k} = {arr.item():.6g}")
        elif arr.shape == out.shape:
            parts.append(f"input {k} = {arr[idx]:.6g}")
    at = f" (first at index {idx}" if out.ndim else " ("
    if parts:
        at += (", where " if out.ndim else "where ") + ", ".join(parts)
    return at + ")" if (out.ndim or parts) else ""


def check_forward(node, out):
    """Raise if the op created a NaN (no input had one) or an inf (every input was finite)."""
    data = out._array
    if _dtype.kind(data.dtype) != "f" or np.isfinite(data).all():
        return
    args = _args(node)
    new_nan = np.isnan(data).any() and not any(_has_nan(a) for a in args)
    new_inf = np.isinf(data).any() and not any(_has_nonfinite(a) for a in args)
    if not (new_nan or new_inf):
        return  # not the first op: the NaN/inf came in with an input
    if grad_mode.modes.in_backward:
        return  # part of some node's VJP: check_backward blames that node instead
    kind = "nan" if new_nan else "inf"
    site = _user_site()
    raise AnomalyError(
        f"detect_anomaly: op '{_op(node)}' ({node.name()}) produced {kind} in the forward pass, in its "
        f"output of shape {tuple(out.shape)}{_where(node, data)}, although its inputs had none.\n"
        f"Created at:\n  {_format_site(site)}",
        op=node.name(), phase="forward", location=_format_site(site),
    )


def check_backward(node, g, grads):
    """Raise if the VJP of `node` returned NaN/inf from a finite upstream gradient and finite forward values."""
    if _has_nonfinite(g):
        return  # an earlier node's problem (reported there if it was created under detect_anomaly)
    bad = [(i, gi) for i, gi in enumerate(grads) if gi is not None and _has_nonfinite(gi)]
    if not bad:
        return
    out = node._out() if hasattr(node, "_out") else None
    if any(_has_nonfinite(a) for a in _args(node)) or (out is not None and _has_nonfinite(out)):
        return  # the forward values were already NaN/inf: the gradient inherits them, nothing new
    i, gi = bad[0]
    arr = _floats(gi)
    kind = "nan" if np.isnan(arr).any() else "inf"
    idx = _first_bad(arr)
    inp = _floats(node.inputs[i]) if node.inputs is not None else None
    value = f", where the input is {inp[idx]:.6g}" if inp is not None and inp.shape == arr.shape else ""
    origin = getattr(node, "origin", None)
    where = _format_site(origin) if origin is not None else (
        "<unknown: the graph was built outside detect_anomaly(); build it inside to see the line>")
    raise AnomalyError(
        f"detect_anomaly: backward of op '{_op(node)}' ({node.name()}) returned {kind} in the gradient of "
        f"its input {i} (shape {tuple(arr.shape)}, first at index {idx}{value}) from a finite upstream "
        f"gradient and finite forward values.\nThe op was created at:\n  {where}",
        op=node.name(), phase="backward", location=where,
    )

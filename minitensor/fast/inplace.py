"""In-place arithmetic written straight into the tensor's memory, when nothing records it (the speed layer).

`ops/inplace.py` computes an in-place op with the ordinary op (`x + y`: its wrapper, `Function.apply`,
a fresh array) and copies the result into x. An optimizer step written by hand (`p.data += -lr * p.grad`,
a learner's loop) does that for every parameter at every step, recording nothing. For the common case
(x float32 or float64; y a tensor of x's dtype and shape, or a Python number) numpy's own ufunc with
`out=x` computes the same numbers: elementwise arithmetic rounds each element once, wherever it is
written, and numpy buffers an operand that overlaps x. tests/minitensor/fast/test_inplace.py proves
it equal to the plain path, values and version counters, bit for bit.
"""
import numpy as np

from .._fperr import quiet
from ..autograd import grad_mode
from ..ops.conversion import _in_one_dtype  # (the ops' own test: no promotion needed)
from ..tensor import Tensor
from .elementary import _PLAIN  # (the dtypes the twins compute in)

# inf and NaN silently, as the ops' own forwards make them (a ufunc's third argument is its `out`)
_add, _subtract, _multiply = (quiet(ufunc, "over", "invalid") for ufunc in (np.add, np.subtract, np.multiply))
_UFUNCS = {"__iadd__": _add, "add_": _add, "__isub__": _subtract, "sub_": _subtract,
           "__imul__": _multiply, "mul_": _multiply}


def arithmetic_in_place(self, op, args, kwargs):
    """`op` (`+=`, `add_`, `-=`, `sub_`, `*=`, `mul_`) done into self's array; False (nothing done) outside
    the common case, which the plain path then computes."""
    ufunc = _UFUNCS.get(op)
    if ufunc is None or kwargs or len(args) != 1 or grad_mode.modes.recorder is not None:
        return False  # (a Replay recording the step must see the op's node)
    x, other = self._array, args[0]
    if x.dtype not in _PLAIN or not _in_one_dtype(self, other):  # other: a tensor of x's dtype, or a number
        return False
    if isinstance(other, Tensor) and other._array.shape != x.shape:
        return False  # (broadcasting into x: the plain path's)
    ufunc(x, other._array if isinstance(other, Tensor) else other, x)
    self._bump_version()
    return True

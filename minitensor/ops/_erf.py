"""A vectorised erf for numpy (which has none), accurate to ~1e-14 in float64.

`math.erf` is exact but scalar; calling it per element would make GELU the slowest op of a
transformer. Instead, erf is tabulated once with `math.erf` on [0, 6] and read back by cubic Hermite
interpolation, which uses the exact derivative erf'(x) = 2/sqrt(pi) exp(-x^2) at both ends of each
interval. Its error is at most h^4/384 * max|erf''''| ≈ 1e-14 for h = 1/1024. Beyond 6,
erf(x) = 1 to double precision (erfc(6) ≈ 2e-17).
"""
import math

import numpy as np

_H = 1.0 / 1024
_X = np.arange(0, 6 + _H, _H)
_F = np.array([math.erf(x) for x in _X])
_D = 2.0 / math.sqrt(math.pi) * np.exp(-_X * _X) * _H  # slope per unit of t
# The Hermite cubic on each interval, expanded in t in [0, 1]: c0 + c1 t + c2 t^2 + c3 t^3.
_C0, _C1 = _F[:-1], _D[:-1]
_C2 = 3 * (_F[1:] - _F[:-1]) - 2 * _D[:-1] - _D[1:]
_C3 = 2 * (_F[:-1] - _F[1:]) + _D[:-1] + _D[1:]
_LAST = len(_X) - 2


def erf(x):
    """erf of an ndarray, in its dtype."""
    s = np.abs(x.astype(np.float64, copy=False)) * (1 / _H)
    # clamped before the cast: inf, NaN and |x| past ~1e16 have no intp value (fmin drops NaN)
    i = np.fmin(s, _LAST).astype(np.intp)
    t = np.minimum(s - i, 1.0)  # past 6 this clamps to erf(6), which is 1 in double precision; NaN stays NaN
    # Horner's rule in place; np.take is several times faster than fancy indexing here
    y = np.take(_C3, i)
    y *= t
    y += np.take(_C2, i)
    y *= t
    y += np.take(_C1, i)
    y *= t
    y += np.take(_C0, i)
    return np.copysign(y, x).astype(x.dtype, copy=False)

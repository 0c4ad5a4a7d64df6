r"""`torch.nn.utils.parametrizations`: orthogonal, weight-normalised and spectrally normalised weights, each a
parametrization (`parametrize.register_parametrization`): the weight is recomputed from `original` on every read.

orthogonal:     Q with orthonormal columns (or rows, for a wide matrix), from an unconstrained `original`:
                "matrix_exp"  Q = exp(A),                      A = L - L^H skew-symmetric, L = tril(original)
                "cayley"      Q = (I - A/2)^{-1} (I + A/2),    the same A
                "householder" Q = H_1 H_2 ... H_k,             H_i = I - tau_i v_i v_i^H, v_i the columns of
                              tril(original, -1) with a unit diagonal, tau_i = 2 / ||v_i||^2, each column's sign
                              set by original's diagonal
                With use_trivialization=True (the default) Q = base @ Q(original): assigning a weight stores it
                in the buffer `base` and sets `original` to the point where Q(original) = I.
weight_norm:    weight = g * v / ||v||, the norm over every dim but `dim` (`original0` = g, `original1` = v).
spectral_norm:  weight = W / sigma(W), sigma the largest singular value of W (dim `dim` as its rows), estimated by
                power iteration on the buffers _u, _v (one step a read in training mode, none in eval mode).
"""
from __future__ import annotations

from enum import Enum, auto
from typing import Any, TypeVar

from ... import _dtype
from ...autograd.grad_mode import no_grad
from ...autograd.torch_names import shown_as
from ...factories import eye, randn, zeros_like
from ...ops.compare import allclose
from ...ops.decompositions import matrix_exp, solve
from ...ops.factorizations import householder_product
from ...ops.householder import geqrf
from ...ops.indexing import where
from ...ops.linalg import mv, vdot
from ...ops.shape import cat
from ...tensor import Tensor
from .. import functional as F
from ..conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..module import Module
from . import parametrize
from ._reparam import _norm_except_dim, weight_as_matrix

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

_M = TypeVar("_M", bound=Module)


# ---- orthogonal ----------------------------------------------------------------------------------------------

def _is_orthogonal(Q: Tensor) -> bool:
    """Q^H Q = I to within 10 n eps (columns orthonormal)."""
    n, k = Q.shape[-2], Q.shape[-1]
    return allclose(Q.mH @ Q, eye(k, dtype=Q.dtype), atol=10.0 * n * _dtype.finfo(Q.dtype).eps)


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A = QR for a tall A, with R's diagonal made non-negative (so Q is unique)."""
    X, tau = geqrf(A)
    Q = householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """The orthogonal map of `orthogonal` (module docstring); `base` is the trivialization's buffer."""

    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k  # a wide matrix: made as its tall transpose, with orthonormal columns
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:  # the n x n skew-symmetric A from an n x k X: the missing columns are zero
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                Id = eye(n, dtype=A.dtype)
                Q = solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)  # (as PyTorch: the diagonal's integer part)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        """An `original` whose image is Q. With the trivialization: base becomes Q (made orthogonal by QR
        when it is not) and original the point mapped to I. Without it (householder only): geqrf's
        reflectors, their diagonal the signs that give Q's columns back."""
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if tuple(Q.shape) != tuple(self.shape):
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            A, tau = geqrf(Q)
            signs = A.diagonal(dim1=-2, dim2=-1).sign()
            signs = where(tau == 0.0, -signs, signs)  # a reflector that is the identity keeps its column's sign
            on_diagonal = eye(n, k, dtype=_dtype.as_dtype("bool"))
            A = where(on_diagonal, signs.unsqueeze(-2), A)
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:  # completed to a square matrix by random columns, then orthogonalised
            N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        return zeros_like(Q_init) - eye(Q_init.shape[-2], Q_init.shape[-1], dtype=Q_init.dtype)


def orthogonal(module: _M, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> _M:
    """Make `module.<name>` (a matrix or a batch of them) orthogonal: orthonormal columns when it is tall or
    square, orthonormal rows when it is wide. orthogonal_map: "matrix_exp", "cayley" or "householder";
    the default is "matrix_exp" for a square or complex matrix and "householder" otherwise.

    The weight starts as it was when that is orthogonal, else as the Q of its QR decomposition (with
    use_trivialization=True, or with "householder"). A tall or wide matrix is completed by random
    columns drawn from minitensor's generator, so those values differ from PyTorch's for one seed.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None) if isinstance(orthogonal_map, str) else None
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# ---- weight_norm ---------------------------------------------------------------------------------------------

def _norm_except(v: Tensor, dim: int) -> Tensor:
    """PyTorch's norm_except_dim(v, 2, dim): -1 is the norm of the whole tensor (0-d); another dim keeps
    that dim's size and makes the others 1."""
    if dim == -1:
        return _norm_except_dim(v, None)
    return _norm_except_dim(v, dim + v.ndim if dim < 0 else dim)


class _WeightNorm(Module):
    """weight = g * v / ||v|| (the norm over every dim but `dim`; over the whole tensor for dim -1 or None)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        out = weight_v * (weight_g / _norm_except(weight_v, self.dim))
        if self.dim in (0, weight_v.ndim - 1):  # PyTorch's one fused node for the first or last dim
            shown_as(out, "WeightNormInterfaceBackward0")
        return out

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except(weight, self.dim), weight


def weight_norm(module: _M, name: str = "weight", dim: int = 0) -> _M:
    """Split `module.<name>` into a magnitude g (`parametrizations.<name>.original0`, the norms) and a
    direction v (`original1`, the weight as it was): weight = g v / ||v||, the norm taken over every dim
    but `dim` (dim=None: one norm over the whole tensor; so is dim=-1, as in PyTorch).

    A state dict saved with the older `nn.utils.weight_norm` (keys `<name>_g`, `<name>_v`) still loads."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def load_old_keys(mod: Module, state_dict: dict[str, Any], prefix: str, *args: Any) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module.register_load_state_dict_pre_hook(load_old_keys)
    return module


# ---- spectral_norm -------------------------------------------------------------------------------------------

class _SpectralNorm(Module):
    """weight / sigma, sigma = u . (W v) with u, v the power iteration's buffers (a 1-D weight: weight / ||weight||).

    At registration u and v start from normal draws and take 15 power steps, so they are close to the top
    singular vectors; after that each read in training mode takes `n_power_iterations` more steps."""

    _u: Tensor
    _v: Tensor
    n_power_iterations: int

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = weight_as_matrix(weight, self.dim)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        """u <- normalize(W v), v <- normalize(W^H u), written into the buffers (no graph)."""
        with no_grad():
            for _ in range(n_power_iterations):
                F.normalize(mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                F.normalize(mv(weight_mat.mH, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = weight_as_matrix(weight, self.dim)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # copies: the next power step must not change this graph's u, v
        sigma = vdot(u, mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value  # any weight is its own preimage (W / sigma(W) is W up to the scale)


def spectral_norm(module: _M, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> _M:
    """Divide `module.<name>` by its spectral norm (its largest singular value, the weight seen as a matrix
    with dim `dim` as rows), estimated by power iteration: the buffers `parametrizations.<name>.0._u`
    and `_v` take n_power_iterations steps at each read in training mode. dim defaults to 0, or 1 for
    ConvTranspose layers (their output channels). The start vectors are drawn from minitensor's generator,
    so sigma's estimate differs from PyTorch's for one seed (both approach the same value)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module

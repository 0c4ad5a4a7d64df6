"""minitensor.linalg: torch.linalg's real, dense functions (`import minitensor.linalg as LA`).

Each name is a function of minitensor's ops: the decompositions with their own VJPs live in
`minitensor/ops/decompositions.py`, the composites built from them in `minitensor/ops/matrix.py`.
`householder_product`, `lu_factor_ex` and the LDL^T family (`ldl_factor`, `ldl_factor_ex`, `ldl_solve`)
are in `minitensor/ops/factorizations.py`. Not here: `eig` and `eigvals` (a real non-symmetric matrix has
complex eigenvalues in general, and minitensor has no complex dtype).
"""
from .ops.decompositions import (  # noqa: F401
    LinAlgError,
    cholesky,
    det,
    eigh,
    eigvalsh,
    inv,
    lu_factor,
    matrix_exp,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
)
from .ops.factorizations import (  # noqa: F401  (issue 29)
    householder_product,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    lu_factor_ex,
)
from .ops.linalg import matmul, multi_dot  # noqa: F401
from .ops.matrix import (  # noqa: F401
    cholesky_ex,
    cond,
    cross,
    diagonal,
    inv_ex,
    lstsq,
    lu,
    lu_solve,
    matrix_norm,
    matrix_power,
    matrix_rank,
    norm,
    pinv,
    solve_ex,
    solve_triangular,
    tensorinv,
    tensorsolve,
    vander,
    vecdot,
    vector_norm,
)

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "inv_ex",
    "lstsq", "lu", "lu_factor", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank",
    "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals",
    "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm",
    "householder_product", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lu_factor_ex",  # (issue 29)
]

# ---- issue 29 (h-sig29): PyTorch's `out=` on torch.linalg's functions (scripts/api_signatures.py checks it) ----
from .ops.table import with_out as _with_out  # noqa: E402

_WITH_OUT = [
    "cholesky", "cholesky_ex", "cond", "cross", "det", "eigh", "eigvalsh", "householder_product", "inv", "inv_ex",
    "lu_factor",
    "ldl_factor", "ldl_factor_ex", "ldl_solve", "lu", "lu_factor_ex", "lu_solve", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
    "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vecdot", "vector_norm",
]
globals().update({_name: _with_out(f"linalg.{_name}", globals()[_name]) for _name in _WITH_OUT})

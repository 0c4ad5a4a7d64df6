r"""Matrix multiplication with numpy's semantics: 1-D vectors, batches, broadcast batch dims."""
from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np

from .. import _dtype
from .._fperr import quietly
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..autograd.torch_names import shown_as
from ..tensor import Tensor
from ._util import no_bool, operand, raw, unbroadcast


class Matmul(Function):
    r"""out = a @ b:  out[..., i, j] = \sum_k a[..., i, k] b[..., k, j]
    VJP: ga = unbroadcast(g @ b^T, a.shape);  gb = unbroadcast(a^T @ g, b.shape)
    (a 1-D `a` is a row (1, k) and a 1-D `b` a column (k, 1) for the formulas; the dims are removed after)"""


    @staticmethod
    @quietly("over", "invalid")  # inf * 0 and overflow in the sums: NaN and inf, silently as in PyTorch
    def forward(ctx, a, b):
        x, y = np.asarray(raw(a)), np.asarray(raw(b))  # `x @ 2.0` reaches here with a number
        out = np.matmul(x, y)
        return out if type(out) is np.ndarray else np.asarray(out)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        a2 = a.unsqueeze(0) if a.ndim == 1 else a  # (..., n, k)
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b  # (..., k, m)
        g2 = g.unsqueeze(-1) if b.ndim == 1 else g
        g2 = g2.unsqueeze(-2) if a.ndim == 1 else g2  # (..., n, m)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = unbroadcast(g2 @ b2.mT, a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            if b.ndim == 2 and a.ndim > 2:  # a weight shared by every row: sum over rows inside one GEMM
                rows = math.prod(a.shape[:-1])  # written out: a -1 can't be inferred when a dim is 0
                gb = a.reshape(rows, a.shape[-1]).mT @ g.reshape(rows, g.shape[-1])
            else:
                gb = unbroadcast(a2.mT @ g2, b2.shape).reshape(b.shape)
        return ga, gb


class Einsum(Function):
    r"""Two operands contracted as one (batched) matrix product, for an equation "A,B->O" where each
    letter of A is in B or O, and each letter of B in A or O (`einsum` sums the other letters first):

    forward: out[O] = \sum_{letters of A and B not in O} a[A] b[B]
             = (a as (batch, kept of A, contracted)) @ (b as (batch, contracted, kept of B)), put in O's order
    VJP:     ga = einsum("O,B->A", g, b);   gb = einsum("A,O->B", a, g)
             (both again equations of this kind, so each VJP is one more Einsum node)

    The letters' roles, the transposes and the matrix shapes are worked out once per equation and
    shapes by `pair_plan`, which `ctx.inputs` carries as forward's third argument."""

    @staticmethod
    @quietly("over", "invalid")  # inf * 0 and overflow in the sums: NaN and inf, silently as in PyTorch
    def forward(ctx, a, b, plan):
        x = a._array.transpose(plan.a_order).reshape(plan.a_matrix)
        y = b._array.transpose(plan.b_order).reshape(plan.b_matrix)
        return np.matmul(x, y).reshape(plan.out_blocks).transpose(plan.out_order)

    @staticmethod
    def backward(ctx, g):
        a, b, plan = ctx.inputs
        ga = Einsum.apply(g, b, plan.grad_a()) if ctx.needs_input_grad[0] else None
        gb = Einsum.apply(a, g, plan.grad_b()) if ctx.needs_input_grad[1] else None
        return ga, gb, None


# ---- the public functions -----------------------------------------------------------------------

@with_formulas(Matmul)
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with numpy's rules for 1-D and batched inputs."""
    input, other = operand(input, "matmul"), operand(other, "matmul")
    check_matmul(input, other)
    return Matmul.apply(input, other)


@with_formulas(Matmul)
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Product of two 2-D matrices."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expects two 2-D tensors, got shapes {tuple(input.shape)} and {tuple(mat2.shape)}")
    return matmul(input, mat2)


@with_formulas(Matmul)
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched product of (B, n, k) and (B, k, m)."""
    if input.ndim != 3 or mat2.ndim != 3 or input.shape[0] != mat2.shape[0]:
        raise RuntimeError("bmm: expects (B, n, k) and (B, k, m), got shapes "
                           f"{tuple(input.shape)} and {tuple(mat2.shape)}")
    return shown_as(matmul(input, mat2), "BmmBackward0")


@with_formulas(Matmul)
def dot(input: Tensor, tensor: Tensor) -> Tensor:
    r"""The inner product of two 1-D tensors: \sum_i a_i b_i."""
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"dot: expects two 1-D tensors, got shapes {tuple(input.shape)} and {tuple(tensor.shape)}")
    return matmul(input, tensor)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    r"""The outer product of two 1-D tensors, by broadcasting (a Reshape node, then a Mul):

    forward: out[i, j] = a_i b_j
    VJP:     ga_i = \sum_j g[i, j] b_j;  gb_j = \sum_i g[i, j] a_i
    """
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: expects two 1-D tensors, got shapes {tuple(input.shape)} and {tuple(vec2.shape)}")
    return input.unsqueeze(-1) * vec2


def einsum(equation: str, *operands: Any) -> Tensor:
    r"""Sums of products named by letters: "bhqd,bhkd->bhqk" is out[b,h,q,k] = \sum_d x[b,h,q,d] y[b,h,k,d].
    A letter repeated in one operand reads its diagonal; `...` stands for the dims no letter names,
    broadcast together and kept in front of the output (summed if the output has no `...`).

    forward: out[kept letters] = \sum_{summed letters} \prod_k x_k[its letters]
    VJP:     g_k = \sum over the letters x_k lacks of g * \prod_{m != k} x_m

    Two or more floating operands of one dtype whose letters have one size each are contracted two
    at a time, left to right, each pair as one matrix product (an `Einsum` node, whose VJPs are
    einsums again); otherwise (one operand, integers, a letter of size 1 broadcasting) the operands
    are multiplied by broadcasting and summed (Mul and Sum nodes). `_by_matrix_products` chooses.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, output = _parse(equation, operands)
    xs = [_diagonal(op, term, equation) for term, op in zip(terms, operands)]
    sizes: dict[str, set[int]] = {}
    for x, term in xs:  # a letter's sizes match, or are 1 (broadcast)
        for c, n in zip(term, x.shape):
            known = sizes.setdefault(c, set())
            if n != 1 and known - {1, n}:
                raise RuntimeError(f"einsum: subscript {c!r} of {equation!r} has size {n} in one operand and "
                                   f"{max(known - {1})} in another (shapes {[tuple(op.shape) for op in operands]})")
            known.add(n)
    if _by_matrix_products(xs, sizes):
        return _contract_in_pairs(xs, output)
    return _product_and_sum(xs, output)


def _contract_in_pairs(xs, output):
    """einsum's matrix-product path: the first operand with the second, that result with the third,
    ...; before each pair, a letter that only one of the two has and nothing later needs is summed
    away (then every letter of each is in the other or in the pair's result, as `Einsum` wants)."""
    x, tx = xs[0]
    for k in range(1, len(xs)):
        y, ty = xs[k]
        wanted = output + "".join(t for _, t in xs[k + 1:])  # the letters the rest of the equation reads
        x, tx = _sum_letters(x, tx, keep=ty + wanted)
        y, ty = _sum_letters(y, ty, keep=tx + wanted)
        if k == len(xs) - 1:
            to = output
        else:
            to = "".join(c for c in dict.fromkeys(tx + ty) if c in wanted)
        x, tx = Einsum.apply(x, y, pair_plan(tx, ty, to, x._array.shape, y._array.shape)), to
    return x


def _product_and_sum(xs, output):
    """einsum by broadcasting: each operand's dims put in one order of all the letters (size 1 where it
    lacks one), the operands multiplied, and the letters not in the output summed."""
    seen = "".join(term for _, term in xs)
    letters = list(dict.fromkeys(seen + output))
    result: Any = None
    for x, term in xs:  # each operand with its dims in the order of `letters`, size 1 for the letters it lacks
        order = sorted(range(len(term)), key=lambda i: letters.index(term[i]))
        x = x.permute([*order]) if order else x
        present = [term[i] for i in order]
        x = x.reshape([x.shape[present.index(c)] if c in present else 1 for c in letters])
        result = x if result is None else result * x
    summed = tuple(i for i, c in enumerate(letters) if c not in output)
    if summed:
        result = _summed_in_dtype(result, summed, len(xs))
    kept = [c for c in letters if c in output]
    return result.permute([kept.index(c) for c in output]) if len(output) > 1 else result


# ---- edge cases and argument checks, named ------------------------------------------------------

def _parse(equation, operands):
    """einsum's equation as one term per operand and the output term, `...` replaced by letters no
    equation uses (aligned on the right, so that they broadcast); the implicit output ("ij,jk") is
    the `...` dims, then the letters seen once, in alphabetical order."""
    inputs, arrow, output = equation.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(f"einsum: equation {equation!r} names {len(terms)} operands, got {len(operands)}")
    for term, op in zip(terms, operands):
        named = len(term.replace("...", ""))
        if op.ndim < named or ("..." not in term and op.ndim != named):
            raise RuntimeError(f"einsum: term {term!r} of {equation!r} does not fit an operand "
                               f"of shape {tuple(op.shape)}")
    width = max((op.ndim - len(t.replace("...", "")) for t, op in zip(terms, operands) if "..." in t), default=0)
    dots = "".join(chr(0x3B1 + i) for i in range(width))
    terms = [t.replace("...", dots[width - (op.ndim - len(t) + 3):]) for t, op in zip(terms, operands)]
    seen = "".join(terms)
    if arrow:
        output = output.replace("...", dots)
    else:
        output = dots + "".join(c for c in sorted(set(seen) - set(dots)) if seen.count(c) == 1)
    for c in output:
        if output.count(c) > 1 or c not in seen:
            raise RuntimeError(f"einsum: output subscript {c!r} of {equation!r} appears more than once in the "
                               "output, or in no operand")
    return terms, output


def _by_matrix_products(xs, sizes):
    """Whether einsum contracts by matrix products: two operands or more, of one float dtype that BLAS
    multiplies (float32, float64), each letter one size everywhere. Integers keep the product-and-sum
    path (its sum in their dtype is PyTorch's), and so does a letter of size 1 against a longer one."""
    dtypes = {x._array.dtype for x, _ in xs}
    return (len(xs) >= 2 and len(dtypes) == 1 and dtypes <= {np.dtype(np.float32), np.dtype(np.float64)}
            and all(len(n) == 1 for n in sizes.values()))


def _sum_letters(x, term, keep):
    """(x, term) with the letters of `term` not in `keep` summed away."""
    dims = tuple(i for i, c in enumerate(term) if c not in keep)
    if not dims:
        return x, term
    return x.sum(dim=dims), "".join(c for c in term if c in keep)


class PairPlan(NamedTuple):
    """How `Einsum` computes "A,B->O" (`terms`) on operands of `shapes` (a, b, out): a is transposed by
    `a_order` and reshaped to `a_matrix` (batch dims, rows, contracted), b by `b_order` to `b_matrix`
    (batch dims, contracted, columns); their product, reshaped to `out_blocks` (batch letters, A's
    kept letters, B's kept letters), is transposed by `out_order` into O's order."""
    terms: tuple[str, str, str]
    shapes: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    a_order: tuple[int, ...]
    a_matrix: tuple[int, ...]
    b_order: tuple[int, ...]
    b_matrix: tuple[int, ...]
    out_blocks: tuple[int, ...]
    out_order: tuple[int, ...]

    def grad_a(self) -> PairPlan:
        """The plan of a's VJP, "O,B->A"."""
        (ta, tb, to), (_, sb, so) = self.terms, self.shapes
        return pair_plan(to, tb, ta, so, sb)

    def grad_b(self) -> PairPlan:
        """The plan of b's VJP, "A,O->B"."""
        (ta, tb, to), (sa, _, so) = self.terms, self.shapes
        return pair_plan(ta, to, tb, sa, so)


@functools.lru_cache(maxsize=1024)
def pair_plan(ta: str, tb: str, to: str, shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> PairPlan:
    """The matrix product that computes einsum("ta,tb->to"): a letter in both operands and in the
    output is a batch dim (matmul loops over it), one in both but not the output is contracted (the
    inner dim of the product), one in a single operand is a row of A's matrix or a column of B's.
    Worked out once per equation and shapes (a training step asks again every step)."""
    size = {**dict(zip(ta, shape_a)), **dict(zip(tb, shape_b))}

    def sizes(letters):
        return tuple(size[c] for c in letters)

    batch = [c for c in ta if c in tb and c in to]
    inner = [c for c in ta if c in tb and c not in to]
    rows = [c for c in ta if c not in tb]
    cols = [c for c in tb if c not in ta]
    blocks = batch + rows + cols
    return PairPlan(
        terms=(ta, tb, to), shapes=(shape_a, shape_b, sizes(to)),
        a_order=tuple(ta.index(c) for c in batch + rows + inner),
        a_matrix=(*sizes(batch), math.prod(sizes(rows)), math.prod(sizes(inner))),
        b_order=tuple(tb.index(c) for c in batch + inner + cols),
        b_matrix=(*sizes(batch), math.prod(sizes(inner)), math.prod(sizes(cols))),
        out_blocks=sizes(blocks), out_order=tuple(blocks.index(c) for c in to))


def _summed_in_dtype(product, dims, n_operands):
    """einsum's sum over the contracted letters. PyTorch contracts two or more integer operands as a
    batched matmul in their own dtype (int32 stays int32, an int8 wraps), while one operand alone is
    just summed, which gives int64 as `sum` does."""
    out = product.sum(dim=dims)
    if n_operands > 1 and product._array.dtype.kind in "iu":
        return out.to(product.dtype)
    return out


def _diagonal(x: Tensor, term: str, equation: str) -> tuple[Tensor, str]:
    """(x, term) with each letter that `term` repeats read once, along the diagonal: "ii" of a
    matrix is x[r, r] for r = 0, 1, ... (an Index node), and the term becomes "i"."""
    unique = "".join(dict.fromkeys(term))
    if unique == term:
        return x, term
    key = []
    for c, n in zip(term, x.shape):
        first = x.shape[term.index(c)]
        if n != first:
            raise RuntimeError(f"einsum: subscript {c!r} is repeated in term {term!r} of {equation!r} but the sizes "
                               f"differ, {first} != {n}")
        # an arange along the letter's own dim of the result; the repeats index with the same one
        key.append(np.arange(n).reshape([-1 if u == c else 1 for u in unique]))
    return x[tuple(key)], unique


def check_matmul(a: Any, b: Any) -> None:
    """matmul's argument checks on its two operands (tensors, or a number that fails the first)."""
    _check_operands(np.asarray(raw(a)), np.asarray(raw(b)))


def _check_operands(x, y):
    """PyTorch's rules for matmul's two arrays: at least 1-d each, one dtype (no promotion), not bool,
    and shapes that multiply (inner sizes equal, batch dims broadcasting)."""
    if x.ndim == 0 or y.ndim == 0:
        raise RuntimeError(f"matmul: both arguments need at least 1 dimension, got shapes {x.shape} and {y.shape}")
    if x.dtype != y.dtype:  # PyTorch promotes nothing here: a float32 @ float64 is usually a bug
        raise RuntimeError(f"matmul: expected both arguments to have the same dtype, got {x.dtype} and "
                           f"{y.dtype} (shapes {x.shape} and {y.shape}); convert one with .to(dtype)")
    if x.dtype == np.bool_:
        raise NotImplementedError("matmul: not implemented for bool tensors (convert them with .long() or .float())")
    k_a = x.shape[-1]
    k_b = y.shape[0] if y.ndim == 1 else y.shape[-2]
    if k_a != k_b or not _batch_dims_broadcast(x.shape[:-2], y.shape[:-2]):
        why = f"{k_a} != {k_b}" if k_a != k_b else "batch dims do not broadcast"
        raise RuntimeError(f"matmul: shapes {tuple(x.shape)} and {tuple(y.shape)} cannot be multiplied ({why})")


def _batch_dims_broadcast(a, b):
    """Whether two shapes broadcast together (numpy's rule, written out: it runs on every matmul)."""
    return all(m == n or m == 1 or n == 1 for m, n in zip(reversed(a), reversed(b)))


# ---- BLAS-like products, composed from matmul, mul and add (their VJPs are those ops') -----------
# PyTorch's out = beta * input + alpha * (product); with beta = 0 the input is not read at all (a NaN or
# inf in it does not reach the result), and a factor of 1 is not multiplied in.

def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
    r"""beta * input + alpha * (mat1 @ mat2), mat1 (n, k), mat2 (k, m), input broadcasting to (n, m).

    forward: beta * input + alpha * (m1 @ m2)
    VJP:     g_input = unbroadcast(beta g);  g_m1 = alpha g m2^T;  g_m2 = alpha m1^T g
    """
    _check_ndim("addmm", (mat1, 2, "mat1"), (mat2, 2, "mat2"))
    _same_dtypes("addmm", input, mat1, mat2)
    return _scaled_sum("addmm", input, matmul(mat1, mat2), beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
    r"""beta * input + alpha * (mat @ vec), mat (n, m), vec (m,).

    forward: beta * input + alpha * (M @ v)
    VJP:     g_input = unbroadcast(beta g);  g_M = alpha g v^T;  g_v = alpha M^T g
    """
    _check_ndim("addmv", (mat, 2, "mat"), (vec, 1, "vec"))
    _same_dtypes("addmv", input, mat, vec)
    return _scaled_sum("addmv", input, matmul(mat, vec), beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
    r"""beta * input + alpha * \sum_b batch1[b] @ batch2[b].

    forward: beta * input + alpha * \sum_b B1[b] @ B2[b]
    VJP:     g_input = unbroadcast(beta g);  g_B1[b] = alpha g B2[b]^T;  g_B2[b] = alpha B1[b]^T g
    """
    _check_ndim("addbmm", (batch1, 3, "batch1"), (batch2, 3, "batch2"))
    _same_dtypes("addbmm", input, batch1, batch2)
    return _scaled_sum("addbmm", input, bmm(batch1, batch2).sum(dim=0), beta, alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
    r"""beta * input + alpha * (batch1 @ batch2), batch by batch.

    forward: beta * input + alpha * (B1[b] @ B2[b]) for each b
    VJP:     g_input = unbroadcast(beta g);  g_B1 = alpha g B2^T;  g_B2 = alpha B1^T g
    """
    _check_ndim("baddbmm", (batch1, 3, "batch1"), (batch2, 3, "batch2"))
    _same_dtypes("baddbmm", input, batch1, batch2)
    return _scaled_sum("baddbmm", input, bmm(batch1, batch2), beta, alpha)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
    r"""beta * input + alpha * outer(vec1, vec2).

    forward: beta * input + alpha * v1 v2^T
    VJP:     g_input = unbroadcast(beta g);  g_v1 = alpha g v2;  g_v2 = alpha g^T v1
    """
    _check_ndim("addr", (vec1, 1, "vec1"), (vec2, 1, "vec2"))
    return _scaled_sum("addr", input, outer(vec1, vec2), beta, alpha)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    r"""The product of a matrix (n, m) and a vector (m,).

    forward: out_i = \sum_j M_ij v_j
    VJP:     g_M = g v^T;  g_v = M^T g
    """
    _check_ndim("mv", (input, 2, "input"), (vec, 1, "vec"))
    return matmul(input, vec)


def vdot(input: Tensor, other: Tensor) -> Tensor:
    r"""\sum_i a_i b_i of two 1-D tensors (real: the same as dot).

    forward: out = \sum_i a_i b_i
    VJP:     g_a = g b;  g_b = g a
    """
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"vdot: expects two 1-D tensors, got shapes {tuple(input.shape)} and {tuple(other.shape)}")
    return matmul(input, other)


def inner(input: Tensor, other: Tensor) -> Tensor:
    r"""out[i..., j...] = \sum_k a[i..., k] b[j..., k] (a 0-d operand multiplies).

    forward: out[i..., j...] = \sum_k a[i..., k] b[j..., k]
    VJP:     g_a = \sum_{j...} g b;  g_b = \sum_{i...} g a   (tensordot's)
    """
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner: inner() the last dimension must match on both input tensors but got shapes "
                           f"{tuple(input.shape)} and {tuple(other.shape)}")
    return tensordot(input, other, dims=([-1], [-1]))


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    r"""Contract the last `dims` dims of a with the first of b (an int), or dims[0] of a with dims[1] of b:
    both permuted so the contracted dims meet, reshaped to matrices, and multiplied (one Matmul).

    forward: out = \sum_{contracted} a b   (a permuted and reshaped to a matrix, times b as one)
    VJP:     Matmul's, through the inverse reshape and permutation
    """
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot: tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([dims[0]] if isinstance(dims[0], int) else list(dims[0]),
                  [dims[1]] if isinstance(dims[1], int) else list(dims[1]))
        if isinstance(dims[0], Tensor):
            da, db = dims[0].tolist(), dims[1].tolist()
    da, db = [d % max(a.ndim, 1) for d in da], [d % max(b.ndim, 1) for d in db]
    if len(da) != len(db) or any(a.shape[i] != b.shape[j] for i, j in zip(da, db)):
        raise RuntimeError(f"tensordot: contracted dimensions need to match, but dims {da} of {tuple(a.shape)} "
                           f"and {db} of {tuple(b.shape)} don't")
    keep_a = [d for d in range(a.ndim) if d not in da]
    keep_b = [d for d in range(b.ndim) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    am = a.permute(keep_a + da).reshape(math.prod(a.shape[d] for d in keep_a), k)
    bm = b.permute(db + keep_b).reshape(k, math.prod(b.shape[d] for d in keep_b))
    if am.dtype != bm.dtype:
        raise RuntimeError(f"tensordot: expected both arguments to have the same dtype, got {a.dtype} and {b.dtype}")
    return matmul(am, bm).reshape([a.shape[d] for d in keep_a] + [b.shape[d] for d in keep_b])


def multi_dot(tensors: Any) -> Tensor:
    r"""A_1 @ A_2 @ ... @ A_n (the first may be 1-D, a row; the last 1-D, a column), left to right."""
    if isinstance(tensors, Tensor):  # (a tensor is iterable, but PyTorch's parser wants a sequence of them)
        raise TypeError("linalg.multi_dot(): argument 'tensors' must be a tuple or list of Tensors, not Tensor")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("multi_dot(): expected at least 2 tensors but got 0")
    if len(tensors) == 1:
        raise RuntimeError("multi_dot(): expected at least 2 tensors but got 1")
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            raise RuntimeError(f"multi_dot(): tensor {i} must be {' or '.join(map(str, allowed))}-D but got "
                               f"{t.ndim}-D (shape {tuple(t.shape)})")
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


def chain_matmul(*matrices: Tensor) -> Tensor:
    r"""The product of 2-D matrices, left to right (deprecated in PyTorch in favour of linalg.multi_dot).

    forward: out = A_1 @ A_2 @ ... @ A_n
    VJP:     each Matmul's in turn: g_{A_k} = (A_1..A_{k-1})^T g (A_{k+1}..A_n)^T
    """
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    for i, t in enumerate(matrices):
        if t.ndim != 2:
            raise RuntimeError(f"chain_matmul(): tensor {i} must be 2D but got {t.ndim}D (shape {tuple(t.shape)})")
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


def trace(input: Tensor) -> Tensor:
    r"""\sum_i A[i, i] of a 2-D tensor (integers summed in int64): the diagonal read by indexing, then summed.

    forward: out = \sum_i A_ii
    VJP:     gA = g I   (g on the diagonal, 0 elsewhere)
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim} "
                           f"(shape {tuple(input.shape)})")
    no_bool(input, "trace")  # (PyTorch's kernel has no bool form)
    i = np.arange(min(input.shape))
    return shown_as(input[i, i].sum(), "TraceBackward0", inputs=(input,))


# ---- edge cases and argument checks of the products, named ---------------------------------------

def _scaled_sum(op, input, product, beta, alpha):
    """beta * input + alpha * product, with input broadcasting to the product's shape (never the reverse)."""
    input = operand(input, op)
    shape = tuple(input.shape) if isinstance(input, Tensor) else ()
    if not _batch_dims_broadcast(shape, tuple(product.shape)) or len(shape) > product.ndim:
        raise RuntimeError(f"{op}: the input of shape {shape} cannot be broadcast to the product's shape "
                           f"{tuple(product.shape)}")
    out = product if alpha == 1 else product * alpha
    if beta == 0:  # PyTorch ignores input then: its NaNs and infs don't propagate
        out = out.expand(product.shape) if isinstance(out, Tensor) else out
    else:
        out = out + (input if beta == 1 else input * beta)
    return shown_as(out, op.capitalize() + "Backward0") if isinstance(out, Tensor) else out  # AddmmBackward0 ...


def _same_dtypes(op, input, a, b):
    """PyTorch's refusal of an input tensor (`self`) and two factors of different dtypes, in its words per op
    (the products alone would promote; these kernels take one dtype)."""
    names = [_dtype.scalar_name(t.dtype) for t in (input, a, b) if isinstance(t, Tensor)]
    given = input if isinstance(input, Tensor) else None
    if a.dtype == b.dtype and (given is None or given.dtype == b.dtype):
        return
    if op == "addmv":
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {', '.join(names[:-1])}, and "
                           f"{names[-1]}")
    if op == "baddbmm":
        raise RuntimeError(f"Input dtypes must be the same, got: input {names[0].lower()}, batch1: "
                           f"{names[-2].lower()}, batch2: {names[-1].lower()}")
    if given is not None and given.dtype != b.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {names[0]} and {names[-1]}")
    raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {names[-2]} and {names[-1]}")


def _check_ndim(op, *checks):
    for t, nd, name in checks:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
        if t.ndim != nd:
            raise RuntimeError(f"{op}: {name} must be a {nd}-D tensor, got shape {tuple(t.shape)}")

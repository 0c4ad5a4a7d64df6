r"""Checking analytic gradients against finite differences, and finding the op that is wrong.

For a function with outputs y_k(x) and random upstream weights u_k, the scalar
f(x) = \sum_k <u_k, y_k(x)> has gradient \sum_k J_k^T u_k, which backward computes in one pass.
Central differences (f(x + eps e_j) - f(x - eps e_j)) / (2 eps) estimate each of its elements
with error O(eps^2) + O(machine eps / eps), about 1e-9 in float64 at eps = 1e-6, hopeless in
float32 (hence float64 only). The weights u are random, never all ones: the sum of a softmax is
constant, so `.sum()` would hide every softmax bug.

When the check fails, each node of the graph is checked again on its own recorded inputs, so the
error can name the op whose backward is wrong instead of only the function that contains it.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from . import grad_mode
from .api import grad as _grad
from .jacobians import central_differences, forward_jacobians, numeric_jacobians


class GradcheckError(RuntimeError):
    """Analytic and numeric gradients disagree; the message names input, element, values and op."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _fresh_inputs(inputs):
    """Copies of the inputs (own memory, never a broadcast view), keeping requires_grad."""

    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            # order="C": a copy of a transposed or broadcast array keeps its odd strides otherwise, and
            # then reshape(-1) below would perturb a copy, not the input (numeric gradient 0)
            t = Tensor._make(np.array(x._array, copy=True, order="C"))
            if x.requires_grad:
                t.requires_grad_(True)
            out.append(t)
        else:
            out.append(x)
    return out


def _outputs(fn, args):

    outs = _as_tuple(fn(*args))
    return tuple(o for o in outs if isinstance(o, Tensor) and _dtype.kind(o.dtype) == "f")


def _weighted_difference(plus, minus, us):
    r"""\sum_k <u_k, y_k(x + eps e_j) - y_k(x - eps e_j)>.

    The outputs are subtracted before they are weighted and summed: an output holding a large
    constant (a -1e9 attention mask) would otherwise swamp the tiny change in a float64 sum.
    """
    return sum(float(np.sum((p - m) * u)) for p, m, u in zip(plus, minus, us))


def _analytic_and_numeric(fn, args, eps, rng):
    """Return (outputs, [(arg position, analytic, numeric)]) for every arg that requires grad."""

    with grad_mode.enable_grad():
        outs = _outputs(fn, args)
    us = [rng.standard_normal(o.shape) for o in outs]
    wanted = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    diff = [o for o in outs if o.requires_grad]
    if diff:
        grads = _grad(
            diff, [args[i] for i in wanted],
            grad_outputs=[Tensor._make(u.astype(o.dtype)) for o, u in zip(outs, us) if o.requires_grad],
            retain_graph=True, allow_unused=True,
        )
    else:
        grads = [None] * len(wanted)
    results = []
    with grad_mode.no_grad():
        for i, g in zip(wanted, grads):
            x = args[i]
            analytic = np.zeros(x.shape) if g is None else g._array.astype(np.float64)
            numeric = np.zeros(x.shape)
            flat = x._array.reshape(-1)  # x owns its memory (see _fresh_inputs), so this is a view into it
            if flat.size and not np.shares_memory(flat, x._array):
                raise RuntimeError(f"gradcheck: input {i} is not C-contiguous, so it can't be perturbed in place")
            for j, plus, minus in central_differences(lambda a: _outputs(fn, a), args, i, eps):
                numeric.reshape(-1)[j] = _weighted_difference(plus, minus, us) / (2 * eps)
            results.append((i, analytic, numeric))
    return outs, results


def _worst(analytic, numeric, atol, rtol):
    """The index and values of the element that fails the tolerance by the most, or None."""
    err = np.abs(analytic - numeric) - (atol + rtol * np.abs(numeric))
    bad = ~(err <= 0)  # nan counts as a failure
    if not bad.any():
        return None
    score = np.where(np.isnan(err), np.inf, err)
    j = tuple(int(i) for i in np.unravel_index(int(np.argmax(score)), analytic.shape)) if analytic.ndim else ()
    return j, float(analytic[j]), float(numeric[j]), int(bad.sum())


def _first_mismatch(results, atol, rtol):
    """(input index, its number of elements, worst element, analytic, numeric, number failing) for the
    first checked input whose gradient fails the tolerance, or None when every one passes."""
    for i, analytic, numeric in results:
        w = _worst(analytic, numeric, atol, rtol)
        if w is not None:
            return (i, analytic.size) + w
    return None


def _checkable_alone(args, max_numel):
    """Whether a node's recorded inputs can be finite-differenced on their own: float64, and few elements."""

    needed = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
    return all(a.dtype == np.float64 for a in needed) and sum(a._array.size for a in needed) <= max_numel


def _with_blame(msg, blamed, none_found):
    """`msg` followed by one line per blamed op, or by `none_found` when no op is to blame."""
    return msg + "\n" + "\n".join("  " + b for b in (blamed or [none_found]))


def _graph_nodes(outs):
    """Every node reachable from `outs` (iteratively), outputs first."""
    stack = [o.grad_fn for o in outs if o.grad_fn is not None]
    seen, order = set(stack), []
    while stack:
        node = stack.pop()
        order.append(node)
        for _, child, _, _ in node.edges:
            if not isinstance(child, Tensor) and child not in seen:
                seen.add(child)
                stack.append(child)
    return order


def _blame(outs, eps, atol, rtol, rng, max_numel=4096):
    """Check each node's VJP on its own recorded inputs; describe the ones that are wrong."""
    found = []
    for node in reversed(_graph_nodes(outs)):  # inputs-side ops first: the earliest wrong op leads
        if not _checkable_alone(node.inputs, max_numel):
            continue
        local = _fresh_inputs(node.inputs)
        try:
            _, results = _analytic_and_numeric(type(node).apply, local, eps, rng)
        except Exception:  # an op that can't be re-run on its own is not the one to blame here
            continue
        bad = _first_mismatch(results, atol, rtol)
        if bad is not None:
            i, _, j, a, n, _ = bad
            found.append(
                f"the backward of '{node.name()}' is wrong: checked alone on its recorded inputs, "
                f"the gradient of its argument {i} (shape {tuple(local[i].shape)}) at element {j} is "
                f"{a:.6g} analytically but {n:.6g} numerically"
            )
    return found


def gradcheck(func: Callable[..., Any], inputs: Tensor | Sequence[Any], *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None, seed: int = 0) -> bool:
    """True if the analytic gradients of `func` at `inputs` match central differences.

    Every input that `requires_grad` is checked; they must be float64. Reverse mode (`check_backward_ad`):
    the outputs are reduced with random weights u_k (seeded by `seed`, minitensor's own) and sum_k J_k^T u_k
    is compared. Forward mode (`check_forward_ad`): each Jacobian J_k, column by column through dual
    tensors (a user's Function through its `jvp`), is compared whole. Reverse mode is checked first. On
    failure raises `GradcheckError` whose first line is PyTorch's ("Jacobian [computed with forward mode]
    mismatch for output k with respect to input d", counting the outputs and inputs that require grad),
    then the worst element, both values and, in reverse mode, the op whose backward is wrong (or returns
    False when `raise_exception=False`). `nondet_tol`, `check_undefined_grad`, the batched checks,
    `fast_mode` and `masked` are taken and have no effect: the checks are deterministic, on dense tensors.
    """
    fn = func
    # (PyTorch's order of these checks)
    assert check_forward_ad or check_backward_ad, \
        "Expected at least one of check_forward_ad or check_backward_ad to be True"
    assert not (check_batched_grad and not check_backward_ad), \
        "Setting check_batched_grad=True requires check_backward_ad to be True"
    assert not (check_batched_forward_grad and not check_forward_ad), \
        "Setting check_batched_forward_grad=True requires check_forward_ad to be True"
    inputs = _as_tuple(inputs)
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor) and x.requires_grad and x.dtype != np.float64:
            raise GradcheckError(
                f"gradcheck: input {i} is {x.dtype}; finite differences need float64 (in float32 their "
                "error is ~1e-2 and correct code fails). Use .double()."
            )
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        raise GradcheckError("gradcheck: no input requires grad, so there is nothing to check")
    rng = np.random.default_rng(seed)
    args = _fresh_inputs(inputs)
    if check_backward_ad and not _reverse_check(fn, args, eps, atol, rtol, rng, raise_exception):
        return False
    if check_forward_ad:
        return _forward_check(fn, args, eps, atol, rtol, raise_exception)
    return True


def _reverse_check(fn, args, eps, atol, rtol, rng, raise_exception):
    """The weighted reverse-mode check; False or GradcheckError on a mismatch."""
    outs, results = _analytic_and_numeric(fn, args, eps, rng)
    bad = _first_mismatch(results, atol, rtol)
    if bad is None:
        return True
    if not raise_exception:
        return False
    i, size, j, a, n, count = bad
    msg = (
        f"{_reverse_pair(fn, args, i, eps, atol, rtol)}\n"
        f"gradcheck: the gradient of input {i} (shape {tuple(args[i].shape)}) disagrees with finite "
        f"differences at {count} of {size} elements. Worst: element {j}, analytic {a:.6g} vs "
        f"numeric {n:.6g} (atol={atol}, rtol={rtol})."
    )
    raise GradcheckError(_with_blame(msg, _blame(outs, eps, atol, rtol, rng),
                                     "every op's backward passes on its own inputs; check how "
                                     "the function combines them"))


def _wanted_and_diff(fn, args):
    """Positions of the args that require grad, and of the float outputs that do (computed with grad on)."""
    wanted = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    with grad_mode.enable_grad():
        outs = _outputs(fn, args)
    return wanted, [k for k, o in enumerate(outs) if o.requires_grad]


def _reverse_pair(fn, args, i, eps, atol, rtol):
    """PyTorch's first line for a reverse-mode mismatch of arg `i`: the first output whose own weighted
    VJP disagrees (output 0 when only the sum over outputs does)."""
    wanted, diff = _wanted_and_diff(fn, args)
    outputs = lambda a: _outputs(fn, a)  # noqa: E731
    numeric = numeric_jacobians(outputs, args, [i], diff, eps)[0]
    rng = np.random.default_rng(0)
    k_bad = 0
    for k, (pos, jac) in enumerate(zip(diff, numeric)):
        with grad_mode.enable_grad():
            out = _outputs(fn, args)[pos]
            u = rng.standard_normal(out.shape)
            (g,) = _grad([out], [args[i]], grad_outputs=[Tensor._make(u.astype(out.dtype))], allow_unused=True)
        analytic = np.zeros(args[i]._array.size) if g is None else g._array.astype(np.float64).reshape(-1)
        if _worst(analytic, jac @ u.reshape(-1), atol, rtol) is not None:
            k_bad = k
            break
    return f"Jacobian mismatch for output {k_bad} with respect to input {wanted.index(i)},"


def _first_mismatch_pair(analytic, numeric, atol, rtol):
    """(input d, output k) of the first pair of Jacobians, inputs outermost, that differ beyond `_worst`'s
    tolerance (or in shape), or None."""
    for d, (per_a, per_n) in enumerate(zip(analytic, numeric)):
        for k, (a, n) in enumerate(zip(per_a, per_n)):
            if a.shape != n.shape or _worst(a, n, atol, rtol) is not None:
                return d, k
    return None


def _forward_check(fn, args, eps, atol, rtol, raise_exception):
    """Forward-mode Jacobians (through dual tensors) against the numeric ones; False or GradcheckError."""
    wanted, diff = _wanted_and_diff(fn, args)
    outputs = lambda a: _outputs(fn, a)  # noqa: E731
    analytic = forward_jacobians(outputs, args, wanted, diff)
    numeric = numeric_jacobians(outputs, args, wanted, diff, eps)
    bad = _first_mismatch_pair(analytic, numeric, atol, rtol)
    if bad is None:
        return True
    if not raise_exception:
        return False
    d, k = bad
    a, n = analytic[d][k], numeric[d][k]
    lines = [f"Jacobian computed with forward mode mismatch for output {k} with respect to input {d},",
             f"numerical:{Tensor._make(n)!r}", f"analytical:{Tensor._make(a)!r}"]
    w = _worst(a, n, atol, rtol)
    if w is not None:
        (row, col), av, nv, count = w
        lines.append(f"Worst of the {count} elements that differ: d output[{col}] / d input[{row}] is {av:.6g} "
                     f"in forward mode but {nv:.6g} numerically (atol={atol}, rtol={rtol}).")
    raise GradcheckError("\n".join(lines) + "\n")


def gradgradcheck(func: Callable[..., Any], inputs: Tensor | Sequence[Any], grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False,
                  seed: int = 0) -> bool:
    """Check second derivatives: gradcheck of (inputs, v) -> vector-Jacobian product v^T J(inputs).

    The VJP is computed with `create_graph=True`, so this verifies that every backward is itself
    correctly differentiable. On failure the error names the input, the worst element, both values
    and the op whose backward is not differentiable (e.g. one computed on `._array` with numpy, which
    is right to first order but invisible to `create_graph`). With `check_fwd_over_rev` the VJP's
    Jacobian is also computed in forward mode (dual tensors through the VJP) and compared; reverse over
    reverse (`check_rev_over_rev`) is checked first.
    """
    assert check_fwd_over_rev or check_rev_over_rev, \
        "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
    assert not (check_undefined_grad and not check_rev_over_rev), \
        "Setting check_undefined_grad=True requires check_rev_over_rev to be True"
    assert not (check_batched_grad and not check_rev_over_rev), \
        "Setting check_batched_grad=True requires check_rev_over_rev to be True"
    vjp, args, n = _vjp_problem(func, inputs, grad_outputs, seed)
    if check_rev_over_rev and not _rev_over_rev(func, vjp, args, n, eps, atol, rtol, raise_exception, seed):
        return False
    if check_fwd_over_rev:
        return gradcheck(vjp, args, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception, seed=seed,
                         check_forward_ad=True, check_backward_ad=False)
    return True


def _rev_over_rev(func, vjp, args, n, eps, atol, rtol, raise_exception, seed):
    """gradcheck of the VJP in reverse mode; False or GradcheckError naming the op on a mismatch."""
    if gradcheck(vjp, args, eps=eps, atol=atol, rtol=rtol, raise_exception=False, seed=seed):
        return True
    if not raise_exception:
        return False
    rng = np.random.default_rng(seed)
    checked = _fresh_inputs(args)
    _, results = _analytic_and_numeric(vjp, checked, eps, rng)
    bad = _first_mismatch(results, atol, rtol)
    if bad is None:
        raise GradcheckError("gradgradcheck: the check failed but no element disagrees on a second evaluation; "
                             "is the function deterministic?")
    i, size, j, a, num, count = bad
    what = f"input {i}" if i < n else f"grad_output {i - n} (the v of v^T J)"
    msg = (
        f"{_reverse_pair(vjp, checked, i, eps, atol, rtol)}\n"
        f"gradgradcheck: the derivative of the vector-Jacobian product v^T J with respect to {what} "
        f"(shape {tuple(checked[i].shape)}) disagrees with finite differences at {count} of {size} "
        f"elements. Worst: element {j}, analytic {a:.6g} vs numeric {num:.6g} (atol={atol}, rtol={rtol})."
    )
    with grad_mode.enable_grad():
        outs = _outputs(func, _fresh_inputs(args[:n]))
    # a first derivative that is wrong also makes the second one wrong: look for both
    blamed = _blame(outs, eps, atol, rtol, np.random.default_rng(seed)) + _blame_second_order(
        outs, eps, atol, rtol, seed)
    raise GradcheckError(_with_blame(
        msg, blamed, "every op's backward is differentiable on its own inputs; check how the function combines them"))


def _vjp_problem(fn, inputs, grad_outputs, seed):
    """(vjp, args, n): vjp(*args) = v^T J(x) built with create_graph=True; args = inputs + random v's."""

    inputs = _as_tuple(inputs)
    rng = np.random.default_rng(seed + 1)
    with grad_mode.enable_grad():
        outs = _outputs(fn, _fresh_inputs(inputs))
    if grad_outputs is None:
        vs = [Tensor._make(rng.standard_normal(o.shape)).requires_grad_(True) for o in outs]
    else:
        vs = [Tensor._make(np.array(v._array, dtype=np.float64)).requires_grad_(True) for v in _as_tuple(grad_outputs)]
    n = len(inputs)
    wanted = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def vjp(*args):
        xs, v = args[:n], args[n:]
        with grad_mode.enable_grad():  # also while gradcheck evaluates it for finite differences
            ys = _outputs(fn, xs)
            pairs = [(y, g) for y, g in zip(ys, v) if y.requires_grad]
            if not pairs:
                return ()
            grads = _grad([y for y, _ in pairs], [xs[i] for i in wanted], grad_outputs=[g for _, g in pairs],
                          create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return vjp, tuple(inputs) + tuple(vs), n


def _blame_second_order(outs, eps, atol, rtol, seed, max_numel=512):
    """Check each node of the forward graph with gradgradcheck on its own recorded inputs."""
    found = []
    for node in reversed(_graph_nodes(outs)):
        if not _checkable_alone(node.inputs, max_numel):
            continue
        local = _fresh_inputs(node.inputs)
        try:
            vjp, args, n = _vjp_problem(type(node).apply, local, None, seed)
            _, results = _analytic_and_numeric(vjp, _fresh_inputs(args), eps, np.random.default_rng(seed))
        except Exception:  # an op that can't be re-run on its own is not the one to blame here
            continue
        bad = _first_mismatch(results, atol, rtol)
        if bad is None:
            continue
        i, _, j, a, num, _ = bad
        what = f"argument {i}" if i < n else f"upstream gradient {i - n}"
        text = (f"the backward of '{node.name()}' is not correctly differentiable: checked alone on its "
                f"recorded inputs, the derivative of its VJP with respect to its {what} at element {j} is "
                f"{a:.6g} analytically but {num:.6g} numerically")
        if _returns_detached(node, local, seed):
            text += ("; its backward returns a gradient with no graph (computed from ._array or numpy?), so "
                     "create_graph=True cannot differentiate it: write the VJP with Tensor ops")
        found.append(text)
    return found


def _returns_detached(node, local, seed):
    """True if the node's backward, fed an upstream gradient that requires grad, returns a constant."""

    try:
        with grad_mode.enable_grad():
            out = type(node).apply(*local)
            if out.grad_fn is None:
                return False
            g = Tensor._make(np.random.default_rng(seed).standard_normal(out.shape)).requires_grad_(True)
            grads = out.grad_fn.backward(out.grad_fn, g)
    except Exception:
        return False
    grads = grads if isinstance(grads, tuple) else (grads,)
    return any(isinstance(gi, Tensor) and not gi.requires_grad
               for gi, x in zip(grads, local) if isinstance(x, Tensor) and x.requires_grad)

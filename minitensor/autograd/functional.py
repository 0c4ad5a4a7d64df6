r"""`minitensor.autograd.functional`: Jacobians, Hessians and their products with a vector, of a function.

PyTorch's `torch.autograd.functional`, with its signatures and results: `f` takes tensors (one, or a
tuple) and returns tensors (one, or a tuple); a tuple given gives tuples back.

- `vjp(f, x, v)`: v^T J, one backward pass.
- `jvp(f, x, v)`: J v. minitensor is reverse-mode only, so this is the "double backward trick", as in
  PyTorch's own `jvp`: u -> u^T J is linear in u, so with u a dummy zero tensor that requires grad,
  J v = d(u^T J v)/du, the gradient of a gradient. It needs each op's VJP to be differentiable
  (minitensor's are; a user Function whose backward is numpy or `once_differentiable` is not).
- `vhp(f, x, v)`, `hvp(f, x, v)`: v^T H and H v of a scalar f, by differentiating the gradient.
- `jacobian(f, x)`: the full J, one backward pass per output element ("reverse-mode"), or one double
  backward per input element ("forward-mode"); shape out.shape + in.shape.
- `hessian(f, x)`: the Jacobian of the gradient; shape in.shape + in.shape.

`vectorize=True` is accepted and computes the same values one row at a time (PyTorch batches the rows
with vmap). `create_graph=True` makes the results differentiable; `strict=True` raises for an output
that does not depend on an input instead of giving zeros.

A worked example, the Jacobian of softmax, J = diag(p) - p p^T:

    >>> import minitensor as mt
    >>> from minitensor.autograd.functional import jacobian
    >>> p = mt.softmax(mt.tensor([0., 1.], dtype=mt.float64), 0)
    >>> J = jacobian(lambda s: mt.softmax(s, 0), mt.tensor([0., 1.], dtype=mt.float64))
    >>> bool(mt.allclose(J, mt.eye(2) * p - p[:, None] * p[None, :]))
    True
"""
from __future__ import annotations

from typing import Any, Callable

from ..tensor import Tensor
from .api import grad as _grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled


def _as_tuple(x, arg_name, fn_name):
    """(whether x was a tuple, x as a tuple of Tensors), or PyTorch's TypeError naming the bad entry."""
    is_tuple = isinstance(x, tuple)
    xs = x if is_tuple else (x,)
    for i, t in enumerate(xs):
        if not isinstance(t, Tensor):
            what = f"the value at index {i} has" if is_tuple else "the given"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{what} {arg_name} has type {type(t)}.")
    return is_tuple, xs


def _tuple_postprocess(res, is_tuple):
    """Undo `_as_tuple`: `is_tuple` is one flag, or (outputs', inputs') for a nested result."""
    if isinstance(is_tuple, tuple):
        if not is_tuple[0]:
            res = res[0]
        if not is_tuple[1]:
            res = tuple(r[0] for r in res) if is_tuple[0] else res[0]
        return res
    return res if is_tuple else res[0]


def _grad_preprocess(inputs, create_graph, need_graph):
    """Fresh inputs to differentiate with respect to; under create_graph they stay linked to the caller's."""
    if create_graph:
        return tuple(t.view_as(t) if t.requires_grad else t.detach().requires_grad_(need_graph) for t in inputs)
    return tuple(t.detach().requires_grad_(need_graph) for t in inputs)


def _grad_postprocess(xs, create_graph):
    if create_graph:
        return xs
    return tuple(None if x is None else (x.detach() if isinstance(x, Tensor) else _grad_postprocess(x, False))
                 for x in xs)


def _check_requires_grad(xs, what, strict):
    if strict:
        for i, t in enumerate(xs):
            if t is None or not t.requires_grad:
                raise RuntimeError(f"The {what} of the user-provided function does not require gradients (entry {i}). "
                                   "The outputs must be computed in a differentiable manner from the input when "
                                   "running in strict mode.")


def _validate_v(v, other, is_tuple, what):
    if len(v) != len(other):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}." if is_tuple
                           else "The given v should contain a single Tensor.")
    for i, (vi, oi) in enumerate(zip(v, other)):
        if vi.shape != oi.shape:
            raise RuntimeError(f"Entry {i} in v has invalid size: should be {list(oi.shape)} (the {what}) "
                               f"but got {list(vi.shape)}.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """`grad`, skipping outputs that don't require grad; None for an input nothing depends on."""
    grad_outputs = grad_outputs or (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                 create_graph=create_graph, allow_unused=True)


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                  "mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick.",
}


def _fill_in_zeros(grads, refs, strict, stage):
    """Zeros (of the matching `refs` entry's shape) where nothing depended; with `strict`, an error."""
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = ref.new_zeros(ref.shape)
        out.append(g)
    return tuple(out)


def _single_element_v(xs, what, fn_name):
    if len(xs) != 1 or xs[0].numel() != 1:
        raise RuntimeError(f"{fn_name}: the vector v can only be None if the {what} is a single Tensor with a "
                           "single element.")


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T J): the vector-Jacobian product, one backward pass. `v` has the outputs' shapes
    (None for a function returning one element)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            v = _grad_preprocess(_as_tuple(v, "v", "vjp")[1], create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple, "output's shape")
        else:
            _single_element_v(outputs, "output of the user-provided function", "vjp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_in_zeros(_autograd_grad(outputs, inputs, v, create_graph), inputs, strict, "back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple))


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), J v): the Jacobian-vector product, by the double backward trick (see the module's
    docstring). `v` has the inputs' shapes (None for one input of one element)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        if v is not None:
            v = _grad_preprocess(_as_tuple(v, "v", "jvp")[1], create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple, "input's shape")
        else:
            _single_element_v(inputs, "input to the user-provided function", "jvp")
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        res = _jvp_columns(outputs, inputs, [v], create_graph, strict)[0]
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_outputs_tuple))


def _jvp_columns(outputs, inputs, tangents, create_graph, strict):
    """J t for each tangent t (a tuple shaped like `inputs`), by the double backward trick: u^T J with u a
    dummy that requires grad, then its gradient with respect to u in the direction t."""
    dummies = tuple(o.new_zeros(o.shape).requires_grad_(True) for o in outputs)
    grad_inputs = _autograd_grad(outputs, inputs, dummies, create_graph=True)
    _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        return [_fill_in_zeros(_autograd_grad(grad_inputs, dummies, t, create_graph, retain_graph=True),
                               outputs, strict, "back_trick") for t in tangents]


def _scalar_output(func, inputs, strict, fn_name):
    outputs = func(*inputs)
    is_outputs_tuple, outputs_t = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs_t, "outputs", strict)
    if is_outputs_tuple or not isinstance(outputs, Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs.numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return outputs


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T H) for a function returning one element: the gradient of (gradient . v)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), H v) for a function returning one element. H is symmetric for a twice continuously
    differentiable f, so this is `vhp`'s value; PyTorch computes it by the double backward trick, and so does this."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph, strict, fn_name):
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        if v is not None:
            v = _grad_preprocess(_as_tuple(v, "v", fn_name)[1], create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple, "input's shape")
        else:
            _single_element_v(inputs, "input to the user-provided function", fn_name)
        outputs = _scalar_output(func, inputs, strict, fn_name)
        jac = _autograd_grad((outputs,), inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        if fn_name == "vhp":
            with set_grad_enabled(True if create_graph else is_grad_enabled()):
                res = _fill_in_zeros(_autograd_grad(jac, inputs, v, create_graph), inputs, strict, "double_back")
        else:
            res = _jvp_columns(jac, inputs, [v], create_graph, strict)[0]
            res = _fill_in_zeros(res, inputs, strict, "double_back_trick")
    return (_grad_postprocess((outputs,), create_graph)[0],
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple))


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of `func` at `inputs`: for output i and input j, a tensor of shape out_i.shape + in_j.shape
    (a tuple over outputs and/or inputs where those were tuples).

    "reverse-mode": one backward pass per output element (a row of J). "forward-mode" (PyTorch requires
    vectorize=True for it): one double backward per input element (a column), see `jvp`."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('jacobian: expected strategy to be either "forward-mode" or "reverse-mode", '
                             f"got {strategy!r}")  # (PyTorch's type: it asserts)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('jacobian: `create_graph=True` and `strategy="forward-mode"` are not '
                                      "supported together (as in PyTorch)")
        if not vectorize:
            raise NotImplementedError("jacobian: strategy='forward-mode' is only implemented for vectorize=True "
                                      "(as in PyTorch)")
    if strict and vectorize:
        raise RuntimeError("jacobian: `strict=True` and `vectorize=True` are not supported together. Please either "
                           "set `strict=False` or `vectorize=False`.")
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if strategy == "forward-mode":
            jac = _jacobian_by_columns(outputs, inputs)
        else:
            jac = _jacobian_by_rows(outputs, inputs, create_graph, strict)
    jac = tuple(_grad_postprocess(row, create_graph) for row in jac)
    if strategy == "forward-mode":  # PyTorch's forward mode returns lists there: the same, so results compare equal
        jac = tuple(list(row) for row in jac)
        jac = list(jac) if is_inputs_tuple else jac
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _one_hots(t):
    """The rows of the identity, each shaped like t: e_k for k over t's elements."""
    from ..factories import eye
    from ..ops.shape import reshape
    n = t.numel()
    return [reshape(row, t.shape) for row in eye(n, dtype=t.dtype)] if n else []


def _stack_or_empty(rows, shape, ref):
    from ..ops.shape import stack
    return stack(rows).reshape(shape) if rows else ref.new_zeros(shape)


def _jacobian_by_rows(outputs, inputs, create_graph, strict):
    jac = []
    for i, out in enumerate(outputs):
        rows = [[] for _ in inputs]
        for e in _one_hots(out):
            with set_grad_enabled(True if create_graph else is_grad_enabled()):
                g = _autograd_grad((out,), inputs, (e,), create_graph=create_graph, retain_graph=True)
            for j, (gj, inp) in enumerate(zip(g, inputs)):
                if gj is None:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. "
                                           "This is not allowed in strict mode.")
                    gj = inp.new_zeros(inp.shape)
                rows[j].append(gj)
        jac.append(tuple(_stack_or_empty(r, out.shape + inp.shape, inp) for r, inp in zip(rows, inputs)))
    return tuple(jac)


def _jacobian_by_columns(outputs, inputs):
    tangents = [tuple(e if k == j else inp.new_zeros(inp.shape) for k, inp in enumerate(inputs))
                for j, inp in enumerate(inputs) for e in _one_hots(inp)]
    columns = _jvp_columns(outputs, inputs, tangents, False, False)
    jac, start = [[None] * len(inputs) for _ in outputs], 0
    for j, inp in enumerate(inputs):
        cols = columns[start:start + inp.numel()]
        start += inp.numel()
        for i, out in enumerate(outputs):
            from ..ops.shape import stack
            jac[i][j] = (stack([c[i] for c in cols], dim=-1).reshape(out.shape + inp.shape) if cols
                         else out.new_zeros(out.shape + inp.shape))
    return tuple(tuple(row) for row in jac)


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a function returning one element: the Jacobian of its gradient, of shape
    in_i.shape + in_j.shape (a tuple of tuples for a tuple of inputs)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('hessian: expected outer_jacobian_strategy to be either "forward-mode" or '
                             f'"reverse-mode", got {outer_jacobian_strategy!r}')  # (PyTorch's type: it asserts)

    def scalar(*inp):
        return _scalar_output(func, inp, strict, "hessian").reshape(())

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))

r"""`minitensor.func`: PyTorch's function transforms (`torch.func`), on a reverse-mode engine.

A transform takes a function and returns a function: `grad(f)(x)` is df/dx, `vmap(f)(xs)` maps f over a
batch dimension. Arguments and results may be tensors or (nested) tuples, lists and dicts of them.

How each is done here, honestly:

- `grad`, `grad_and_value`, `vjp`, `jacrev`: the ordinary backward pass, on fresh copies of the
  arguments (so they need not require grad). Called on arguments that require grad (inside another
  transform, or to differentiate the result further), the backward is recorded (`create_graph`), so
  transforms nest: `grad(grad(f))`, `jacrev(jacrev(f))`.
- `jacfwd`, and so `hessian` = jacfwd(jacrev(f)): PyTorch uses forward-mode AD; minitensor has none, so
  each column J e_k is computed by the "double backward trick" (see `autograd.functional.jvp`). Same
  values, a backward pass per input element instead of a forward one.
- `vmap`: calls `f` once per batch element and stacks the results (PyTorch batches the ops instead).
  Same results, including `in_dims=None` entries and `out_dims`; as slow as the Python loop it is.
  randomness='same' replays the random state for each element; 'error' (PyTorch refuses random ops)
  and 'different' both draw fresh numbers for each element, as the loop naturally does.
- `functional_call(module, params, args)`: runs the module with some parameters and buffers replaced,
  and puts the originals back afterwards, even when the call raises.

A worked example: the gradient and Hessian of f(x) = sum(x^3) are 3x^2 and diag(6x).

    >>> import minitensor as mt
    >>> from minitensor.func import grad, hessian
    >>> x = mt.tensor([1., 2.])
    >>> grad(lambda x: (x ** 3).sum())(x)
    tensor([ 3., 12.])
    >>> hessian(lambda x: (x ** 3).sum())(x)
    tensor([[ 6.,  0.],
            [ 0., 12.]])
"""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator, Sequence

from . import _dtype
from ._rearrange import rearrange  # noqa: F401  (h-names29: issue 29)
from .autograd.api import grad as _autograd_grad
from .autograd.grad_mode import enable_grad, is_grad_enabled
from .ops.shape import stack
from .tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call",
           "jvp", "linearize", "stack_module_state", "replace_all_batch_norm_modules_"]  # (the last four: issue 29)
__all__ += ["rearrange"]  # (h-names29: issue 29, einops' rearrange, in minitensor/_rearrange.py)


# ---- pytrees: nested tuples, lists and dicts with tensors (or anything) at the leaves -------------
def _flatten(tree: Any) -> tuple[list[Any], Any]:
    """(the leaves, left to right; a spec that `_unflatten` rebuilds the tree from)."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for x in tree:
            sub, spec = _flatten(x)
            leaves += sub
            specs.append((len(sub), spec))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, spec = _flatten(list(tree.values()))
        return leaves, (dict, list(tree.keys()), spec)
    return [tree], None


def _unflatten(leaves: Sequence[Any], spec: Any) -> Any:
    if spec is None:
        return leaves[0]
    if spec[0] is dict:
        return dict(zip(spec[1], _unflatten(leaves, spec[2])))
    kind, specs, out, i = spec[0], spec[1], [], 0
    for n, sub in specs:
        out.append(_unflatten(leaves[i:i + n], sub))
        i += n
    return kind(out) if kind in (tuple, list) else kind(*out)


def _argnums(argnums: int | tuple[int, ...], n: int, where: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else argnums
    if not isinstance(nums, tuple) or not nums or not all(isinstance(a, int) for a in nums):
        raise RuntimeError(f"{where}: argnums must be int or Tuple[int, ...], got: {argnums!r}")
    for a in nums:
        if not -n <= a < n:
            raise RuntimeError(f"{where}: Got argnums={a}, but only {n} positional inputs")
    return tuple(a % n for a in nums)


def _track(t: Any, where: str) -> Any:
    """A copy of argument leaf t to differentiate with respect to: linked to t (a node of its own, so an
    outer transform tells the two apart) when t itself requires grad, a fresh leaf otherwise."""
    if not isinstance(t, Tensor):
        return t
    if _dtype.kind(t.dtype) != "f":
        raise RuntimeError(f"{where}: only Tensors of floating point dtype can require gradients, got {t.dtype}")
    return t.clone() if t.requires_grad and is_grad_enabled() else t.detach().requires_grad_(True)


class _Tracked:
    """The arguments of one call of a transform, with those at `argnums` replaced by tracked copies."""

    def __init__(self, args: tuple[Any, ...], argnums: int | tuple[int, ...], where: str) -> None:
        self.nums = _argnums(argnums, len(args), where)
        self.args = list(args)
        self.leaves, self.specs = [], []
        for a in self.nums:
            leaves, spec = _flatten(args[a])
            tracked = [_track(x, where) for x in leaves]
            self.args[a] = _unflatten(tracked, spec)
            self.leaves.append([x for x in tracked if isinstance(x, Tensor)])
            self.specs.append((leaves, spec))
        self.flat = [x for group in self.leaves for x in group]
        # record the backward only when someone outside may differentiate the result further
        self.nested = is_grad_enabled() and any(
            isinstance(x, Tensor) and x.requires_grad for leaves, _ in self.specs for x in leaves)
        self.single = isinstance(argnums, int)

    def regroup(self, flat_grads: Sequence[Any]) -> Any:
        """Gradients for `self.flat`, back in the shape of the arguments (one tree, or a tuple for argnums tuple)."""
        out, i = [], 0
        for leaves, spec in self.specs:
            rebuilt = []
            for x in leaves:
                if isinstance(x, Tensor):
                    rebuilt.append(flat_grads[i])
                    i += 1
                else:
                    rebuilt.append(None)
            out.append(_unflatten(rebuilt, spec))
        return out[0] if self.single else tuple(out)

    def finish(self, x: Any) -> Any:
        """A result handed back: cut from the graph unless an outer transform differentiates it."""
        leaves, spec = _flatten(x)
        return x if self.nested else _unflatten([t.detach() if isinstance(t, Tensor) else t for t in leaves], spec)


def _grads(outputs: Sequence[Tensor], inputs: Sequence[Tensor], grad_outputs: Sequence[Any] | None,
           create_graph: bool) -> tuple[Tensor, ...]:
    """d(outputs)/d(inputs) weighted by grad_outputs, zeros where nothing depends; the graph is kept."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs or [None] * len(outputs)) if o.requires_grad]
    if not pairs or not inputs:
        return tuple(t.new_zeros(t.shape) for t in inputs)
    return _autograd_grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=True,
                          create_graph=create_graph, materialize_grads=True)


def _split_aux(out: Any, has_aux: bool, where: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return out


def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """A function returning (gradient of func with respect to its argument(s) `argnums`, func's value);
    with `has_aux`, func returns (value, aux) and the result is (gradient, (value, aux))."""
    where = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = _Tracked(args, argnums, where)
        with enable_grad():
            output, aux = _split_aux(func(*tr.args, **kwargs), has_aux, where)
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{where}: Expected f(*args) to return a Tensor, got {type(output)}")
            if output.ndim != 0:
                raise RuntimeError(f"{where}: Expected f(*args) to return a scalar Tensor, got tensor with "
                                   f"{output.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            grads = tr.regroup(_grads([output], tr.flat, None, tr.nested))
        value = tr.finish(output)
        return (grads, (value, tr.finish(aux))) if has_aux else (grads, value)

    return wrapper


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """A function returning the gradient of func (which returns a 0-d tensor) with respect to its argument(s)
    `argnums`; with `has_aux`, func returns (value, aux) and the result is (gradient, aux)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        grads, value = gv(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """(func(*primals), vjp_fn[, aux]): `vjp_fn(cotangents)` (shaped like the output) returns the tuple of
    cotangents^T J, one per primal. It may be called several times."""
    where = "vjp(f, *primals)"
    tr = _Tracked(primals, tuple(range(len(primals))), where)
    with enable_grad():
        output, aux = _split_aux(func(*tr.args), has_aux, where)
    out_leaves, out_spec = _flatten(output)
    for x in out_leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{where}: Expected f to be a function that has only Tensors as outputs, got {type(x)}")

    def vjp_fn(cotangents: Any, *, retain_graph: bool = True, create_graph: bool | None = None) -> tuple[Any, ...]:
        ct_leaves, ct_spec = _flatten(cotangents)
        if ct_spec != out_spec or len(ct_leaves) != len(out_leaves):
            raise RuntimeError("vjp_fn: Expected pytree structure of cotangents to be the same as pytree structure "
                               "of outputs to the function")
        with enable_grad():
            flat = _grads(out_leaves, tr.flat, ct_leaves, bool(create_graph) or tr.nested)
        result = tr.regroup(flat)
        return tr.finish(result if isinstance(result, tuple) else (result,))

    return (tr.finish(output), vjp_fn, tr.finish(aux)) if has_aux else (tr.finish(output), vjp_fn)


def _one_hots(t: Tensor) -> list[Tensor]:
    from .factories import eye
    return [row.reshape(t.shape) for row in eye(t.numel(), dtype=t.dtype)] if t.numel() else []


def _jac_entry(pieces: list[Tensor], out: Tensor, inp: Tensor, dim: int) -> Tensor:
    """The Jacobian block d out / d inp, of shape out.shape + inp.shape, from its rows (dim 0) or columns (-1)."""
    if not pieces:
        return out.new_zeros(tuple(out.shape) + tuple(inp.shape))
    return stack(pieces, dim=dim).reshape(tuple(out.shape) + tuple(inp.shape))


def _jacobian_transform(func: Callable[..., Any], argnums: int | tuple[int, ...], has_aux: bool, where: str,
                        by_columns: bool) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = _Tracked(args, argnums, where)
        with enable_grad():
            output, aux = _split_aux(func(*tr.args, **kwargs), has_aux, where)
            outs, out_spec = _flatten(output)
            for x in outs:
                if not isinstance(x, Tensor):
                    raise RuntimeError(f"{where}: Expected f to be a function that has only Tensors as outputs, "
                                       f"got {type(x)}")
            blocks = (_columns if by_columns else _rows)(outs, tr.flat, tr.nested)
        # each output leaf becomes the arguments' tree of its Jacobian blocks
        jac = _unflatten([tr.regroup(blocks[i]) for i in range(len(outs))], out_spec)
        jac = tr.finish(jac)
        return (jac, tr.finish(aux)) if has_aux else jac

    return wrapper


def _rows(outs: list[Tensor], inputs: list[Tensor], create_graph: bool) -> list[list[Tensor]]:
    blocks = []
    for out in outs:
        rows = [_grads([out], inputs, [e], create_graph) for e in _one_hots(out)]
        blocks.append([_jac_entry([r[j] for r in rows], out, inp, 0) for j, inp in enumerate(inputs)])
    return blocks


def _columns(outs: list[Tensor], inputs: list[Tensor], create_graph: bool) -> list[list[Tensor]]:
    """Column J e_k of every output for each input element k, by the double backward trick: g(u) = u^T J is
    linear in u (a zero dummy that requires grad), and J e_k = d(g(u) . e_k)/du."""
    dummies = [o.new_zeros(o.shape).requires_grad_(True) for o in outs]
    g = _grads(outs, inputs, dummies, True)
    blocks: list[list[Tensor]] = [[] for _ in outs]
    for j, inp in enumerate(inputs):
        cols = [_grads([g[j]], dummies, [e], create_graph) for e in _one_hots(inp)]
        for i, out in enumerate(outs):
            blocks[i].append(_jac_entry([c[i] for c in cols], out, inp, -1))
    return blocks


def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """A function returning the Jacobian of func with respect to argument(s) `argnums`, row by row (one
    backward pass per output element): for each output, shape out.shape + arg.shape. `chunk_size` is
    accepted; the rows are computed one at a time anyway."""
    _check_chunk_size(chunk_size, "jacrev")
    return _jacobian_transform(func, argnums, has_aux, "jacrev(f)(*args)", by_columns=False)


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:
    """`jacrev`'s result, column by column: PyTorch's forward-mode AD, done here by the double backward
    trick (a double backward pass per input element; see the module's docstring)."""
    _check_randomness(randomness)
    return _jacobian_transform(func, argnums, has_aux, "jacfwd(f)(*args)", by_columns=True)


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """The Hessian of func (returning a 0-d tensor) with respect to argument(s) `argnums`: jacfwd(jacrev(func))."""
    return jacfwd(jacrev(func, argnums), argnums)


def _check_chunk_size(chunk_size: int | None, where: str) -> None:
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"{where}: `chunk_size` should be greater than 0.")


def _check_randomness(randomness: str) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


# ---- vmap ----------------------------------------------------------------------------------------
def _dims_per_leaf(in_dims: Any, args: tuple[Any, ...], name: str) -> list[Any]:
    """The in_dim of each leaf of args (an int or None applies to a whole subtree)."""
    def spread(d: Any, tree: Any) -> list[Any]:
        if d is None or isinstance(d, int):
            return [d] * len(_flatten(tree)[0])
        if isinstance(d, (tuple, list)) and isinstance(tree, (tuple, list)) and len(d) == len(tree):
            return [x for di, ti in zip(d, tree) for x in spread(di, ti)]
        if isinstance(d, dict) and isinstance(tree, dict) and d.keys() == tree.keys():
            return [x for k in tree for x in spread(d[k], tree[k])]
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         "structure of `inputs`.")
    if isinstance(in_dims, int) or in_dims is None:
        return spread(in_dims, args)
    if not isinstance(in_dims, tuple):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...): expected `in_dims` to be int or a (potentially "
                         f"nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    return spread(in_dims, args)


def _select(t: Tensor, dim: int, i: int) -> Tensor:
    return t[(slice(None),) * dim + (i,)]


@contextlib.contextmanager
def _same_randomness(randomness: str) -> Iterator[Callable[[], None]]:
    """Yields what to call before each batch element: for 'same', put back the random state of the start."""
    if randomness != "same":
        yield lambda: None
        return
    from .random import get_rng_state, set_rng_state
    state = get_rng_state()
    yield lambda: set_rng_state(state)


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:
    """`func` mapped over a batch dimension: `in_dims` says which dim of each argument is the batch (None:
    not batched, the same for every element), `out_dims` where the batch goes in each output.

    Done by calling func once per batch element and stacking the results (see the module's docstring)."""
    _check_randomness(randomness)
    _check_chunk_size(chunk_size, "vmap")
    name = getattr(func, "__name__", repr(func))

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        leaves, spec = _flatten(args)
        dims = _dims_per_leaf(in_dims, args, name)
        sizes = []
        for x, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                                 f"the input is of type {type(x)}. We cannot vmap over non-Tensor arguments, please "
                                 "use None as the respective in_dim")
            if not -x.ndim <= d < x.ndim:
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, "
                                 f"but that input is a Tensor of dimensionality {x.ndim} so expected in_dim to "
                                 f"satisfy -{x.ndim} <= in_dim < {x.ndim}.")
            sizes.append(x.shape[d % x.ndim])
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        results = []
        with _same_randomness(randomness) as reset:
            for b in range(sizes[0]):
                reset()
                one = [x if d is None else _select(x, d % x.ndim, b) for x, d in zip(leaves, dims)]
                results.append(func(*_unflatten(one, spec), **kwargs))
        return _stack_outputs(results, out_dims, name)

    return wrapper


def _stack_outputs(results: list[Any], out_dims: Any, name: str) -> Any:
    first_leaves, spec = _flatten(results[0])
    per_result = [_flatten(r)[0] for r in results]
    if isinstance(out_dims, int) or out_dims is None:
        dims = [out_dims] * len(first_leaves)
    else:
        top = results[0] if isinstance(results[0], tuple) else (results[0],)
        if not isinstance(out_dims, tuple) or len(out_dims) != len(top):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
                             "the structure of `outputs`.")
        dims = [d for d, t in zip(out_dims, top) for _ in _flatten(t)[0]]
    stacked = []
    for k, (x, d) in enumerate(zip(first_leaves, dims)):
        if d is None:
            stacked.append(x)  # not batched: the same for every element (the first one's)
            continue
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(x)}. Did you "
                             "mean to set out_dims= to None for output?")
        if not -(x.ndim + 1) <= d <= x.ndim:
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): Dimension out of range (expected to be in "
                             f"range of [{-(x.ndim + 1)}, {x.ndim}], but got {d})")
        stacked.append(stack([leaves[k] for leaves in per_result], dim=d))
    return _unflatten(stacked, spec)


# ---- functional_call ---------------------------------------------------------------------------------
def functional_call(module: Any, parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """`module(*args, **kwargs)` with the parameters and buffers named in `parameter_and_buffer_dicts`
    ("layer.weight": tensor) replaced by the given tensors for the call; the module's own are put back
    afterwards, even when the call raises. A name the module lacks is ignored (an error with strict=True);
    with `tie_weights`, a parameter shared under two names is replaced under both."""
    dicts = [parameter_and_buffer_dicts] if isinstance(parameter_and_buffer_dicts, dict) \
        else list(parameter_and_buffer_dicts)
    given: dict[str, Tensor] = {}
    for d in dicts:
        twice = sorted(set(given) & set(d))
        if twice:
            raise ValueError(f"{twice} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        given.update(d)
    slots = _named_slots(module)
    if strict:
        missing, unexpected = sorted(set(slots) - set(given)), sorted(set(given) - set(slots))
        if missing or unexpected:
            lines = ([f"\tMissing key(s): {', '.join(repr(k) for k in missing)}."] if missing else []) + (
                [f"\tUnexpected key(s): {', '.join(repr(k) for k in unexpected)}."] if unexpected else [])
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n" + "\n".join(lines))
    if tie_weights:  # a tensor shared by two names follows the one given
        for name in list(given):
            if name in slots:
                for other, (_, _, _, t) in slots.items():
                    if t is slots[name][3] and other != name:
                        if other in given and given[other] is not given[name]:
                            raise ValueError(f"functional_call got multiple values for keys {sorted([name, other])}, "
                                             "which are tied. Consider using tie_weights=False")
                        given.setdefault(other, given[name])
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    swapped = []
    try:
        for name, t in given.items():
            if name in slots:
                owner, store, key, old = slots[name]
                getattr(owner, store)[key] = t
                swapped.append((owner, store, key, old))
        return module(*args, **(kwargs or {}))
    finally:
        for owner, store, key, old in reversed(swapped):
            getattr(owner, store)[key] = old


def _named_slots(module: Any) -> dict[str, tuple[Any, str, str, Any]]:
    """"a.b.weight" -> (the submodule, "_parameters" or "_buffers", "weight", the tensor), tied ones included."""
    out = {}
    for prefix, mod in module.named_modules(remove_duplicate=False):
        dot = prefix + "." if prefix else ""
        for store in ("_parameters", "_buffers"):
            for key, t in getattr(mod, store).items():
                if t is not None:
                    out[dot + key] = (mod, store, key, t)
    return out


# ---- issue 29: jvp, linearize (forward mode by the double backward trick), and the ensembling helpers -------

def _linear_map(func: Callable[..., Any], primals: Any, has_aux: bool, where: str) -> tuple[Any, Any, Any, Any]:
    """(output, aux, the tracked arguments, t -> J t on flat tangents): the "double backward trick". With u a
    dummy cotangent that requires grad, g(u) = u^T J is computed once with its graph recorded (create_graph);
    g is linear in u, so the gradient of g . t with respect to u is J t, exactly. Each J t then costs one more
    backward pass through g's graph (about twice f's cost); PyTorch's forward mode costs about one forward."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{where}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    tr = _Tracked(primals, tuple(range(len(primals))), where)
    with enable_grad():
        output, aux = _split_aux(func(*tr.args), has_aux, where)
        out_leaves, out_spec = _flatten(output)
        for x in out_leaves:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{where}: Expected f to return only Tensors, got {type(x).__name__}")
        live = [o for o in out_leaves if o.requires_grad]
        dummies = [o.new_zeros(o.shape).requires_grad_(True) for o in live]
        transposed = _autograd_grad(live, tr.flat, dummies, retain_graph=True, create_graph=True,
                                    allow_unused=True) if live and tr.flat else ()

    def apply(flat_tangents: Sequence[Tensor]) -> Any:
        pairs = [(g, t) for g, t in zip(transposed, flat_tangents) if g is not None and g.requires_grad]
        with enable_grad():
            columns = iter(_autograd_grad([g for g, _ in pairs], dummies, [t for _, t in pairs], retain_graph=True,
                                          create_graph=tr.nested, allow_unused=True, materialize_grads=True)
                           if pairs else [d.new_zeros(d.shape) for d in dummies])
        results = [next(columns) if o.requires_grad else o.new_zeros(o.shape).detach() for o in out_leaves]
        return tr.finish(_unflatten(results, out_spec))

    return tr.finish(output), tr.finish(aux), tr, apply


def _flat_tangents(tr: _Tracked, primals: tuple[Any, ...], tangents: Any, where: str) -> list[Tensor]:
    if not isinstance(tangents, tuple) or len(tangents) != len(primals):
        raise RuntimeError(f"{where}: Expected tangents to be a tuple of the same length as primals "
                           f"({len(primals)}), got {type(tangents).__name__}")
    flat = []
    for p, t in zip(primals, tangents):
        p_leaves, p_spec = _flatten(p)
        t_leaves, t_spec = _flatten(t)
        if p_spec != t_spec or len(p_leaves) != len(t_leaves):
            raise RuntimeError(f"{where}: Expected primals and tangents to have the same python structure")
        for a, b in zip(p_leaves, t_leaves):
            if not isinstance(a, Tensor):
                continue
            if not isinstance(b, Tensor) or tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
                got = f"{tuple(b.shape)} {b.dtype}" if isinstance(b, Tensor) else type(b).__name__
                raise RuntimeError(f"{where}: Expected each tangent to have the same shape and dtype as its primal: "
                                   f"primal {tuple(a.shape)} {a.dtype}, tangent {got}")
            flat.append(b)
    return flat


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple[Any, ...]:
    """(func(*primals), J tangents[, aux]): the Jacobian-vector product, the derivative of func at primals in
    the direction tangents (a tuple shaped like primals). Computed exactly by the double backward trick (see
    `_linear_map`: two backward passes instead of PyTorch's one forward-mode pass). `strict` is accepted and,
    as in PyTorch 2.13, has no effect."""
    where = "jvp(f, primals, tangents)"
    output, aux, tr, apply = _linear_map(func, primals, has_aux, where)
    result = apply(_flat_tangents(tr, primals, tangents, where))
    return (output, result, aux) if has_aux else (output, result)


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """(func(*primals), jvp_fn): `jvp_fn(*tangents)` is J tangents at primals, for any number of tangents.
    func runs once; each call of jvp_fn is one backward pass through the recorded u^T J (see `_linear_map`)."""
    where = "linearize(func, *primals)"
    output, _, tr, apply = _linear_map(func, primals, False, where)

    def jvp_fn(*tangents: Any) -> Any:
        return apply(_flat_tangents(tr, primals, tangents, "linearize's jvp_fn"))

    return output, jvp_fn


def stack_module_state(models: Any) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """(params, buffers) of M models of one class, each name's M tensors stacked on a new dim 0: for `vmap`
    over `functional_call`, to run an ensemble. The stacked parameters are new leaves (they require grad
    when the models' do), so an optimizer can train them directly."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({bool(m.training) for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named: list[dict[str, Tensor]]) -> dict[str, Tensor]:
        out = {}
        for name in named[0]:
            tensors = [d[name] for d in named]
            grads = {t.requires_grad for t in tensors}
            if len(grads) > 1:
                raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
            out[name] = stack([t.detach() for t in tensors]).requires_grad_(grads.pop())
        return out

    return (stacked([dict(m.named_parameters()) for m in models]),
            stacked([dict(m.named_buffers()) for m in models]))


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """In place: every BatchNorm module in root stops tracking running statistics (running_mean,
    running_var and num_batches_tracked become None), so it always normalizes with the batch's own
    statistics, as under vmap. Returns root."""
    from .nn.normalization import _BatchNorm  # (nn sits above func's imports: imported when called)
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root

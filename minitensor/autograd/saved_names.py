"""Which of a node's tensors PyTorch's node saves for backward, and under which name (`grad_fn._saved_self`).

For each minitensor op whose PyTorch node saves something, a rule reads the node's arguments and says:

- the tensors PyTorch saves, in the order its node saves them (the order `saved_tensors_hooks` calls
  pack_hook in): `Slot(name, source, when)`, `source` being the position of minitensor's argument that
  is that tensor, or "result" for the node's output. `when=j`: saved only if argument j requires grad
  (`a * b` keeps `other` only to give `self` its gradient); when not saved, `_saved_<name>` is None.
  `transposed`: PyTorch saves the argument transposed (linear's weight is addmm's mat2 = W^T).
- `derived`: tensors PyTorch's node computes in forward and saves (max's indices, layer_norm's mean and
  rstd, nll_loss's total_weight, dropout's mask): minitensor's node holds no such tensor, so they are
  neither exposed nor packed (listed to say so).
- `values`: non-tensor values PyTorch exposes (`_saved_exponent`, `_saved_alpha`, `_saved_keepdim`,
  `_saved_self_sym_sizes` ...). Dims are left out: minitensor's node keeps them made non-negative, where
  PyTorch keeps what the user wrote (-1 shows as 2**64 - 1), so they could not be given exactly.

Checked against PyTorch 2 (`[a for a in dir(y.grad_fn) if a.startswith("_saved")]` and a pack hook's
log, for each op). A rule returns None for a call it doesn't cover (matmul of batches, which PyTorch
runs as reshapes around bmm): that node keeps minitensor's own behaviour (see saved_hooks.py).
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

from .torch_names import torch_node_name


class Slot(NamedTuple):
    name: str  # PyTorch's name: `_saved_<name>`
    source: int | str  # minitensor's argument position, or "result"
    when: int | None = None  # saved only if argument `when` requires grad
    transposed: bool = False


class Entry(NamedTuple):
    tensors: tuple[Slot, ...] = ()
    values: dict[str, Any] = {}
    derived: tuple[str, ...] = ()


def _shape(t: Any) -> tuple[int, ...]:
    return tuple(t._array.shape)


def _binary(args: tuple[Any, ...], name: str) -> Entry:
    """mul, div: `other` kept for self's gradient; `self` for other's (div: other for both)."""
    if name == "MulBackward0" and not hasattr(args[0], "_array"):  # `2 / x`: 2 * reciprocal(x)
        return Entry(values={"self": None}, derived=("other",))
    other_when = None if name == "DivBackward0" else 0
    return Entry((Slot("other", 1, other_when), Slot("self", 0, 1)))


def _pow(args: tuple[Any, ...], name: str) -> Entry:
    if name == "PowBackward0":
        return Entry((Slot("self", 0),), {"exponent": args[1]})
    if name == "PowBackward1":
        return Entry((Slot("exponent", 1), Slot("self", 0), Slot("result", "result")))
    return Entry((Slot("exponent", 1), Slot("result", "result")), {"self": args[0]})


def _matmul(args: tuple[Any, ...], name: str) -> Entry | None:
    a, b = args
    if name == "MmBackward0":
        return Entry((Slot("mat2", 1, 0), Slot("self", 0, 1)),
                     {"self_sym_sizes": _shape(a), "mat2_sym_sizes": _shape(b)})
    if name == "BmmBackward0" or (name == "UnsafeViewBackward0" and a.ndim == b.ndim == 3 and
                                  _shape(a)[0] == _shape(b)[0]):  # (bmm names its node after forward)
        return Entry((Slot("mat2", 1, 0), Slot("self", 0, 1)))
    if name == "MvBackward0":
        return Entry((Slot("self", 0, 1), Slot("vec", 1, 0)))
    if name == "DotBackward0":
        return Entry((Slot("self", 0, 1), Slot("tensor", 1, 0)))
    return None  # batched or 1-d by 2-d: PyTorch saves reshaped copies, which minitensor's node doesn't hold


def _linear(args: tuple[Any, ...], name: str) -> Entry | None:
    """linear(x, W, b) on a matrix x is PyTorch's addmm(b, x, W^T) (mm without a bias)."""
    x, w, _ = args
    if name == "AddmmBackward0":
        return Entry((Slot("mat1", 0, 1), Slot("mat2", 1, 0, True)),
                     {"alpha": 1, "beta": 1, "mat1_sym_sizes": _shape(x), "mat2_sym_sizes": _shape(w)[::-1]})
    if name == "MmBackward0":
        return Entry((Slot("mat2", 1, 0, True), Slot("self", 0, 1)),
                     {"self_sym_sizes": _shape(x), "mat2_sym_sizes": _shape(w)[::-1]})
    return None


def _alpha(args: tuple[Any, ...], name: str) -> Entry:
    if name == "AddmmBackward0":  # addmm's last node: its mm kept mat1 and mat2 (as MmBackward0)
        return Entry(values={"alpha": 1, "beta": 1}, derived=("mat1", "mat2"))
    return Entry(values={"alpha": 1})


def _reduction(stem: str) -> Callable[[tuple[Any, ...], str], Entry]:
    def rule(args: tuple[Any, ...], name: str) -> Entry:
        values: dict[str, Any] = {"self_sym_sizes": _shape(args[0])}
        if stem == "Mean":
            values["self_sym_numel"] = int(args[0]._array.size)
        if name.endswith("Backward1"):
            values["keepdim"] = args[2]
        return Entry(values=values)
    return rule


def _extreme(args: tuple[Any, ...], name: str) -> Entry:
    """max/min of everything keep self and result; over a dim, the indices; amax/amin self and result.
    (Read from the arguments, not the name, which max gives its node after forward: `nan_wins` is max's.)"""
    x, dims, keepdim, nan_wins = args
    if nan_wins and (keepdim or len(dims) != x.ndim):
        return Entry(values={"keepdim": keepdim, "self_sym_sizes": _shape(x)}, derived=("indices",))
    if not nan_wins:
        return Entry((Slot("self", 0), Slot("result", "result")), {"keepdim": keepdim})
    return Entry((Slot("self", 0), Slot("result", "result")))


def _index(args: tuple[Any, ...], name: str) -> Entry | None:
    if name == "GatherBackward0":
        return Entry(values={"sparse_grad": False}, derived=("index", "self"))
    if name == "EmbeddingBackward0":
        return Entry(values={"scale_grad_by_freq": False, "sparse": False,
                             "weight_sym_argsize_0": _shape(args[0])[0]}, derived=("indices",))
    if name == "IndexBackward0":
        return Entry(values={"self_sym_sizes": _shape(args[0])}, derived=("indices",))
    return None  # select, slice ...: no tensors, and their dims are not kept as written


def _where(args: tuple[Any, ...], name: str) -> Entry:
    if name == "MaskedFillBackward0":
        return Entry((Slot("mask", 0),))
    return Entry((Slot("condition", 0),))


def _clamp(args: tuple[Any, ...], name: str) -> Entry | None:
    if name != "ClampBackward1":
        return None  # tensor bounds: PyTorch keeps them and self; not checked yet
    return Entry((Slot("self", 0),), {"min": args[1], "max": args[2]})


def _layer_norm(args: tuple[Any, ...], name: str) -> Entry:
    """layer_norm(x, n, weight, bias, eps): PyTorch keeps bias, input, weight, and its mean and rstd."""
    return Entry((Slot("bias", 3), Slot("input", 0), Slot("weight", 2)),
                 {"normalized_shape": _shape(args[0])[len(_shape(args[0])) - args[1]:]}, ("result1", "result2"))


def _nll(args: tuple[Any, ...], name: str) -> Entry:
    """cross_entropy is PyTorch's log_softmax (keeps its result) then nll_loss (keeps that, the target and
    total_weight); minitensor's one node holds the logits, the target and the loss."""
    if name != "NllLossBackward0":
        return Entry()
    return Entry((Slot("target", 1),), {"weight": None}, ("self", "total_weight"))


def _div(args: tuple[Any, ...], name: str) -> Entry:
    if name == "NllLossBackward0":  # nll_loss's last node (a division): PyTorch's one node keeps its inputs
        return Entry(values={"weight": None}, derived=("self", "target", "total_weight"))
    return _binary(args, name)


def _only(*slots: Slot) -> Callable[[tuple[Any, ...], str], Entry]:
    return lambda args, name: Entry(slots)


_SELF, _RESULT = Slot("self", 0), Slot("result", "result")

#: minitensor's node class -> rule(arguments, PyTorch's node name) -> Entry (None: not covered for that call)
SAVED: dict[str, Callable[[tuple[Any, ...], str], Entry | None]] = {
    "Add": _alpha, "Sub": _alpha, "Mul": _binary, "Div": _div, "Pow": _pow,
    "Exp": _only(_RESULT), "Log": _only(_SELF), "Sin": _only(_SELF), "Cos": _only(_SELF), "Tanh": _only(_RESULT),
    "Sigmoid": _only(_RESULT), "Relu": _only(_RESULT), "Sqrt": _only(_RESULT), "Abs": _only(_SELF),
    "Neg": _only(), "Matmul": _matmul, "Linear": _linear,
    "Sum": _reduction("Sum"), "Mean": _reduction("Mean"), "Amax": _extreme, "Amin": _extreme,
    "Softmax": _only(_RESULT), "LogSoftmax": _only(_RESULT),
    "Reshape": lambda args, name: Entry(values={"self_sym_sizes": _shape(args[0])}),
    "Expand": lambda args, name: Entry(values={"self_sym_sizes": _shape(args[0])}),
    "Permute": _only(), "Cat": _only(), "Index": _index, "Where": _where, "Clamp": _clamp,
    "LayerNorm": _layer_norm, "CrossEntropy": _nll, "Dropout": lambda args, name: Entry(derived=("other",)),
}


#: every name an entry above can give (slots, values, derived): the `_saved_<name>` and `_raw_saved_<name>`
#: attributes a node has (ctx.py makes them properties: a `__getattr__` on the node class would slow every
#: attribute read of every node, as CPython then can't specialise them)
NAMES = frozenset({
    "self", "other", "exponent", "result", "mat1", "mat2", "vec", "tensor", "alpha", "beta", "self_sym_sizes",
    "self_sym_numel", "mat1_sym_sizes", "mat2_sym_sizes", "keepdim", "indices", "index", "sparse_grad",
    "scale_grad_by_freq", "sparse", "weight_sym_argsize_0", "mask", "condition", "min", "max", "bias", "input",
    "weight", "normalized_shape", "result1", "result2", "target", "total_weight",
})


def saved_entry(node: Any) -> Entry | None:
    """What PyTorch's node for `node` saves (needs the node's arguments: call it before backward frees them);
    None for an op or a call the table doesn't cover."""
    rule = SAVED.get(type(node).__name__)
    if rule is None or not type(node).__module__.startswith("minitensor.") or node.inputs is None:
        return None
    return rule(node.inputs, torch_node_name(node))


def in_table(node: Any) -> bool:
    return type(node).__name__ in SAVED and type(node).__module__.startswith("minitensor.")


def is_saved(node: Any, slot: Slot) -> bool:
    """Whether PyTorch's node keeps `slot` for this call (its condition on which arguments require grad)."""
    return slot.when is None or node.needs_input_grad[slot.when]

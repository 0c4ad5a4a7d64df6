"""PyTorch's names for minitensor's graph nodes, as `repr(tensor.grad_fn)` and a tensor's repr show
them (`grad_fn=<MulBackward0>`), so a script prints what its tutorial shows. A node class not listed
is `<Name>Backward0`, and a user's Function's `<Name>Backward` (as in PyTorch). Error messages, `explain()`
and `detect_anomaly` keep minitensor's own names (`node.name()`: 'MulBackward'), which say which Function ran.

One minitensor node may stand for several PyTorch nodes: the table gives the commonest call's name
(Reshape is `view`/`reshape`'s ViewBackward0, also for `flatten`; Permute is PermuteBackward0, also for `x.T`).

Where PyTorch's node differs by call, `NAMED_BY_CALL` reads the node's arguments: indexing (`x[0]` is
SelectBackward0, `x[:2]` SliceBackward0, `x[idx]` IndexBackward0), Sum, Mean and Prod (whole
`...Backward0`, over dims `...Backward1`), Matmul and Linear (by the operands' dims: Mm, Mv, Dot, Addmm,
UnsafeView ...), Sub and Div with a number first (`1 - x` RsubBackward1), Pow, Round, Clamp. A node that
kept values for backward loses its arguments there and falls back to the table. And a composite op that
PyTorch runs as one node names the last node it makes (`shown_as`): `F.mse_loss` is MseLossBackward0 as it
prints, `F.silu` SiluBackward0, though `explain()` shows the nodes they are made of.
"""
from typing import Any

import numpy as np

TORCH_NODE_NAMES = {
    "Add": "AddBackward0", "Sub": "SubBackward0", "Mul": "MulBackward0", "Div": "DivBackward0",
    "RoundedDiv": "DivBackward1", "Pow": "PowBackward0", "Neg": "NegBackward0", "Cast": "ToCopyBackward0",
    "Clamp": "ClampBackward1", "Matmul": "MmBackward0", "Linear": "AddmmBackward0", "Reshape": "ViewBackward0",
    "Permute": "PermuteBackward0", "Contiguous": "CloneBackward0", "Index": "SelectBackward0",
    "IndexPut": "IndexPutBackward0", "Dropout": "MulBackward0", "LayerNorm": "NativeLayerNormBackward0",
    "CrossEntropy": "NllLossBackward0", "Pad": "ConstantPadNdBackward0", "Norm": "LinalgVectorNormBackward0",
    "Logsumexp": "LogsumexpBackward0", "LogSoftmax": "LogSoftmaxBackward0", "Log1p": "Log1PBackward0",
}
TORCH_NODE_NAMES["MatrixExp"] = "LinalgMatrixExpBackward0"  # (h-param: torch.matrix_exp is linalg's op)
TORCH_NODE_NAMES["CopySlices"] = "CopySlices"  # (a base changed in place through a view: PyTorch's own node name)


def torch_node_name(node: Any) -> str:
    """PyTorch's name of `node`: the one its composite op gave it, else by its call, else by its class."""
    shown = node.__dict__.get("shown_as")
    if shown is not None:
        return shown
    name = type(node).__name__
    # (a node that kept values for backward has no inputs once backward freed it: it takes its commonest name;
    # a user's Function of the same class name as one of minitensor's has other arguments)
    if not type(node).__module__.startswith("minitensor."):
        return name + "Backward"  # a user's autograd.Function: PyTorch adds no overload number
    if name in NAMED_BY_CALL and node.inputs is not None:
        return NAMED_BY_CALL[name](*node.inputs)
    return TORCH_NODE_NAMES.get(name, name + "Backward0")


def is_node_input(arg: Any) -> bool:
    """Whether PyTorch's node has an input for a forward argument: a tensor that could carry a gradient
    (an integer or bool tensor, a target or a mask, is not one; nor is a number)."""
    return hasattr(arg, "_array") and arg._array.dtype.kind in "fc"


def shown_as(out: Any, name: str, input: Any = None, inputs: Any = None) -> Any:
    """Name the node that made `out` (the last of a composite op's nodes) as PyTorch's one node; `out`.
    An op that may return its `input` itself (a 0-d sort) passes it: that tensor's node is not the op's.
    With `inputs` (the composite's tensor arguments) its `next_functions` skips the composite's inner
    nodes, as PyTorch's one node does: each input's node, its leaf, or None if it needs no gradient."""
    if out.grad_fn is not None and out is not input:
        out.grad_fn.shown_as = name
        if inputs is not None:
            out.grad_fn.composite_edges = tuple(  # (None: an unset weight or bias, which PyTorch lists too)
                None if t is None or not t.requires_grad else t.grad_fn if t.grad_fn is not None else t
                for t in inputs if t is None or is_node_input(t))
    return out


def _indexing_name(x: Any, key: tuple[Any, ...]) -> str:
    """PyTorch indexes dim by dim, left to right, skipping slices that keep a whole dim: its node is the
    last step's (Select for an int, Slice, Unsqueeze for None), Alias when there is none, and Index as soon
    as an index is a tensor or list."""
    if any(isinstance(k, np.ndarray) and (k.ndim or k.dtype == bool) for k in key):
        return "IndexBackward0"
    steps = sum(1 for k in key if k is not None and k is not Ellipsis)
    dim, last = 0, "AliasBackward0"
    for k in key:
        if k is Ellipsis:
            dim += x.ndim - steps
        elif k is None:
            last = "UnsqueezeBackward0"
        elif isinstance(k, slice):
            if k.indices(x.shape[dim]) != (0, x.shape[dim], 1):
                last = "SliceBackward0"
            dim += 1
        else:
            last, dim = "SelectBackward0", dim + 1
    return last


def _reduction_name(stem: str) -> Any:
    def name(x: Any, dims: tuple[int, ...], keepdim: bool) -> str:
        whole = not keepdim and len(dims) == x.ndim
        return stem + ("Backward0" if whole else "Backward1")
    return name


def _matmul_name(a: Any, b: Any) -> str:
    """PyTorch's matmul dispatches by the operands' dims to mm, mv, dot, or a batched product it reshapes
    back (UnsafeView; Clone when a matrix that needs a gradient meets a batch, as it copies that matrix)."""
    dims = (a.ndim, b.ndim)
    if max(dims) <= 2:
        return {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4"}.get(dims, "DotBackward0")
    return "CloneBackward0" if a.ndim == 2 and a.requires_grad else "UnsafeViewBackward0"


def _linear_name(x: Any, weight: Any, bias: Any) -> str:
    """PyTorch's linear is addmm on a matrix; other inputs are flattened to one and viewed back (a 1-d input
    without a bias is a matrix-vector product squeezed)."""
    if x.ndim == 2:
        return "AddmmBackward0" if bias is not None else "MmBackward0"
    if bias is not None:
        return "ViewBackward0"
    return "SqueezeBackward4" if x.ndim == 1 else "UnsafeViewBackward0"


def _pow_name(a: Any, b: Any) -> str:  # PyTorch's three overloads: a number exponent, two tensors, a number base
    return "PowBackward2" if not hasattr(a, "ndim") else "PowBackward0" if not hasattr(b, "ndim") else "PowBackward1"


def _rounding_name(x: Any, mode: str, decimals: int) -> str:
    return "RoundBackward1" if decimals else mode.capitalize() + "Backward0"


def _index_put_name(x: Any, key: Any, value: Any) -> str:
    """`x[key] = value`: PyTorch writes a basic key (ints, slices, None) through a view (CopySlices), and
    a tensor or list key with index_put."""
    key = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, list) or (isinstance(k, np.ndarray) and (k.ndim or k.dtype == bool)) for k in key):
        return "IndexPutBackward0"
    return "CopySlices"


NAMED_BY_CALL = {
    "Index": _indexing_name, "IndexPut": _index_put_name, "Sum": _reduction_name("Sum"),
    "Mean": _reduction_name("Mean"),
    "Matmul": _matmul_name, "Linear": _linear_name, "Pow": _pow_name, "Round": _rounding_name,
    "Sub": lambda a, b: "SubBackward0" if hasattr(a, "ndim") else "RsubBackward1",  # `1 - x` is PyTorch's rsub
    "Div": lambda a, b: "DivBackward0" if hasattr(a, "ndim") else "MulBackward0",  # `2 / x`: 2 * reciprocal(x)
    "Clamp": lambda x, lo, hi: "ClampBackward0" if hasattr(lo, "ndim") or hasattr(hi, "ndim") else "ClampBackward1",
    "Prod": lambda x, dim, keepdim: "ProdBackward0" if dim is None else "ProdBackward1",
    # with label smoothing PyTorch adds the smoothing term to nll_loss's
    "CrossEntropy": lambda x, t, ignore, w, reduction, smoothing: "AddBackward0" if smoothing else "NllLossBackward0",
}

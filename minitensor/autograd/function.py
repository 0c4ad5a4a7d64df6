r"""`Function`: an op with a forward and a backward (VJP) side by side, and the graph node it records.

Every op of minitensor is a `Function` subclass, and so is every op a user writes:

    class Exp(Function):
        r'''out = exp(x);   VJP: gx = g * out'''
        @staticmethod
        def forward(ctx, x):
            return np.exp(x.detach().numpy())
        @staticmethod
        def backward(ctx, g):
            return g * ctx.output

The backward contract, the same for every op: `backward(ctx, g)` gets the gradient `g` of the
loss with respect to the op's output (a Tensor of the output's shape and dtype) and returns one
gradient per positional argument of `forward`, `None` where there is none (non-tensor arguments,
integer tensors, inputs not needing a gradient: see `ctx.needs_input_grad`). Backward is written
with Tensor operations, so with `create_graph=True` it is itself recorded and can be
differentiated again.

One call of `apply` makes one node, `ctx`: an instance of the Function subclass. The output's
`grad_fn` is that node. A node holds its inputs (until its backward has run), its edges (for each
input that needs a gradient: where that gradient goes, the node that made the input or the leaf
itself, and the shape and dtype it must have), the version of every tensor it may read in
backward, and only a *weak* reference to its output. So no node is part of a reference cycle, a
graph is freed by reference counting as soon as its last output is dropped, and after backward
a graph still referenced holds no intermediate results.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from . import anomaly, grad_mode
from .ctx import NodeExtras
from .messages import freed_message, modified_message


class Function(NodeExtras):
    """Base class of every op. Subclass it with static `forward(ctx, *args)` and `backward(ctx, g)`."""

    #: whether backward reads the *values* of the inputs or of the output. Then the node checks
    #: them for in-place changes before its backward runs, and can't run a second time once the
    #: graph is freed. Ops whose backward needs only shapes (add, sum, reshape ...) set it to False,
    #: like PyTorch's nodes that save nothing: they may be backpropagated through again.
    saves_values = True
    #: whether forward returns a view of its first argument's memory when numpy can make one
    #: (reshape, transpose, basic indexing ...): the output then shares that tensor's version
    #: counter, so an in-place change through either is seen by every node that saved the other.
    is_view = False
    #: the speed layer's twins (registered by minitensor/fast, never written here; None: the op's own
    #: runs). `fast_forward` computes forward's output and may keep on ctx what `fast_backward` reads;
    #: `fast_backward` is the same VJP on numpy arrays, run only when nothing records the backward (no
    #: `create_graph`). A subclass doesn't inherit them. A test proves each twin equal to its op's.
    fast_forward: Callable[..., Any] | None = None
    fast_backward: Callable[[Any, Tensor], Any] | None = None
    #: a user's Function (one defined outside minitensor): a gradient its backward returns in a shape the
    #: input broadcasts to is summed to the input's shape, as PyTorch's engine does. minitensor's own ops
    #: leave it False: each VJP undoes its own broadcasting, so a gradient of another shape is a bug named there.
    sums_broadcast_gradients = False
    #: the name of the step of the user's math this node belongs to (`autograd.step`), None outside one
    _step_name: Any = None
    # gradient hooks registered on the output (`register_hook` on a non-leaf)
    hooks: list[Callable[[Tensor], Tensor | None]] | None = None
    retain = False  # `retain_grad()` was called on the output
    # set on each node by `apply` (declared here for type checkers): the arguments of forward (None
    # once backward has freed them), the tensors saved by `save_for_backward`, the (tensor, version)
    # pairs backward checks, the edges (input index, target, shape, dtype), and which inputs need a gradient
    inputs: tuple[Any, ...] | None
    saved: tuple[Any, ...] = ()
    versions: tuple[tuple[Tensor, int], ...] = ()
    edges: tuple[tuple[int, Any, tuple[int, ...], Any], ...]
    needs_input_grad: tuple[bool, ...]
    saved_output: Tensor
    output_version: int
    _out: weakref.ref[Tensor]

    # ---- the node API (PyTorch's `ctx`) ---------------------------------------------------------
    def save_for_backward(self, *tensors: Any) -> None:
        """Keep tensors for backward; like the inputs, each is checked for in-place changes before backward."""
        self.saved = tensors
        self.versions = self.versions + tuple((t, t._version) for t in tensors if isinstance(t, Tensor))

    def save_for_forward(self, *tensors: Any) -> None:
        """Keep tensors for the `jvp` staticmethod (forward mode): while it runs, `saved_tensors` gives these."""
        if not all(t is None or isinstance(t, Tensor) for t in tensors):
            raise AssertionError("save_for_forward expects all arguments to be tensors; you should save "
                                 "non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    #: what `save_for_forward` kept; `saved_tensors` gives it only while the jvp staticmethod runs
    saved_for_forward: tuple[Any, ...] | None = None
    _in_jvp = False

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        if self._in_jvp and self.saved_for_forward is not None:
            return self.saved_for_forward
        if self.inputs is None:
            raise RuntimeError(freed_message(self))
        return self.saved

    @property
    def output(self) -> Tensor:
        """The tensor this node produced, as it was then, with this node as its `grad_fn` (so a
        backward that reads it is differentiable again under `create_graph`)."""
        if self.inputs is None:
            raise RuntimeError(freed_message(self))
        if self.saved_output._version != self.output_version:
            raise RuntimeError(modified_message(self, "its output", self.saved_output, self.output_version))
        out = self.saved_output.detach()
        out.grad_fn, out._rg = self, True
        return out

    def name(self) -> str:
        return type(self).__name__ + "Backward"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)  # a subclass may compute otherwise: its parent's twins don't apply
        cls.fast_forward, cls.fast_backward = cls.__dict__.get("fast_forward"), cls.__dict__.get("fast_backward")
        if "sums_broadcast_gradients" not in cls.__dict__:
            cls.sums_broadcast_gradients = not cls.__module__.startswith("minitensor.")
        if hasattr(cls, "setup_context"):  # PyTorch 2's style: forward(*args) without ctx, then setup_context,
            from .custom import forward_then_setup_context
            cls.fast_forward = cls.fast_forward or forward_then_setup_context  # run where forward would be

    # ---- running the op -------------------------------------------------------------------------
    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:  # (**kwargs: so checkers let any forward override it)
        raise NotImplementedError("a Function subclass must define forward(ctx, *args)")

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        raise NotImplementedError("a Function subclass must define backward(ctx, g)")

    @classmethod
    def apply(cls, *args: Any) -> Tensor:
        """Run forward on `args` without recording, then record one node if any input needs a gradient."""
        modes = grad_mode.modes
        if modes.profiler is not None:  # inside `profiler.profile()`: this call is timed as one event
            return modes.profiler.run_op(cls, args)
        ctx = cls()
        ctx.inputs = args
        if modes.step is not None:  # inside `with autograd.step(...)`: the node is named after that step
            ctx._step_name = modes.step
        # 1. the edges: for each tensor argument that needs a gradient, where it goes (the node
        #    that made the argument, or the leaf itself) and the shape and dtype it must have
        edges, needs = [], [False] * len(args)
        if modes.grad_enabled:
            for i, a in enumerate(args):
                if isinstance(a, Tensor):
                    if a._base is not None:
                        a._check_view_is_current(cls.__name__.lower())
                    if a._rg:
                        edges.append((i, a.grad_fn if a.grad_fn is not None else a, a._array.shape, a._array.dtype))
                        needs[i] = True
        ctx.edges, ctx.needs_input_grad = tuple(edges), tuple(needs)
        if edges and cls.saves_values:  # 2. what backward will read, at its version now
            ctx.versions = tuple([(a, a._version_counter.value) for a in args if isinstance(a, Tensor)])
        raw = call_forward(cls, ctx, args)  # 3. forward, on arrays, recording nothing
        if type(raw) is not np.ndarray:
            if isinstance(raw, (Tensor, tuple)):  # a user's Function: several outputs, views, in place (custom.py)
                from .custom import wrap_outputs
                result = wrap_outputs(cls, ctx, args, raw)
                if modes.forward_ad is not None and cls.sums_broadcast_gradients:  # a user's jvp (forward_ad.py)
                    result = modes.forward_ad(cls, ctx, args, result)
                return result
            raw = np.asarray(raw)
        if _dtype.has_bfloat16:  # (optional: numpy's bfloat16 from ml_dtypes widens where PyTorch rounds)
            raw = _dtype.kept_bfloat16(raw, args)
        out = Tensor._make(raw)
        if cls.is_view and np.may_share_memory(raw, args[0]._array):
            out._share_storage_of(args[0])
        if modes.anomaly_enabled:
            anomaly.check_forward(ctx, out)
        # 4. the node, if a gradient can flow through it (integer and bool outputs have none)
        if edges and _dtype.kind(raw.dtype) == "f":
            ctx._out, ctx.output_version = weakref.ref(out), out._version_counter.value
            if cls.saves_values:  # its values, without the output's link back to this node (no cycle)
                ctx.saved_output = out.detach()
            if modes.anomaly_enabled:
                anomaly.remember_origin(ctx)
            out.grad_fn, out._rg = ctx, True
            if modes.saved_hooks is not None and cls.saves_values:  # saved_tensors_hooks: keep what pack returns
                modes.saved_hooks.pack_node(ctx)  # (saved_hooks.py)
        if modes.recorder is not None:  # the speed layer's Replay is recording this step
            modes.recorder.append((cls, ctx, args, out))
        if modes.forward_ad is not None and cls.sums_broadcast_gradients:  # a user's jvp (forward_ad.py)
            return modes.forward_ad(cls, ctx, args, out)
        return out


def call_forward(op: type[Function], ctx: Function, args: tuple[Any, ...]) -> Any:
    """Step 3 of `apply`: op's forward on `args` with grad mode off; what it returned."""
    modes = grad_mode.modes
    forward = op.fast_forward or op.forward
    if not modes.grad_enabled:  # (inside backward, no_grad, an optimizer's step)
        return forward(ctx, *args)
    modes.grad_enabled = False
    try:
        return forward(ctx, *args)
    finally:
        modes.grad_enabled = True

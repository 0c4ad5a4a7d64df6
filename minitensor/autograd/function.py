r"""`Function`: an op with a forward and a backward (VJP) side by side, and the graph node it records.

Every op of minitensor is a `Function` subclass, and so is every op a user writes:

    class Exp(Function):
        r'''out = exp(x);   VJP: gx = g * out'''
        @staticmethod
        def forward(ctx, x):
            return np.exp(x.data)
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
`grad_fn` is that node. A node holds its inputs (the edges of the graph), what `forward` saved,
and only a *weak* reference to its output, so no node is part of a reference cycle and a graph is
freed by reference counting as soon as its last output is dropped.
"""
import weakref

import numpy as np

from . import grad_mode
from .. import _anomaly

_REGISTRY = {}


class Function:
    """Base class of every op. Subclass it with static `forward(ctx, *args)` and `backward(ctx, g)`."""

    #: ops the library defines register themselves here; the test suite checks each has a gradcheck
    differentiable = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith("minitensor.") and cls.differentiable:
            _REGISTRY[cls.__name__] = cls

    # ---- the node API (PyTorch's `ctx`) ---------------------------------------------------------
    def save_for_backward(self, *tensors):
        """Keep tensors for backward (the op's own inputs are checked for in-place changes before it runs)."""
        self.saved = tensors

    @property
    def saved_tensors(self):
        if self.inputs is None:
            raise RuntimeError(_freed_message(self))
        return self.saved

    @property
    def output(self):
        """The tensor this node produced (weakly held: alive whenever its backward can run)."""
        out = self._out() if self._out is not None else None
        if out is None:
            raise RuntimeError(f"{self.name()}: output tensor is no longer alive")
        if out._version != 0:  # outputs are born at version 0; a backward reading a changed one is wrong
            raise RuntimeError(
                f"backward of '{self.name()}': its output (shape {tuple(out.shape)}), which this backward "
                "uses, was modified by an in-place operation after it was computed; its backward would be wrong"
            )
        return out

    def name(self):
        return type(self).__name__ + "Backward"

    @property
    def next_functions(self):
        """(node, input index) for each tensor input needing a gradient: a leaf shows as its tensor."""
        if self.inputs is None:
            return ()
        return tuple((t.grad_fn if t.grad_fn is not None else t, i) for i, t in self.edges)

    def __repr__(self):
        return f"<{self.name()}>"

    # ---- running the op -------------------------------------------------------------------------
    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("a Function subclass must define forward(ctx, *args)")

    @staticmethod
    def backward(ctx, g):
        raise NotImplementedError("a Function subclass must define backward(ctx, g)")

    @classmethod
    def apply(cls, *args):
        """Run forward on `args` without recording, then record one node if any input needs a gradient."""
        Tensor = _tensor_class()
        ctx = cls.__new__(cls)
        ctx.inputs = args
        ctx.saved = ()
        ctx._out = None
        enabled = grad_mode._enabled
        record = False
        if enabled:
            for a in args:
                if isinstance(a, Tensor) and a._rg:
                    record = True
                    break
        if record:
            ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        grad_mode._enabled = False
        try:
            raw = cls.forward(ctx, *args)
        finally:
            grad_mode._enabled = enabled
        if isinstance(raw, Tensor):
            raw = raw.data  # a fresh Tensor below: never attach a node to an object forward may have saved
        elif not isinstance(raw, np.ndarray):
            if isinstance(raw, tuple):
                raise TypeError(f"{cls.__name__}.forward returned a tuple; a Function has exactly one output")
            raw = np.asarray(raw)
        out = Tensor._make(raw)
        if _anomaly.enabled:
            _anomaly.check_forward(ctx, out)
        if record and raw.dtype.kind == "f":
            ctx.edges = edges = [(i, a) for i, a in enumerate(args) if isinstance(a, Tensor) and a._rg]
            ctx.versions = [a._version for _, a in edges]
            ctx.hooks = None
            ctx.retain = False
            ctx._out = weakref.ref(out)
            if _anomaly.enabled:
                _anomaly.remember_origin(ctx)
            out.grad_fn = ctx
            out._rg = True
        else:
            ctx.inputs = None  # nothing will run backward: drop the references now
            ctx.saved = ()
        return out


_TENSOR = []


def _tensor_class():
    """The Tensor class, imported on first use (tensor.py imports this module)."""
    if not _TENSOR:
        from ..tensor import Tensor

        _TENSOR.append(Tensor)
    return _TENSOR[0]


def _freed_message(node):
    return (
        f"Trying to backward through the graph a second time (op '{node.name()}'): its saved "
        "tensors were freed after the first backward. Pass retain_graph=True to the first "
        ".backward() if you need to backward through it again."
    )


def registry():
    """Name -> class of every differentiable op defined by minitensor."""
    return dict(_REGISTRY)

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

    # A node is made for every op, so its fixed fields are slots (fast to set); `__dict__` is
    # listed too, so an op may still keep anything else on ctx (made only when one does). Every
    # node sets every slot (`apply` and the kernel path's `_recorded`), and the class has no
    # `__getattr__`: Python 3.11 specialises attribute reads only on classes without one, and the
    # engine and every backward read these fields (a read costs 4-5x as much otherwise).
    __slots__ = ("inputs", "saved", "needs_input_grad", "edges", "versions", "_out", "__dict__", "__weakref__")

    #: ops the library defines register themselves here; the test suite checks each has a gradcheck
    differentiable = True
    #: whether backward reads `ctx.output`: only then does the node keep a (weak) reference to its
    #: output, which costs about a tenth of a small op. A library op's value is found from its
    #: backward's code (set it by hand when a helper reads it); a user's Function always keeps it.
    uses_output = True
    #: optional: forward's arithmetic as a function of the input arrays, valid whenever every input
    #: is a float tensor of one dtype (or, for two inputs, the second is a Python number). Then
    #: `apply` calls it directly and records the node itself, skipping the forward call and its
    #: checks, which cannot fail there; every other call runs forward as usual.
    kernel = None
    # Rarely set, read by the engine for every node: class defaults, so a node need not store them.
    hooks = None  # gradient hooks registered on the output (`register_hook` on a non-leaf)
    retain = False  # `retain_grad()` was called on the output

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        library = cls.__module__.startswith("minitensor.")
        if library and cls.differentiable:
            _REGISTRY[cls.__name__] = cls
        if library and "uses_output" not in cls.__dict__:
            cls.uses_output = _reads_output(cls.backward.__code__)
        if cls.__dict__.get("kernel") is not None:
            cls.apply = staticmethod(_kernel_apply(cls, cls.kernel))
        elif cls.kernel is not None and "apply" not in cls.__dict__:
            cls.apply = Function.__dict__["apply"]  # a subclass's forward need not match its parent's kernel

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
            if not self.uses_output and self.inputs is not None:
                raise RuntimeError(f"{self.name()}: backward read ctx.output, but {type(self).__name__}.uses_output "
                                   "is False, so the node kept no reference to it: set uses_output = True")
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
        """Run forward on `args` without recording, then record one node if any input needs a gradient.

        This runs for every op, so it is written for speed: ops of one or two arguments (nearly
        all) find their edges without a loop or a helper call.
        """
        ctx = _new(cls)
        ctx.inputs = args
        ctx.saved = ()
        edges = None
        if grad_mode._enabled:
            n = len(args)
            if n == 1:
                a = args[0]
                if isinstance(a, _Tensor) and a._rg:
                    edges, versions, ctx.needs_input_grad = ((0, a),), (a._version,), _FIRST
            elif n == 2:
                a, b = args
                if isinstance(a, _Tensor) and a._rg:
                    if isinstance(b, _Tensor) and b._rg:
                        edges, versions, ctx.needs_input_grad = ((0, a), (1, b)), (a._version, b._version), _BOTH
                    else:
                        edges, versions, ctx.needs_input_grad = ((0, a),), (a._version,), _FIRST_OF_TWO
                elif isinstance(b, _Tensor) and b._rg:
                    edges, versions, ctx.needs_input_grad = ((1, b),), (b._version,), _SECOND_OF_TWO
            else:
                edges, versions, needs = _edges(args)
                if edges is not None:
                    ctx.needs_input_grad = needs
            if edges is not None:
                ctx.edges = edges  # before forward, which may read them (and ctx.needs_input_grad)
            else:
                ctx.needs_input_grad = (False,) * n
            grad_mode._enabled = False  # ops inside forward are not recorded
            try:
                raw = cls.forward(ctx, *args)
            finally:
                grad_mode._enabled = True
        else:
            ctx.needs_input_grad = (False,) * len(args)
            raw = cls.forward(ctx, *args)
        if type(raw) is not np.ndarray:
            raw = _as_array(cls, raw)
        out = _new(_Tensor)
        out.data = raw
        out.grad = out._hooks = None
        out._version = 0
        if _anomaly.enabled:
            _anomaly.check_forward(ctx, out)
        if edges is not None and raw.dtype.kind == "f":
            ctx.versions = versions
            ctx._out = _ref(out) if cls.uses_output or _anomaly.enabled else None
            if _anomaly.enabled:
                _anomaly.remember_origin(ctx)
            out.grad_fn = ctx
            out._rg = True
        else:
            out.grad_fn = None
            out._rg = False
            ctx.inputs = None  # nothing will run backward: drop the references now
            ctx.saved = ctx.edges = ctx.versions = ()
            ctx._out = None
        return out


def _kernel_apply(cls, kernel):
    """`cls.apply` for an op with a `kernel`: the common case inline, everything else to `Function.apply`.

    The node it records (`_recorded`) is the one `Function.apply` would: same class, inputs, edges,
    versions and needs_input_grad. Its signature is forward's, so a method such as `x.exp` can be this function itself.
    """
    generic = Function.apply.__func__

    if cls.forward.__code__.co_argcount == 2:  # forward(ctx, x)
        def apply(x):
            if _anomaly.enabled or not isinstance(x, _Tensor) or x.data.dtype.kind != "f":
                return generic(cls, x)
            raw = kernel(x.data)
            if type(raw) is not np.ndarray:  # a ufunc of a 0-d array returns a numpy scalar
                raw = np.asarray(raw)
            if x._rg and grad_mode._enabled:
                return _recorded(cls, raw, (x,), ((0, x),), (x._version,), _FIRST)
            return _Tensor._make(raw)
    else:  # forward(ctx, a, b)
        def apply(a, b):
            if _anomaly.enabled:
                return generic(cls, a, b)
            if isinstance(a, _Tensor):
                x = a.data
                dtype, needs_a = x.dtype, a._rg
                if isinstance(b, _Tensor):
                    y = b.data
                    if y.dtype is not dtype:
                        return generic(cls, a, b)  # promotion, and its errors, are forward's job
                    needs_b = b._rg
                elif type(b) is float or type(b) is int:  # a number keeps the tensor's dtype, as in PyTorch
                    y, needs_b = b, False
                else:
                    return generic(cls, a, b)
            elif (type(a) is float or type(a) is int) and isinstance(b, _Tensor):  # `2 * x`, `1 - p`: reflected
                x, y = a, b.data
                dtype, needs_a, needs_b = y.dtype, False, b._rg
            else:
                return generic(cls, a, b)
            if dtype.kind != "f":
                return generic(cls, a, b)
            try:
                raw = kernel(x, y)
            except ValueError:
                return generic(cls, a, b)  # shapes that don't fit: forward's error names them
            if type(raw) is not np.ndarray:
                raw = np.asarray(raw)
            if not grad_mode._enabled or not (needs_a or needs_b):
                return _Tensor._make(raw)
            if not needs_a:
                return _recorded(cls, raw, (a, b), ((1, b),), (b._version,), _SECOND_OF_TWO)
            if needs_b:
                return _recorded(cls, raw, (a, b), ((0, a), (1, b)), (a._version, b._version), _BOTH)
            return _recorded(cls, raw, (a, b), ((0, a),), (a._version,), _FIRST_OF_TWO)

    apply.__qualname__ = f"{cls.__name__}.apply"
    apply.__doc__ = Function.apply.__doc__
    return apply


def _recorded(cls, raw, inputs, edges, versions, needs):
    """The output tensor of a kernel-path op, with its node: what `Function.apply` records."""
    out = _new(_Tensor)
    out.data = raw
    out.grad = out._hooks = None
    out._version = 0
    ctx = _new(cls)
    ctx.inputs = inputs
    ctx.edges = edges
    ctx.versions = versions
    ctx.needs_input_grad = needs
    ctx.saved = ()
    ctx._out = _ref(out) if cls.uses_output else None
    out.grad_fn = ctx
    out._rg = True
    return out


def _edges(args):
    """(edges, their versions now, needs_input_grad) of a node of 3+ inputs; (None, None, None) if none needs a gradient."""
    a, b, c, rest = args[0], args[1], args[2], args[3:]
    # a reduction (x, dims, keepdim), Linear (x, w, b), where, attention (q, k, v, then constants):
    # tensors come first and constants after, so the usual cases need no loop. A type is known to
    # be a constant once it was seen not to be a Tensor: the check of the rest is one C-level pass.
    if not rest or _CONSTANT_TYPES.issuperset(map(type, rest)):
        needs = (isinstance(a, _Tensor) and a._rg, isinstance(b, _Tensor) and b._rg, isinstance(c, _Tensor) and c._rg)
        if needs == _ALL_THREE:
            return ((0, a), (1, b), (2, c)), (a._version, b._version, c._version), needs + (False,) * len(rest)
        if needs == _FIRST_OF_THREE:
            return ((0, a),), (a._version,), needs + (False,) * len(rest)
    edges, versions, needs = [], [], []
    for i, a in enumerate(args):
        if isinstance(a, _Tensor):
            if a._rg:
                edges.append((i, a))
                versions.append(a._version)
                needs.append(True)
                continue
        elif len(_CONSTANT_TYPES) < 256:  # bounded: types made on the fly could otherwise pile up
            _CONSTANT_TYPES.add(type(a))
        needs.append(False)
    return (tuple(edges), tuple(versions), tuple(needs)) if edges else (None, None, None)


# the types of arguments met that are not Tensors (a type never becomes a Tensor subclass later)
_CONSTANT_TYPES = {type(None), bool, int, float, str, tuple, list, slice}


def _reads_output(code):
    """Whether a code object (or one nested in it: a lambda, a comprehension) reads `.output`."""
    return "output" in code.co_names or any(
        _reads_output(c) for c in code.co_consts if isinstance(c, type(code)))


_new = object.__new__
# needs_input_grad of the common nodes: shared constants, made once
_FIRST, _BOTH, _FIRST_OF_TWO, _SECOND_OF_TWO = (True,), (True, True), (True, False), (False, True)
_FIRST_OF_THREE, _ALL_THREE = (True, False, False), (True, True, True)
_ref = weakref.ref
_Tensor = None  # the Tensor class, set by tensor.py once it exists (tensor.py imports this module)


def _as_array(cls, raw):
    """What forward returned, as the ndarray the output will hold."""
    if isinstance(raw, _Tensor):
        return raw.data  # a fresh Tensor is made: never attach a node to an object forward may have saved
    if isinstance(raw, tuple):
        raise TypeError(f"{cls.__name__}.forward returned a tuple; a Function has exactly one output")
    return np.asarray(raw)


def _freed_message(node):
    return (
        f"Trying to backward through the graph a second time (op '{node.name()}'): its saved "
        "tensors were freed after the first backward. Pass retain_graph=True to the first "
        ".backward() if you need to backward through it again."
    )


def registry():
    """Name -> class of every differentiable op defined by minitensor."""
    return dict(_REGISTRY)

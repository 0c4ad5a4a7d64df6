r"""The replayed step's own kernels: an op's forward into buffers kept across steps, and a backward
that runs the recorded nodes in their recorded order (the speed layer, used by `Replay`).

A replayed forward calls each recorded op's `forward` on the new data (replay.py). Each call makes
its temporaries and its output afresh, and GELU's or LayerNorm's forward is a chain of a dozen
numpy calls, each writing a new array. For the ops of a transformer's step, this module has a
kernel that does the same numpy calls, in the same order and with the same operands, into buffers
the kernel allocates once, at the recording, and reuses at every replay (`out=`): the same bits,
fewer passes through the allocator and the cache. A kernel is only used for an entry of the tape
where it reproduced the recorded output bit for bit (`forward_kernels` tries it once on the
recording's own inputs); elsewhere the op's `forward` runs, as without this module. Replay's check
at its second call then compares the whole replayed forward, kernels included, with an eager run.

Reusing an output's memory at the next step is safe here because nothing outside the tape can hold
it: the step's Python does not run during a replay, the tape's tensors get their arrays rebound at
every step anyway, a gradient stored into `.grad` is a copy, and the loss (`CrossEntropy`, which has
no kernel) is a new array at every step. A replay that hands the caller an op's output must not
use that op's kernel (Replay drops the loss's): the caller may keep it while the next step runs.

`backward(order, pending)` is the engine's backward for a graph whose every node ran in the
recording: it calls the nodes in the recorded order (the engine's own order on a graph of this
shape) without recounting the graph, and sums the gradients that meet at a node as the engine does
(`a + b`, in the same order), so the gradients are the engine's bit for bit. It checks a gradient's
shape and dtype only where they differ from the input's (the engine's `_check_gradient` then runs,
with its error), and versions not at all: a replayed forward resets them, nothing runs between it
and the backward. A graph with a hook or a `retain_grad()` on any node or leaf goes to the engine.

Measured on the trainer's default model (one BLAS thread): docs/performance.md, 2026-11-28
"fused kernels". tests/minitensor/fast/test_fuse.py proves a replayed training with these equal to
one without them, bit for bit, and that each kernel is the op's forward.
"""
from __future__ import annotations

import copy
import math
from typing import Any, Callable

import numpy as np

from .._fperr import quiet
from ..autograd import grad_mode
from ..autograd.engine import _call_backward, _check_gradient, run_backward
from ..autograd.leaves import store_grad
from ..autograd.messages import freed_message
from ..nn.functional import LayerNorm, Linear
from ..ops.arithmetic import Add
from ..ops.unary import Gelu
from ..tensor import Tensor, post_accumulate_hooks
from . import vjps

ENABLED = True  # tests switch it off to compare with the plain replay
Kernel = Callable[[Any, tuple[Any, ...]], np.ndarray]


# ---- the forward's kernels ------------------------------------------------------------------------
def forward_kernels(tape: list[tuple[Any, ...]]) -> list[Kernel | None]:
    """For each entry (op, ctx, args, output, is a node) of a recorded tape, a kernel computing its
    output as the op's forward does (`kernel(ctx, args) -> array`), or None where there is none or it
    did not reproduce the recorded output bit for bit."""
    kernels: list[Kernel | None] = []
    for op, ctx, args, out, is_node in tape:
        make = MAKERS.get(op) if ENABLED else None
        kernel = make(args, out._array) if make is not None else None
        if kernel is not None and not _reproduces(kernel, ctx, args, out, is_node):
            kernel = None
        kernels.append(kernel)
    return kernels


def _reproduces(kernel, ctx, args, out, is_node):
    """Whether the kernel, run on the recorded inputs (on a copy of the node, whose saved state it
    sets), gives the recorded output, bit for bit, in a buffer of its own."""
    if not is_node or any(isinstance(a, Tensor) and np.shares_memory(a._array, out._array) for a in args):
        return False  # an in-place op, or an output that is a view of an input: the op's own forward
    try:
        got = kernel(copy.copy(ctx), args)
    except Exception:  # noqa: BLE001 (a kernel that can't run here is a kernel not used here)
        return False
    want = out._array
    return got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)


def _buffers():
    """A kernel's buffers, allocated at its first call (the recording) and reused after: {name: array}."""
    return {}


def _buffer(store, name, shape, dtype):
    buf = store.get(name)
    if buf is None or buf.shape != shape or buf.dtype != dtype:
        buf = store[name] = np.empty(shape, dtype)
    return buf


def _gelu_kernel(args, out):
    """`vjps.gelu_forward` with approximate='tanh': s = 1 / (1 + exp(-2 k (x + 0.044715 x^3))), out = x s,
    keeping s as the node's `step` for `vjps.gelu_backward`."""
    x, approximate = args
    if Gelu.fast_forward is not vjps.gelu_forward or approximate != "tanh" or out.dtype.kind != "f":
        return None
    store = _buffers()
    k = math.sqrt(2 / math.pi)

    def kernel(ctx, args):
        a = args[0]._array
        t = _buffer(store, "t", a.shape, a.dtype)
        step = _buffer(store, "step", a.shape, a.dtype)
        res = _buffer(store, "out", a.shape, a.dtype)
        np.multiply(a, 0.044715, out=t)   # 0.044715 x
        t *= a
        t *= a                            # 0.044715 x^3
        np.add(a, t, out=t)
        t *= k                            # u
        t *= -2
        np.exp(t, out=t)
        np.add(1, t, out=t)
        np.divide(1, t, out=step)         # s = sigmoid(2u)
        np.multiply(a, step, out=res)
        ctx.step = step
        return res

    return quiet(kernel, "over", "invalid")  # as Gelu's forward: inf and NaN at the limits, silently


def _layer_norm_kernel(args, out):
    """`vjps.layer_norm_forward` (row sums as `rows @ ones`), keeping xhat and rstd for its backward."""
    x, k, weight, bias, eps = args
    if LayerNorm.fast_forward is not vjps.layer_norm_forward or out.dtype.kind != "f":
        return None
    store = _buffers()

    def kernel(ctx, args):
        x, k, weight, bias, eps = args
        xd = x._array
        D = math.prod(xd.shape[xd.ndim - k:])
        M = xd.size // D
        rows = xd.reshape(M, D)
        ones = store.get("ones")
        if ones is None or ones.shape != (D,) or ones.dtype != xd.dtype:
            ones = store["ones"] = vjps.ones_vector(D, xd.dtype)
        mu = np.matmul(rows, ones, out=_buffer(store, "mu", (M,), xd.dtype))
        mu /= D
        d = np.subtract(rows, mu[:, None], out=_buffer(store, "xhat", (M, D), xd.dtype))
        square = np.multiply(d, d, out=_buffer(store, "square", (M, D), xd.dtype))
        var = np.matmul(square, ones, out=_buffer(store, "rstd", (M,), xd.dtype))
        var /= D
        var += float(eps)
        rstd = np.sqrt(var, out=var)
        np.reciprocal(rstd, out=rstd)
        if not rstd.all():
            rstd[rstd == 0] = np.nan  # a variance beyond the dtype: a NaN row, as the op's forward
        d *= rstd[:, None]
        ctx.xhat, ctx.rstd = d, rstd
        res = _buffer(store, "out", (M, D), xd.dtype)
        if weight is not None:
            np.multiply(d, weight._array.reshape(-1).astype(d.dtype, copy=False), out=res)
        else:
            np.copyto(res, d)
        if bias is not None:
            res += bias._array.reshape(-1).astype(d.dtype, copy=False)
        return res.reshape(xd.shape)

    return quiet(kernel, "over", "invalid")


def _linear_kernel(args, out):
    """`Linear.forward`: out = x2 W^T (+ b), x2 the rows of x, the product written into the buffer."""
    x, weight, bias = args
    if Linear.fast_forward is not None or out.dtype.kind != "f":
        return None
    store = _buffers()

    def kernel(ctx, args):
        x, weight, bias = args
        xd, w = x._array, weight._array
        rows = math.prod(xd.shape[:-1])
        res = _buffer(store, "out", (rows, w.shape[0]), np.result_type(xd, w))
        np.matmul(xd.reshape(rows, w.shape[1]), w.T, out=res)
        if bias is not None:
            res += bias._array
        return res.reshape(xd.shape[:-1] + w.shape[:1])

    return quiet(kernel, "over", "invalid")


def _add_kernel(args, out):
    """`Add.forward` on two float tensors of one dtype: np.add into the buffer."""
    a, b = args
    if Add.fast_forward is not None or not (isinstance(a, Tensor) and isinstance(b, Tensor)) \
            or a._array.dtype != b._array.dtype or out.dtype != a._array.dtype or out.dtype.kind != "f":
        return None
    store = _buffers()

    def kernel(ctx, args):
        a, b = args[0]._array, args[1]._array
        return np.add(a, b, out=_buffer(store, "out", np.broadcast_shapes(a.shape, b.shape), a.dtype))

    return kernel


MAKERS: dict[Any, Callable[[tuple[Any, ...], np.ndarray], Kernel | None]] = {
    Gelu: _gelu_kernel, LayerNorm: _layer_norm_kernel, Linear: _linear_kernel, Add: _add_kernel}


# ---- the backward -----------------------------------------------------------------------------------
def backward(order: list[Any], pending: dict[Any, Tensor]) -> None:
    """The engine's `run_backward(pending, retain_graph=True, create_graph=False)` on a replayed graph
    whose nodes the recording's backward ran in `order`; the engine itself when fusing is off, or
    when a node or leaf has a hook or `retain_grad()`."""
    if not ENABLED or _hooked(order):
        run_backward(pending, True, False)
        return
    modes = grad_mode.modes
    prev = modes.grad_enabled, modes.in_backward
    modes.grad_enabled, modes.in_backward = False, True  # as the engine: nothing records the VJPs
    try:
        for node in order:
            g = pending.pop(node, None)
            if g is None:
                continue
            if node.inputs is None:  # a node outside the recording, freed by an earlier backward
                raise RuntimeError(freed_message(node))
            grads = _call_backward(node, g)
            for i, child, shape, dtype in node.edges:
                gi = grads[i]
                if gi is None:
                    continue
                if type(gi) is not Tensor or gi._array.shape != shape or gi._array.dtype != dtype:
                    gi = _check_gradient(node, i, shape, dtype, gi)
                before = pending.get(child)
                # (a new array, as the engine's `a + b`: a VJP may hand one array to two inputs)
                pending[child] = gi if before is None else Tensor._make(np.add(before._array, gi._array))
    finally:
        modes.grad_enabled, modes.in_backward = prev
    for leaf, g in pending.items():  # only leaves are left
        if leaf._rg:
            store_grad(leaf, g, False)


def _hooked(order):
    """Whether anything in the graph asks for the engine's per-node work: a hook, retain_grad()."""
    for node in order:
        if node.hooks or node.retain:
            return True
        for _, child, _, _ in node.edges:
            if isinstance(child, Tensor) and (child._hooks or id(child) in post_accumulate_hooks):
                return True
    return False

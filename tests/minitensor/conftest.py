r"""The differential sweeps' harness (fixture `torch_sweep`): operands drawn once and built in both
libraries, an op run on each, and everything compared.

An operand is a Python scalar or a tensor: a leaf array of some dtype and a *view* of it, the
same view taken in both libraries (a gradient then flows through the view to the leaf, as a
user's would). Layouts: contiguous, transposed (`permute`), sliced with a step (`[..., ::2]`),
expanded along a size-1 dim (stride 0) and flipped (`flip`; minitensor's `x[::-1]` is a
documented difference from PyTorch, which rejects negative steps).

`check(name, fn, operands, seed)` runs `fn(lib, *operands)` with lib = PyTorch and minitensor,
weighs every output that requires grad with the same random upstream weight, backpropagates, and
compares: output shapes, dtypes (PyTorch's type promotion) and values (float32 at float32
tolerance, float64 tightly, NaN at the same places, integers exactly), the gradient of every float
leaf, and errors (where PyTorch raises, minitensor must raise a compatible exception type).
"""
import math
import types

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor

FLOATS = ("float32", "float64")
INTS = ("int64", "int32", "int16", "int8", "uint8")
DTYPES = FLOATS + INTS + ("bool",)
EDGES = (0.0, -0.0, math.inf, -math.inf, math.nan, 1e-30, -1e-30, 1e30, 1e-40, 5e-324)
LAYOUTS = ("contiguous", "transposed", "stepped", "expanded", "flipped")

# PyTorch raises NotImplementedError (a RuntimeError) where a kernel lacks a dtype ("bitwise_and_cpu"
# not implemented for 'Float'); minitensor's RuntimeError naming the op is what `except RuntimeError`
# catches in both
COMPATIBLE = {(NotImplementedError, RuntimeError)}


def elements(dtype, positive=False):
    """Values of `dtype`: small numbers and the dtype's extremes; for floats also EDGES."""
    d = np.dtype(dtype)
    if d.kind == "b":
        return st.booleans()
    if d.kind in "iu":
        info = np.iinfo(d)
        small = st.integers(1 if positive else max(info.min, -6), 6)
        return st.one_of(small, st.sampled_from([info.max] if positive else [info.max, info.min]))
    edges = [e for e in EDGES if not positive or e > 0]
    return st.one_of(st.floats(1e-3 if positive else -4, 4, width=32), st.sampled_from(edges))


class Operand:
    """A Python scalar (`value`), or a leaf array and the view of it that is the operand."""

    def __init__(self, value=None, leaf=None, view=None, layout=None, shape=None):
        self.value, self.leaf, self.view, self.layout = value, leaf, view, layout
        self.shape = shape if shape is not None or leaf is None else leaf.shape  # the view's shape

    def make(self, lib):
        """(the operand in `lib`, its leaf tensor or None)."""
        if self.leaf is None:
            return self.value, None
        leaf = lib.tensor(self.leaf.copy())
        if self.leaf.dtype.kind == "f":
            leaf.requires_grad_(True)
        return self.view(leaf), leaf

    def __repr__(self):
        if self.leaf is None:
            return repr(self.value)
        return f"{self.layout} view of {self.leaf!r}"


@st.composite
def tensors(draw, shape, dtypes=DTYPES, positive=False, layouts=LAYOUTS, values=None):
    """An Operand tensor of `shape`: a leaf of one of `dtypes`, seen through one of `layouts`.
    `values`: a strategy of its elements, or a function of the dtype giving one (or None: `elements`)."""
    shape = tuple(shape)
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    layout = draw(st.sampled_from(layouts))
    ndim = len(shape)
    if callable(values) and not isinstance(values, st.SearchStrategy):
        values = values(dtype)
    values = elements(dtype, positive) if values is None else values

    def leaf(leaf_shape):
        return draw(hnp.arrays(dtype, leaf_shape, elements=values))

    if layout == "transposed" and ndim >= 2:
        perm = tuple(reversed(range(ndim)))  # its own inverse
        return Operand(leaf=leaf(tuple(shape[i] for i in perm)), view=lambda t: t.permute(*perm), layout=layout,
                       shape=shape)
    if layout == "stepped" and ndim >= 1:
        return Operand(leaf=leaf(shape[:-1] + (2 * shape[-1],)), view=lambda t: t[..., ::2], layout=layout,
                       shape=shape)
    if layout == "expanded" and any(n != 1 for n in shape):
        d = draw(st.sampled_from([i for i, n in enumerate(shape) if n != 1]))
        return Operand(leaf=leaf(shape[:d] + (1,) + shape[d + 1:]), view=lambda t: t.expand(*shape), layout=layout,
                       shape=shape)
    if layout == "flipped" and ndim >= 1:
        return Operand(leaf=leaf(shape), view=lambda t: t.flip(0), layout=layout)
    return Operand(leaf=leaf(shape), view=lambda t: t, layout="contiguous")


def laid_out(array, layout):
    """An Operand holding the given `array` (an index a test computed, say) seen through `layout`, as
    `tensors` draws one: "transposed", "stepped" or "flipped" (no "expanded": given values need not
    repeat along a dim); a 0-d array is contiguous."""
    array = np.asarray(array)
    if array.ndim == 0 or layout not in ("transposed", "stepped", "flipped"):
        return Operand(leaf=array.copy(), view=lambda t: t, layout="contiguous")
    if layout == "transposed":
        perm = tuple(reversed(range(array.ndim)))  # its own inverse
        return Operand(leaf=array.transpose(perm).copy(), view=lambda t: t.permute(*perm), layout=layout,
                       shape=array.shape)
    if layout == "stepped":  # every element twice along the last dim; [..., ::2] takes one of each
        return Operand(leaf=np.repeat(array, 2, axis=-1), view=lambda t: t[..., ::2], layout=layout, shape=array.shape)
    return Operand(leaf=array[::-1].copy(), view=lambda t: t.flip(0), layout=layout)


def scalars(positive=False):
    """An Operand Python scalar: a bool, an int or a float (EDGES included)."""
    return st.one_of(
        st.just(True) if positive else st.booleans(),
        st.integers(1 if positive else -5, 5),
        st.floats(1e-3 if positive else -4, 4, width=32),
        st.sampled_from([e for e in EDGES if not positive or e > 0]),
    ).map(lambda v: Operand(value=v))


def broadcast_shapes(num, min_dims=0, max_dims=3, min_side=0, max_side=3):
    """`num` shapes that broadcast together (0-d and empty dims included)."""
    return hnp.mutually_broadcastable_shapes(num_shapes=num, min_dims=min_dims, max_dims=max_dims,
                                             min_side=min_side, max_side=max_side).map(lambda s: s.input_shapes)


# ---- running both libraries ------------------------------------------------------------------

def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _outputs(out):
    """An op's result as a flat tuple (a tuple or namedtuple of tensors, or one tensor)."""
    return tuple(out) if isinstance(out, tuple) else (out,)


def run(lib, fn, ops, seed, backward=True):
    """fn(lib, *operands), every output that requires grad weighed with a random upstream weight
    and (if `backward`) backpropagated: ([outputs as arrays], [gradient of each operand's leaf or
    None], [whether each output requires grad]), or (exception type, message)."""
    torch = pytest.importorskip("torch")
    made = [op.make(lib) for op in ops]
    try:
        outs = _outputs(fn(lib, *(m for m, _ in made)))
        roots = [o for o in outs if getattr(o, "requires_grad", False)]
        if roots and backward:
            rng = np.random.default_rng(seed)
            weights = [lib.tensor(rng.standard_normal(tuple(o.shape)).astype(_np(o).dtype)) for o in roots]
            (torch.autograd.backward if lib is torch else minitensor.autograd.backward)(roots, weights)
    except (RuntimeError, TypeError, ValueError, IndexError, OverflowError, ZeroDivisionError) as e:
        return type(e), str(e)
    grads = [None if leaf is None or leaf.grad is None else _np(leaf.grad) for _, leaf in made]
    return [_np(o) for o in outs], grads, [bool(getattr(o, "requires_grad", False)) for o in outs]


def _nothing_to_compute(ops, outputs):
    """An empty result or an empty operand (a product over an empty dim: zeros, from no kernel)."""
    return all(np.size(o) == 0 for o in outputs) or any(op.leaf is not None and 0 in op.shape for op in ops)


def tolerance(dtype):
    return (2e-5, 1e-6) if np.dtype(dtype) == np.float32 else (1e-10, 1e-12)


def _float32_involved(ops, outputs):
    """Whether a float32 operand or output took part: then every result is only float32-accurate
    (a float64 gradient that flowed through a float32 value, say)."""
    return any(op.leaf is not None and op.leaf.dtype == np.float32 for op in ops) or any(
        np.asarray(o).dtype == np.float32 for o in outputs)


def check(name, fn, ops, seed, grads=True, tol=None, compatible=()):
    """Run `fn` on the operands in PyTorch and in minitensor and compare everything (see the module
    docstring). `grads=False` compares the forward only; `tol(dtype) -> (rtol, atol)` overrides;
    `compatible`: more (PyTorch's exception type, minitensor's) pairs that count as the same error."""
    torch = pytest.importorskip("torch")
    want = run(torch, fn, ops, seed, backward=grads)
    got = run(minitensor, fn, ops, seed, backward=grads)
    where = f"{name} on {ops!r}"
    raised, torch_raised = isinstance(got[0], type), isinstance(want[0], type)
    if got[0] is RuntimeError and not torch_raised and _nothing_to_compute(ops, want[0]):
        return  # PyTorch runs no kernel on empty tensors, so it skips the kernel's dtype check; minitensor keeps it
    if raised or torch_raised:
        assert raised, f"{where}: PyTorch raises {want[0].__name__}: {want[1]}; minitensor returns {got}"
        assert torch_raised, f"{where}: minitensor raises {got[0].__name__}: {got[1]}; PyTorch returns {want}"
        assert got[0] is want[0] or (want[0], got[0]) in COMPATIBLE | set(compatible), (
            f"{where}: PyTorch raises {want[0].__name__}: {want[1]}; minitensor {got[0].__name__}: {got[1]}")
        return
    if tol is None:
        loose = _float32_involved(ops, want[0])
        tol = (lambda d: tolerance(np.float32)) if loose else tolerance
    assert len(got[0]) == len(want[0]), f"{where}: {len(got[0])} outputs, PyTorch {len(want[0])}"
    for i, (a, b) in enumerate(zip(got[0], want[0])):
        assert a.shape == b.shape and a.dtype == b.dtype, (
            f"{where} output {i}: {a.shape} {a.dtype}, PyTorch {b.shape} {b.dtype}")
        if a.dtype.kind in "biu":
            np.testing.assert_array_equal(a, b, err_msg=f"{where} output {i}")
        else:
            rtol, atol = tol(a.dtype)
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{where} output {i}")
    assert got[2] == want[2], f"{where}: outputs require grad {got[2]}, PyTorch's {want[2]}"
    if not grads:
        return
    for i, (a, b) in enumerate(zip(got[1], want[1])):
        assert (a is None) == (b is None), f"{where}: gradient of operand {i} is {a}, PyTorch's {b}"
        if a is not None:
            assert a.dtype == b.dtype, f"{where}: gradient of operand {i} has dtype {a.dtype}, PyTorch's {b.dtype}"
            rtol, atol = tol(a.dtype)
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"{where}: gradient of operand {i}")


@pytest.fixture(scope="session")
def torch_sweep():
    """The harness above, as a namespace: torch_sweep.tensors(shape), .check(name, fn, operands, seed) ..."""
    pytest.importorskip("torch")
    return types.SimpleNamespace(**{k: v for k, v in globals().items() if not k.startswith("_")})


@pytest.fixture
def as_torch():
    """Reprs as under `python -m minitensor.run`: the library named `torch` (`dtype=torch.float64`,
    `torch.return_types.max(`), as the PyTorch they are compared with prints them."""
    old, minitensor.Size.shown_as = minitensor.Size.shown_as, "torch"
    yield
    minitensor.Size.shown_as = old

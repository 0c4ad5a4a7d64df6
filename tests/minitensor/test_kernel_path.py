"""The kernel path of `Function.apply` (ops with a `kernel`) gives what the generic path gives.

For float tensors of one dtype (or a tensor and a Python number, on either side) such an op skips its forward
and records its node inline; these tests run both paths on the same inputs and compare the
values bit for bit, the node (class, inputs, edges, versions) and the gradients.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
from minitensor.autograd.function import Function, registry

KERNEL_OPS = sorted(name for name, cls in registry().items() if cls.__dict__.get("kernel") is not None)
generic_apply = Function.apply.__func__


def test_the_elementwise_ops_and_matmul_have_kernels():
    assert {"Add", "Sub", "Mul", "Div", "Pow", "Neg", "Exp", "Log", "Tanh", "Relu", "Sigmoid",
            "Matmul"} <= set(KERNEL_OPS)


def _is_unary(cls):
    return cls.forward.__code__.co_argcount == 2


def _inputs(cls, data, dtype):
    """One or two float tensors (random upstream weights come from the same draw), or a tensor and a number."""
    if _is_unary(cls):
        shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
        return [data.draw(hnp.arrays(dtype, shape, elements=st.floats(-5, 5, width=32)))]
    if cls.__name__ == "Matmul":
        n, k, m = (data.draw(st.integers(1, 4)) for _ in range(3))
        batch = data.draw(st.sampled_from([(), (2,)]))
        return [data.draw(hnp.arrays(dtype, batch + (n, k), elements=st.floats(-3, 3, width=32))),
                data.draw(hnp.arrays(dtype, (k, m), elements=st.floats(-3, 3, width=32)))]
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    a = data.draw(hnp.arrays(dtype, shapes.input_shapes[0], elements=st.floats(0.25, 4, width=32)))
    if data.draw(st.booleans()):  # a Python number operand, on either side: `x * 2` and `2 * x`
        number = data.draw(st.sampled_from([2, 0.5, -3.0, 0]))
        return [number, a] if data.draw(st.booleans()) else [a, number]
    return [a, data.draw(hnp.arrays(dtype, shapes.input_shapes[1], elements=st.floats(-4, 4, width=32)))]


@pytest.mark.parametrize("name", KERNEL_OPS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@given(data=st.data())
def test_kernel_path_equals_the_generic_path(name, dtype, data):
    cls = registry()[name]
    raw = _inputs(cls, data, dtype)
    needs = [isinstance(r, np.ndarray) and data.draw(st.booleans()) for r in raw]
    results = []
    for apply in (cls.apply, lambda *args: generic_apply(cls, *args)):
        args = [mt.tensor(r.copy(), requires_grad=n) if isinstance(r, np.ndarray) else r for r, n in zip(raw, needs)]
        for i, a in enumerate(args):  # distinct versions, so the recorded ones tell the inputs apart
            if isinstance(a, mt.Tensor):
                with mt.no_grad():
                    for _ in range(i + 1):
                        a.mul_(1.0)
        with np.errstate(all="ignore"):  # pow of a negative base, 0 ** -3: both paths give the same nan/inf
            out = apply(*args)
        node = out.grad_fn
        record = (out.data, out.requires_grad, type(node), node and [i for i, _ in node.edges],
                  node and node.versions)
        grads = None
        if out.requires_grad:
            weight = np.random.default_rng(0).standard_normal(out.shape).astype(dtype)
            with np.errstate(all="ignore"):
                (out * mt.tensor(weight)).sum().backward()
            grads = [a.grad.data for a in args if isinstance(a, mt.Tensor) and a.requires_grad]
        results.append((record, grads))
    (kernel_record, kernel_grads), (generic_record, generic_grads) = results
    np.testing.assert_array_equal(kernel_record[0], generic_record[0])
    assert kernel_record[0].dtype == generic_record[0].dtype
    assert kernel_record[1:] == generic_record[1:]
    if kernel_grads is not None:
        for k, g in zip(kernel_grads, generic_grads):
            np.testing.assert_array_equal(k, g)


def test_other_inputs_take_the_generic_path_and_its_errors():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    assert (x + mt.tensor([1, 2])).dtype == mt.float32  # float32 + int64: promoted by forward
    assert (mt.tensor([1, 2]) + mt.tensor([3, 4])).dtype == mt.int64  # integers: no kernel
    assert (x * np.float64(2.0)).dtype == mt.float32  # a numpy scalar is a weak number, as in PyTorch
    with pytest.raises(RuntimeError, match=r"add: shapes \(2,\) and \(3,\)"):
        x + mt.ones(3)
    with pytest.raises(RuntimeError, match="exp: expected a floating point tensor"):
        mt.tensor([1, 2]).exp()
    m = mt.ones(2, 2, requires_grad=True)
    for a, b in ((m, 2.0), (2.0, m), (mt.ones(2, 2, 2), 3)):  # a number on either side of a matmul
        with pytest.raises(RuntimeError, match=r"matmul: both arguments need at least 1 dimension"):
            a @ b


def test_a_subclass_that_redefines_forward_does_not_inherit_its_parents_kernel():
    class ShiftedExp(registry()["Exp"]):
        @staticmethod
        def forward(ctx, x):
            return np.exp(x.data) + 1

    x = mt.tensor([0.0, 1.0], dtype=mt.float64, requires_grad=True)
    out = ShiftedExp.apply(x)
    np.testing.assert_allclose(out.data, np.exp([0.0, 1.0]) + 1)
    assert type(out.grad_fn) is ShiftedExp


def test_anomaly_mode_takes_the_generic_path_that_checks_forward():
    x = mt.tensor([0.0, -1.0], requires_grad=True)
    with mt.autograd.detect_anomaly():
        with pytest.raises(mt.autograd.AnomalyError, match=r"op 'Log'.*produced nan in the forward pass"):
            x.log()  # -inf and nan from finite input: only the generic path checks for them

"""Products and a loss whose kernels take one dtype: float32 and float64 operands mixed are refused with
PyTorch's error (minitensor computed a promoted result instead), and a float64 weight leaves a float32
loss in float32; the losses PyTorch writes into a tensor of the input's dtype keep a float32 input's
dtype beside a float64 target."""
import numpy as np
import pytest

import minitensor as mt

F64, F32 = "float64", "float32"
CASES = [
    ("addmm", [(3, 5), (3, 4), (4, 5)], [F32, F64, F64]), ("addmm", [(3, 5), (3, 4), (4, 5)], [F64, F32, F64]),
    ("addmm", [(3, 5), (3, 4), (4, 5)], [F64, F64, F32]), ("addmm", [(5,), (3, 4), (4, 5)], [F32, F64, F64]),
    ("addmm", [(5,), (3, 4), (4, 5)], [F64, F64, F64]), ("addmv", [(3,), (3, 4), (4,)], [F32, F64, F64]),
    ("addmv", [(3,), (3, 4), (4,)], [F64, F64, F64]), ("baddbmm", [(2, 3, 5), (2, 3, 4), (2, 4, 5)], [F32, F64, F64]),
    ("addbmm", [(3, 5), (2, 3, 4), (2, 4, 5)], [F32, F64, F64]),
    ("cdist", [(3, 4), (5, 4)], [F32, F64]), ("cdist", [(3, 4), (5, 4)], [F64, F32]),
    ("cdist", [(3, 4), (5, 4)], [F64, F64]), ("linalg.vecdot", [(3, 4), (3, 4)], [F32, F64]),
    ("linalg.vecdot", [(3, 4), (3, 4)], [F64, F32]), ("linalg.vecdot", [(3, 4), (3, 4)], [F32, F32]),
]


def _op(lib, name):
    for part in name.split("."):
        lib = getattr(lib, part)
    return lib


def _call(lib, op, shapes, dtypes):
    rng = np.random.default_rng(0)
    args = [lib.tensor(rng.standard_normal(s).astype(d)) for s, d in zip(shapes, dtypes)]
    try:
        return "ok", str(_op(lib, op)(*args).dtype).split(".")[-1]
    except RuntimeError as e:
        return "RuntimeError", str(e)


@pytest.mark.parametrize("op, shapes, dtypes", CASES)
def test_a_product_of_mixed_dtypes_is_refused_as_pytorch_refuses_it(op, shapes, dtypes):
    ours = _call(mt, op, shapes, dtypes)
    assert (ours[0] == "ok") == (len(set(dtypes)) == 1)
    torch = pytest.importorskip("torch")
    assert ours == _call(torch, op, shapes, dtypes)


@pytest.mark.parametrize("dtypes", [(F64, F32, None), (F32, F64, None), (F32, F32, F64), (F64, F64, F32)])
def test_binary_cross_entropy_takes_one_dtype_and_keeps_the_inputs(dtypes):
    def call(lib):
        rng = np.random.default_rng(1)
        x, t = (lib.tensor(rng.uniform(0.1, 0.9, (3, 4)).astype(d)) for d in dtypes[:2])
        w = None if dtypes[2] is None else lib.tensor(rng.uniform(0.5, 2, 4).astype(dtypes[2]))
        try:
            out = lib.nn.functional.binary_cross_entropy(x, t, weight=w)
            return "ok", str(out.dtype).split(".")[-1], round(float(out), 6)
        except RuntimeError as e:
            return "RuntimeError", str(e)
    ours = call(mt)
    assert (ours[0] == "ok") == (dtypes[0] == dtypes[1]) and (ours[0] != "ok" or ours[1] == dtypes[0])
    torch = pytest.importorskip("torch")
    assert ours == call(torch)


@pytest.mark.parametrize("loss", ["huber_loss", "soft_margin_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_a_loss_written_into_the_inputs_dtype_keeps_it_beside_a_float64_target(loss, reduction):
    """PyTorch computes huber's elementwise loss in float64 and rounds it to the float32 input's dtype, and
    rounds soft-margin's y x there before its softplus: the same bits, not a float64 result."""
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((4, 5)).astype(np.float32) * 3, rng.standard_normal((4, 5)) * 3

    def call(lib):
        out = getattr(lib.nn.functional, loss)(lib.tensor(x, requires_grad=True), lib.tensor(y), reduction=reduction)
        return str(out.dtype).split(".")[-1], out.detach().numpy()
    dtype, ours = call(mt)
    assert dtype == "float32"
    torch = pytest.importorskip("torch")
    theirs_dtype, theirs = call(torch)
    assert theirs_dtype == dtype
    np.testing.assert_allclose(ours, theirs, rtol=2e-7 if reduction == "none" else 1e-6)


def test_soft_margin_loss_gradient_beside_a_float64_target_is_pytorchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x, y, w = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal((4, 5)), rng.standard_normal(())
    grads = []
    for lib in (mt, torch):
        xt = lib.tensor(x, requires_grad=True)
        (lib.nn.functional.soft_margin_loss(xt, lib.tensor(y)) * float(w)).backward()
        assert str(xt.grad.dtype).endswith("float32")
        grads.append(xt.grad.numpy())
    np.testing.assert_allclose(*grads, rtol=1e-5, atol=1e-7)

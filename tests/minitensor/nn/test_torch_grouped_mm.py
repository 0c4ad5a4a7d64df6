"""F.grouped_mm against PyTorch (values, gradients, dtypes, errors) and nn.UninitializedBuffer(persistent=False)
assigned as a module attribute: a non-persistent buffer in both libraries (issue 30 point 2)."""
import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

RNG = np.random.default_rng(30)


def _r(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


A2, B3, A3, B2, AK, BK = _r(6, 8), _r(2, 8, 8), _r(2, 4, 8), _r(8, 16), _r(4, 16), _r(16, 8)


def _offs(lib, values, dtype="int32"):
    return lib.tensor(values, dtype=getattr(lib, dtype))


# id -> (mat_a, mat_b, offs); the rows (columns) of the output each group writes are compared: PyTorch
# leaves those beyond offs[-1] uninitialized, where minitensor writes zeros
CASES = {
    "2d-3d": (A2, B3, [2, 4]),
    "2d-3d-full": (A2, B3, [2, 6]),
    "3d-2d": (A3, B2, [8, 12]),
    "2d-2d": (AK, BK, [8, 16]),
    "3d-3d": (A3, B3, None),
}


def _written(case, out):
    a, b, offs = CASES[case]
    if offs is None or (a.ndim == 2 and b.ndim == 2):
        return out
    return out[:offs[-1]] if b.ndim == 3 else out[:, :offs[-1]]


@pytest.mark.parametrize("case", list(CASES))
def test_values_and_gradients_match_pytorch(case):
    a, b, offs = CASES[case]
    results = []
    for lib, F in ((torch, torch.nn.functional), (mt, mt.nn.functional)):
        ta, tb = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = F.grouped_mm(ta, tb, offs=None if offs is None else _offs(lib, offs))
        written = _written(case, out)
        weight = lib.tensor(np.linspace(-1, 1, written.numel(), dtype=np.float32).reshape(tuple(written.shape)))
        (written * weight).sum().backward()
        ga, gb = ta.grad.numpy(), tb.grad.numpy()
        if offs is not None and b.ndim == 3:  # (PyTorch's gradient outside every group is uninitialized too)
            ga = ga[:offs[-1]]
        elif offs is not None and a.ndim == 3:
            gb = gb[:, :offs[-1]]
        results.append((written.detach().numpy(), ga, gb, str(out.dtype)))
    (tw, tga, tgb, tdt), (mw, mga, mgb, mdt) = results
    np.testing.assert_allclose(mw, tw, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mga, tga, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mgb, tgb, rtol=1e-5, atol=1e-5)
    assert mdt.split(".")[-1] == tdt.split(".")[-1]


def test_bfloat16_keeps_its_dtype():
    t = torch.nn.functional.grouped_mm(torch.tensor(A2).bfloat16(), torch.tensor(B3).bfloat16(),
                                       offs=_offs(torch, [2, 6]))
    m = mt.nn.functional.grouped_mm(mt.tensor(A2).bfloat16(), mt.tensor(B3).bfloat16(), offs=_offs(mt, [2, 6]))
    assert str(m.dtype).split(".")[-1] == "bfloat16" and tuple(m.shape) == tuple(t.shape)
    np.testing.assert_allclose(m.float().numpy(), t.float().numpy(), rtol=2e-2, atol=5e-2)


# id -> call(lib, F); both libraries refuse each with the same class
ERRORS = {
    "float64": lambda t, F: F.grouped_mm(t.tensor(A2).double(), t.tensor(B3).double(), offs=_offs(t, [2, 4])),
    "no-offs": lambda t, F: F.grouped_mm(t.tensor(A2), t.tensor(B3)),
    "offs-with-3d": lambda t, F: F.grouped_mm(t.tensor(A3), t.tensor(B3), offs=_offs(t, [2, 4])),
    "bias": lambda t, F: F.grouped_mm(t.tensor(A2), t.tensor(B3), offs=_offs(t, [2, 4]), bias=t.tensor(A2)),
    "out-dtype": lambda t, F: F.grouped_mm(t.tensor(A2), t.tensor(B3), offs=_offs(t, [2, 4]), out_dtype=t.float16),
    "int64-offs": lambda t, F: F.grouped_mm(t.tensor(A2), t.tensor(B3), offs=_offs(t, [2, 4], "int64")),
    "contraction": lambda t, F: F.grouped_mm(t.tensor(A2), t.tensor(_r(2, 16, 8)), offs=_offs(t, [2, 4])),
    "1d": lambda t, F: F.grouped_mm(t.tensor(A2[0]), t.tensor(B3), offs=_offs(t, [2, 4])),
    "mixed-dtypes": lambda t, F: F.grouped_mm(t.tensor(A2).bfloat16(), t.tensor(B3), offs=_offs(t, [2, 4])),
    "bad-keyword": lambda t, F: F.grouped_mm(t.tensor(A2), t.tensor(B3), offsets=_offs(t, [2, 4])),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_pytorch(case):
    with pytest.raises(Exception) as theirs:
        ERRORS[case](torch, torch.nn.functional)
    with pytest.raises(theirs.type) as ours:
        ERRORS[case](mt, mt.nn.functional)
    assert "grouped_mm" in str(ours.value)


def test_offsets_out_of_order_are_refused():
    """PyTorch does not check them (its output is then garbage); minitensor names them."""
    with pytest.raises(RuntimeError, match=r"offs must increase.*\[4, 2\]"):
        mt.nn.functional.grouped_mm(mt.tensor(A2), mt.tensor(B3), offs=_offs(mt, [4, 2]))


def _buffers(lib):
    nn = lib.nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.UninitializedBuffer(persistent=False)
            self.b = nn.UninitializedBuffer()
            self.register_buffer("c", nn.UninitializedBuffer(persistent=False))

    m = M()
    seen = [sorted(m.state_dict(keep_vars=True)), [n for n, _ in m.named_buffers()]]
    m.a = nn.UninitializedBuffer()  # now persistent
    m.b = nn.UninitializedBuffer(persistent=False)  # now not
    seen.append(sorted(m.state_dict(keep_vars=True)))
    m.b = lib.zeros(3)  # a plain tensor keeps the buffer's persistence
    seen.append(sorted(m.state_dict(keep_vars=True)))
    return seen


def test_uninitialized_buffer_assigned_is_a_buffer_with_its_persistence():
    assert _buffers(mt) == _buffers(torch)
    assert _buffers(mt)[0] == ["b", "c"]

"""Tensor reprs against PyTorch's, under the runner's naming (`torch.`): number formats, line
wrapping at 80 columns, summarization past 1000 elements, empty and 0-d tensors, the dtype suffix,
requires_grad and grad_fn with PyTorch's node names."""
import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

rng = np.random.default_rng(0)
F32 = np.float32
ARRAYS = {
    "ints": np.arange(12).reshape(3, 4), "negative ints": np.array([-5, 100, 3]),
    "floats": rng.standard_normal((3, 4)).astype(F32), "whole floats": np.array([1.0, -2.0, 300.0], F32),
    "above 1e8": np.array([1e9, 1.0], F32), "below 1e-4": np.array([1e-5, 1.0], F32),
    "span over 1000": np.array([0.001, 10.0, 5.5], F32), "whole span": np.array([1.0, 5000.0], F32),
    "0-d": np.array(3.25, F32), "0-d int": np.array(7), "0-d tiny": np.array(1e-7, F32),
    "empty": np.zeros((0,), F32), "empty 2-d": np.zeros((0, 3), F32), "empty int": np.zeros((0,), np.int64),
    "empty float64": np.zeros((2, 0)), "large": rng.standard_normal(2000).astype(F32),
    "large 2-d": rng.standard_normal((40, 50)).astype(F32), "3-d": rng.standard_normal((2, 3, 4)).astype(F32),
    "large 3-d": rng.standard_normal((10, 10, 11)).astype(F32),
    "4-d": rng.standard_normal((2, 2, 2, 2)).astype(F32), "wide": rng.standard_normal((2, 30)).astype(F32),
    "wide ints": np.arange(60).reshape(2, 30) * 1000, "float64": np.array([1.5, 2.0]), "bool": np.array([True, False]),
    "nan and inf": np.array([np.nan, np.inf, -np.inf, 1.0], F32), "nan whole": np.array([np.nan, 2.0], F32),
    "all nan": np.array([np.nan, np.nan], F32), "int32": np.array([1, 2], np.int32), "zeros": np.zeros(3, F32),
    "large ints": np.arange(3000), "float16": np.array([0.1, 2.0], np.float16), "uint8": np.array([1, 255], np.uint8),
    "negative zero": np.array([-0.0, 1.5], F32), "big whole": np.array([123456789.0, 1.0]),
}


@pytest.mark.parametrize("name", ARRAYS)
def test_repr_matches_pytorch(name, as_torch):
    a = ARRAYS[name]
    assert repr(mt.tensor(a)) == repr(torch.tensor(a))


GRAPHS = {
    "leaf": lambda L, x: x,
    "mul": lambda L, x: x * 2,
    "add": lambda L, x: x + 1,
    "sub": lambda L, x: x - 1,
    "div": lambda L, x: x / 3,
    "sum": lambda L, x: x.sum(),
    "mean": lambda L, x: x.mean(),
    "mm": lambda L, x: x @ L.ones(3, 2),
    "softmax": lambda L, x: x.softmax(-1),
    "log_softmax": lambda L, x: x.log_softmax(-1),
    "exp": lambda L, x: x.exp(),
    "tanh": lambda L, x: x.tanh(),
    "relu": lambda L, x: x.relu(),
    "neg": lambda L, x: -x,
    "pow": lambda L, x: x ** 2,
    "view": lambda L, x: x.view(6),
    "permute": lambda L, x: x.permute(1, 0),
    "cat": lambda L, x: L.cat([x, x]),
    "double": lambda L, x: x.double(),
    "clamp": lambda L, x: x.clamp(0, 1),
    "select": lambda L, x: x[0],
}


@pytest.mark.parametrize("name", GRAPHS)
def test_grad_fn_in_the_repr_matches_pytorch(name, as_torch):
    data = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    a = GRAPHS[name](mt, mt.tensor(data, requires_grad=True))
    b = GRAPHS[name](torch, torch.tensor(data, requires_grad=True))
    assert repr(a) == repr(b)


def test_print_options_match_pytorch(as_torch):
    a = rng.standard_normal(30).astype(np.float32)
    cases = [dict(precision=2), dict(sci_mode=True), dict(linewidth=40), dict(threshold=10, edgeitems=2),
             dict(profile="short"), dict(profile="full")]
    try:
        for options in cases:
            mt.set_printoptions(**options)
            torch.set_printoptions(**options)
            assert repr(mt.tensor(a)) == repr(torch.tensor(a)), options
            assert repr(mt.arange(2000)) == repr(torch.arange(2000)), options
    finally:
        mt.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


def test_dtype_reprs_under_the_runner(as_torch):
    for name in ("float32", "float64", "int64", "bool", "bfloat16"):
        if name != "bfloat16":
            assert repr(mt.ones(0, dtype=getattr(mt, name))) == repr(torch.ones(0, dtype=getattr(torch, name)))
    if mt._dtype.has_bfloat16:  # numpy's dtype (ml_dtypes'); its tensors print PyTorch's suffix
        assert repr(mt.ones(2, dtype=mt.bfloat16)) == repr(torch.ones(2, dtype=torch.bfloat16))
    else:
        assert repr(mt.bfloat16) == repr(torch.bfloat16)

"""F.scaled_dot_product_attention: PyTorch's signature, values, gradients and errors, built from
minitensor's own ops (so explain() shows each step)."""
import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck
from minitensor.testing import assert_close

RNG = np.random.default_rng(7)


def rnd(*shape):
    return RNG.standard_normal(shape)


def _blind_rows_mask(shape):
    """A bool mask hiding every key from query row 1 (and some keys from the others)."""
    m = RNG.random(shape) > 0.3
    m[..., 0] = True
    m[..., 1, :] = False
    return m


def _float_mask(shape):
    m = np.where(_blind_rows_mask(shape), rnd(*shape) * 0.5, -np.inf)
    return m


CASES = {
    "plain_4d": ((rnd(2, 3, 4, 8), rnd(2, 3, 5, 8), rnd(2, 3, 5, 6)), {}),
    "plain_2d": ((rnd(4, 3), rnd(5, 3), rnd(5, 2)), {}),
    "broadcast_batch": ((rnd(3, 8), rnd(2, 5, 8), rnd(2, 5, 8)), {}),
    "scale": ((rnd(2, 4, 8), rnd(2, 5, 8), rnd(2, 5, 6)), {"scale": 0.3}),
    "causal_square": ((rnd(2, 2, 5, 4), rnd(2, 2, 5, 4), rnd(2, 2, 5, 4)), {"is_causal": True}),
    "causal_rectangular": ((rnd(2, 3, 4), rnd(2, 6, 4), rnd(2, 6, 3)), {"is_causal": True}),
    "bool_mask_2d": ((rnd(2, 2, 4, 8), rnd(2, 2, 5, 8), rnd(2, 2, 5, 6)), {"attn_mask": ("bool", (4, 5))}),
    "bool_mask_padding": ((rnd(2, 2, 4, 8), rnd(2, 2, 5, 8), rnd(2, 2, 5, 6)), {"attn_mask": ("bool", (2, 1, 1, 5))}),
    "bool_mask_blind_rows": ((rnd(2, 2, 4, 8), rnd(2, 2, 5, 8), rnd(2, 2, 5, 6)),
                             {"attn_mask": ("blind", (2, 2, 4, 5))}),
    "float_mask": ((rnd(2, 4, 8), rnd(2, 5, 8), rnd(2, 5, 6)), {"attn_mask": ("float", (4, 5))}),
    "float_mask_blind_rows": ((rnd(2, 4, 8), rnd(2, 5, 8), rnd(2, 5, 6)), {"attn_mask": ("float_blind", (2, 4, 5))}),
    "gqa": ((rnd(2, 4, 3, 8), rnd(2, 2, 5, 8), rnd(2, 1, 5, 6)), {"enable_gqa": True}),
}


def _mask(kind, shape):
    if kind == "bool":
        return RNG.random(shape) > 0.3
    if kind == "blind":
        return _blind_rows_mask(shape)
    if kind == "float":
        return rnd(*shape)
    return _float_mask(shape)


def _run(lib, F_, arrays, kw, mask_array):
    tensors = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    kw = dict(kw)
    if mask_array is not None:
        mask = lib.tensor(mask_array)
        if mask.dtype != lib.bool:
            mask = mask.to(lib.float64).requires_grad_(True)  # a learnable bias gets a gradient too
            tensors.append(mask)
        kw["attn_mask"] = mask
    out = F_.scaled_dot_product_attention(*tensors[:3], **kw)
    weight = lib.tensor(np.random.default_rng(0).standard_normal(tuple(out.shape)))
    (out * weight).sum().backward()
    grads = [t.grad.detach().numpy() if hasattr(t.grad, "detach") else None for t in tensors]
    return out.detach().numpy(), grads


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_same_as_torch(name):
    torch = pytest.importorskip("torch")
    arrays, kw = CASES[name]
    mask_array = _mask(*kw.pop("attn_mask")) if "attn_mask" in kw else None
    out_m, grads_m = _run(mt, F, arrays, kw, mask_array)
    out_t, grads_t = _run(torch, torch.nn.functional, arrays, kw, mask_array)
    assert out_m.shape == out_t.shape
    assert_close(out_m, out_t, rtol=1e-10, atol=1e-12)
    for gm, gt in zip(grads_m, grads_t):
        assert_close(gm, gt, rtol=1e-10, atol=1e-12)
        assert np.isfinite(gm).all()


def test_a_query_that_sees_no_key_gets_zero_output_and_zero_gradient():
    q = mt.randn(1, 3, 4, requires_grad=True)
    k, v = mt.randn(1, 5, 4, requires_grad=True), mt.randn(1, 5, 6, requires_grad=True)
    mask = mt.ones(3, 5, dtype=mt.bool)
    mask[1] = False
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert (out[0, 1] == 0).all()
    out.sum().backward()
    assert (q.grad[0, 1] == 0).all() and mt.isfinite(k.grad).all() and mt.isfinite(v.grad).all()


def test_float32_in_float32_out():
    q, k, v = mt.randn(2, 3, 4), mt.randn(2, 5, 4), mt.randn(2, 5, 4)
    assert F.scaled_dot_product_attention(q, k, v, is_causal=True).dtype == mt.float32


def test_gradcheck_with_mask_and_blind_rows():
    q, k, v = (mt.tensor(rnd(2, 4, 3), requires_grad=True), mt.tensor(rnd(2, 5, 3), requires_grad=True),
               mt.tensor(rnd(2, 5, 2), requires_grad=True))
    bias = mt.tensor(_float_mask((4, 5)), requires_grad=True)
    mask = mt.tensor(_blind_rows_mask((2, 4, 5)))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.7), [q, k, v])
    assert gradcheck(lambda q, k, v, b: F.scaled_dot_product_attention(q, k, v, attn_mask=b), [q, k, v, bias])


def test_dropout_drops_weights_from_minitensors_generator():
    q, k, v = mt.randn(2, 4, 8), mt.randn(2, 6, 8), mt.randn(2, 6, 3)
    mt.manual_seed(3)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.4)
    mt.manual_seed(3)
    weights = F.dropout(F.softmax(q @ k.mT / math.sqrt(8), dim=-1), p=0.4)
    assert_close(out, weights @ v)
    assert not mt.allclose(out, F.scaled_dot_product_attention(q, k, v))


def test_each_step_is_a_node_of_its_own(node_names):
    q = mt.randn(2, 3, 4, requires_grad=True)
    k, v = mt.randn(2, 5, 4, requires_grad=True), mt.randn(2, 5, 4, requires_grad=True)
    names = node_names(F.scaled_dot_product_attention(q, k, v, attn_mask=mt.ones(3, 5, dtype=mt.bool).tril()))
    for step in ("MatmulBackward", "MulBackward", "WhereBackward", "SoftmaxBackward"):
        assert step in names, f"{step} missing from {names}"
    assert mt.autograd.explain(F.scaled_dot_product_attention(q, k, v, is_causal=True).sum())


BAD = {
    "one_dimensional": (lambda lib: (lib.randn(4), lib.randn(4), lib.randn(4)), {}),
    "key_last_dim": (lambda lib: (lib.randn(2, 3, 4), lib.randn(2, 5, 3), lib.randn(2, 5, 6)), {}),
    "value_length": (lambda lib: (lib.randn(2, 3, 4), lib.randn(2, 5, 4), lib.randn(2, 4, 6)), {}),
    "batch_dims": (lambda lib: (lib.randn(2, 3, 4), lib.randn(3, 5, 4), lib.randn(3, 5, 6)), {}),
    "heads_without_gqa": (lambda lib: (lib.randn(2, 4, 3, 8), lib.randn(2, 2, 5, 8), lib.randn(2, 2, 5, 8)), {}),
    "gqa_heads_dont_divide": (lambda lib: (lib.randn(2, 4, 3, 8), lib.randn(2, 3, 5, 8), lib.randn(2, 3, 5, 8)),
                              {"enable_gqa": True}),
    "dtypes_differ": (lambda lib: (lib.randn(2, 3, 4), lib.randn(2, 5, 4), lib.randn(2, 5, 6, dtype=lib.float64)), {}),
    "integer_inputs": (lambda lib: (lib.ones(2, 3, 4, dtype=lib.long), lib.ones(2, 5, 4, dtype=lib.long),
                                    lib.ones(2, 5, 6, dtype=lib.long)), {}),
    "mask_and_causal": (lambda lib: (lib.randn(3, 4), lib.randn(5, 4), lib.randn(5, 6)),
                        {"attn_mask": ("bool", (3, 5)), "is_causal": True}),
    "mask_shape": (lambda lib: (lib.randn(3, 4), lib.randn(5, 4), lib.randn(5, 6)), {"attn_mask": ("bool", (4, 4))}),
    "mask_bigger_than_scores": (lambda lib: (lib.randn(1, 3, 4), lib.randn(1, 5, 4), lib.randn(1, 5, 6)),
                                {"attn_mask": ("bool", (2, 3, 5))}),
    "mask_integer": (lambda lib: (lib.randn(3, 4), lib.randn(5, 4), lib.randn(5, 6)), {"attn_mask": ("long", (3, 5))}),
    "mask_other_float": (lambda lib: (lib.randn(3, 4), lib.randn(5, 4), lib.randn(5, 6)),
                         {"attn_mask": ("float64", (3, 5))}),
    "dropout_above_one": (lambda lib: (lib.randn(3, 4), lib.randn(5, 4), lib.randn(5, 6)), {"dropout_p": 1.5}),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_what_torch_raises(name):
    torch = pytest.importorskip("torch")
    make, kw = BAD[name]

    def call(lib):
        args = dict(kw)
        if "attn_mask" in args:
            dtype, shape = args["attn_mask"]
            args["attn_mask"] = lib.ones(*shape, dtype=getattr(lib, dtype))
        fn = torch.nn.functional.scaled_dot_product_attention if lib is torch else F.scaled_dot_product_attention
        return fn(*make(lib), **args)

    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(expected.type, match="scaled_dot_product_attention"):
        call(mt)


def test_a_float_mask_row_of_only_minus_inf_is_a_query_that_sees_no_key():
    """A float attn_mask hides with -inf as a bool mask hides with False: that query gets 0, and 0 gradient."""
    q = mt.randn(1, 3, 4, dtype=mt.float64, requires_grad=True)
    k, v = mt.randn(1, 5, 4, dtype=mt.float64), mt.randn(1, 5, 6, dtype=mt.float64)
    bias = mt.randn(3, 5, dtype=mt.float64)
    bias[1] = -math.inf
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    assert (out[0, 1] == 0).all() and mt.isfinite(out).all()
    out.sum().backward()
    assert (q.grad[0, 1] == 0).all() and mt.isfinite(q.grad).all()


def test_the_functional_is_attend_with_pytorchs_masks_turned_into_attends():
    """F.scaled_dot_product_attention is nn.attention.attend, bit for bit: a bool attn_mask is attend's
    mask, is_causal the lower triangle, a float attn_mask its bias (its -inf entries also hidden)."""
    from minitensor.nn.attention import attend

    q, k, v = (mt.randn(2, 3, 4, dtype=mt.float64) for _ in range(3))
    causal = mt.ones(3, 3, dtype=mt.bool).tril()
    bias = mt.randn(3, 3, dtype=mt.float64).masked_fill(causal.logical_not(), -math.inf)
    for kw, want in (({"attn_mask": causal}, {"mask": causal}), ({"is_causal": True}, {"mask": causal}),
                     ({"attn_mask": bias}, {"mask": causal, "bias": bias}), ({}, {})):
        got = F.scaled_dot_product_attention(q, k, v, **kw)
        assert np.array_equal(got.numpy(), attend(q, k, v, **want)[0].numpy()), kw

"""torch.nn.attention.bias: the two causal masks for L queries and S keys, as PyTorch makes them and as
scaled_dot_product_attention applies them."""
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor.nn import attention_bias as bias
from minitensor.run import torch_is_minitensor

SIZES = [(1, 1), (2, 5), (5, 2), (4, 4), (3, 7), (7, 3)]


@pytest.mark.parametrize("size", SIZES)
def test_each_mask_is_pytorchs(size):
    torch_bias = pytest.importorskip("torch.nn.attention.bias")
    for name in ("causal_upper_left", "causal_lower_right"):
        with warnings.catch_warnings(record=True) as ours_said:
            warnings.simplefilter("always")
            ours = getattr(bias, name)(*size)
        with warnings.catch_warnings(record=True) as theirs_said:
            warnings.simplefilter("always")
            theirs = getattr(torch_bias, name)(*size)
        assert [str(w.message) for w in ours_said] == [str(w.message) for w in theirs_said]
        np.testing.assert_array_equal(ours._materialize().numpy(), theirs._materialize().numpy())
        np.testing.assert_array_equal(ours.numpy(), theirs._materialize().numpy())
        assert (int(ours.variant), ours.seq_len_q, ours.seq_len_kv) == (int(theirs.variant), *size)
        assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("size", [(2, 5), (4, 4), (3, 7), (5, 2)])
@pytest.mark.filterwarnings("ignore:Lower right causal bias")
def test_attention_under_each_mask_is_pytorchs(size):
    torch = pytest.importorskip("torch")
    import torch.nn.attention.bias as torch_bias
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, n, 4)) for n in (size[0], size[1], size[1]))
    for name in ("causal_upper_left", "causal_lower_right"):
        outs, grads = [], []
        for lib, module in ((mt, bias), (torch, torch_bias)):
            query = lib.tensor(q, requires_grad=True)
            out = lib.nn.functional.scaled_dot_product_attention(query, lib.tensor(k), lib.tensor(v),
                                                                 getattr(module, name)(*size))
            (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum().backward()
            outs.append(out.detach().numpy())
            grads.append(query.grad.numpy())
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_upper_left_is_is_causal_and_lower_right_differs():
    rng = np.random.default_rng(1)
    q, k = mt.tensor(rng.standard_normal((1, 2, 2, 4))), mt.tensor(rng.standard_normal((1, 2, 6, 4)))
    F = mt.nn.functional
    upper = F.scaled_dot_product_attention(q, k, k, bias.causal_upper_left(2, 6))
    assert mt.equal(upper, F.scaled_dot_product_attention(q, k, k, is_causal=True))
    assert not mt.allclose(upper, F.scaled_dot_product_attention(q, k, k, bias.causal_lower_right(2, 6)))


def test_the_bias_is_a_tensor_and_refuses_what_pytorch_refuses():
    b = bias.causal_lower_right(3, 4)
    assert isinstance(b, mt.Tensor) and b.dtype == mt.bool and not b.requires_grad
    assert b.variant is bias.CausalVariant.LOWER_RIGHT and bias.CausalVariant.UPPER_LEFT == 1
    with pytest.raises(AssertionError, match="causal_upper_left only supports 2D tensors"):
        bias.causal_upper_left(2, 3, 4)
    with pytest.raises(AssertionError, match="causal_lower_right only supports 2D tensors"):
        bias.causal_lower_right(2)
    with pytest.raises(AssertionError, match="CausalVariant"):
        bias.CausalBias(1, 2, 3)


def test_a_script_imports_it_from_torch_nn_attention_bias():
    with torch_is_minitensor():
        from torch.nn.attention.bias import CausalBias, CausalVariant, causal_lower_right  # noqa: F401
        assert causal_lower_right(2, 3).variant is CausalVariant.LOWER_RIGHT

"""`torch.nn.attention`'s choice of attention kernel and `torch.backends.cuda`'s flags, against PyTorch's CPU
build: which choices run (on minitensor's one math path) and which raise PyTorch's error, and the flags
as PyTorch keeps them."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.backends.cuda as mt_cuda
from minitensor.autograd.torch_names import torch_node_name
from minitensor.nn.attention import SDPBackend, sdpa_kernel

torch = pytest.importorskip("torch")
from torch.nn.attention import SDPBackend as TorchBackend, sdpa_kernel as torch_kernel  # noqa: E402

Q = np.random.default_rng(0).standard_normal((1, 2, 4, 8)).astype(np.float32)
CHOICES = [["MATH"], ["FLASH_ATTENTION"], ["EFFICIENT_ATTENTION"], ["CUDNN_ATTENTION"], ["OVERRIDEABLE"], ["ERROR"],
           [], ["EFFICIENT_ATTENTION", "MATH"], ["CUDNN_ATTENTION", "FLASH_ATTENTION"], "MATH", None]


def attend_under(lib, backend_enum, kernel, choice):
    if isinstance(choice, list) and len(choice) == 1:
        backends = getattr(backend_enum, choice[0])  # one backend, not in a list
    elif isinstance(choice, list):
        backends = [getattr(backend_enum, name) for name in choice]
    else:
        backends = choice  # a string or None: not a backend
    q = lib.tensor(Q)
    try:
        with kernel(backends):
            return lib.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).numpy()
    except (RuntimeError, AssertionError) as error:
        return type(error), str(error)


@pytest.mark.parametrize("choice", CHOICES, ids=str)
def test_a_choice_of_kernels_runs_or_fails_as_pytorchs_cpu_build(choice):
    ours = attend_under(mt, SDPBackend, sdpa_kernel, choice)
    theirs = attend_under(torch, TorchBackend, torch_kernel, choice)
    if isinstance(theirs, tuple):
        assert ours == theirs
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_the_flags_are_kept_and_restored_as_pytorchs():
    names = ["flash", "mem_efficient", "math", "cudnn"]
    libs = (mt_cuda, torch.backends.cuda)

    def flags():  # [ours, PyTorch's]
        return [[getattr(lib, f"{n}_sdp_enabled")() for n in names] for lib in libs]

    try:
        assert flags() == [[True] * 4] * 2
        for lib in libs:
            lib.enable_flash_sdp(False)
        with sdpa_kernel(SDPBackend.MATH), torch_kernel(TorchBackend.MATH):
            assert flags() == [[False, False, True, False]] * 2
        assert flags() == [[False, True, True, True]] * 2  # flash stays off: it was off before the block
        for lib in libs:
            lib.enable_math_sdp(False)
        q = mt.tensor(Q)
        with pytest.raises(RuntimeError, match="No viable backend"):  # neither math nor flash may run
            mt.nn.functional.scaled_dot_product_attention(q, q, q)
        with sdpa_kernel([SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION]):  # switched on inside the block
            mt.nn.functional.scaled_dot_product_attention(q, q, q)
    finally:
        for lib in libs:
            for n in names:
                getattr(lib, f"enable_{n}_sdp")(True)


def test_the_backends_print_as_pytorchs():
    for name in ("MATH", "FLASH_ATTENTION", "ERROR"):
        ours, theirs = getattr(SDPBackend, name), getattr(TorchBackend, name)
        assert (repr(ours), str(ours), ours.name, ours.value) == (repr(theirs), str(theirs), theirs.name, theirs.value)


def _layouts(lib):
    """(name, q, k, v, keyword arguments) for the query layouts and calls that pick PyTorch's CPU kernel."""
    rng = np.random.default_rng(1)

    def t(*shape):
        return lib.tensor(rng.standard_normal(shape).astype(np.float32))
    k, v = t(2, 3, 6, 4), t(2, 3, 6, 4)
    return [
        ("contiguous", t(2, 3, 5, 4), k, v, {}),
        ("B,T,H,D", t(2, 5, 3, 4).transpose(1, 2), k, v, {}),
        ("from a chunk", t(2, 5, 36)[..., :12].view(2, 5, 3, 4).transpose(1, 2), k, v, {}),
        ("H,B,T,D", t(3, 2, 5, 4).transpose(0, 1), k, v, {}),
        ("T,B,H,D", t(5, 2, 3, 4).permute(1, 2, 0, 3), k, v, {}),
        ("one query", t(2, 1, 3, 4).transpose(1, 2), k, v, {}),
        ("one head", t(2, 5, 1, 4).transpose(1, 2), k[:, :1], v[:, :1], {}),
        ("expanded batch", t(1, 3, 5, 4).expand(2, 3, 5, 4), k, v, {}),
        ("causal", t(2, 5, 3, 4).transpose(1, 2), k, v, dict(is_causal=True)),
        ("float mask", t(2, 5, 3, 4).transpose(1, 2), k, v, dict(attn_mask=t(5, 6))),
        ("3-d mask: math", t(2, 5, 3, 4).transpose(1, 2), k, v, dict(attn_mask=t(3, 5, 6))),
        ("dropout: math", t(2, 5, 3, 4).transpose(1, 2), k, v, dict(dropout_p=0.5)),
        ("broadcast batch: math", t(1, 5, 3, 4).transpose(1, 2), k, v, {}),
        ("value head size: math", t(2, 5, 3, 4).transpose(1, 2), k, t(2, 3, 6, 7), {}),
        ("3-d: math", t(5, 3, 4).transpose(0, 1), k[0], v[0], {}),
    ]


def _memory_order(strides, shape):
    """The dims of size > 1, outermost first: what decides whether a later `view` works."""
    return [d for d in sorted(range(len(shape)), key=lambda d: -strides[d]) if shape[d] > 1]


LAYOUTS = ["contiguous", "B,T,H,D", "from a chunk", "H,B,T,D", "T,B,H,D", "one query", "one head", "expanded batch",
           "causal", "float mask", "3-d mask: math", "dropout: math", "broadcast batch: math",
           "value head size: math", "3-d: math"]


@pytest.mark.parametrize("index", range(len(LAYOUTS)), ids=LAYOUTS)
@pytest.mark.parametrize("only_math", [False, True])
def test_the_output_is_laid_out_and_named_as_pytorchs_kernel_lays_it_out(index, only_math):
    """PyTorch's CPU flash kernel allocates its output like the query (the SDPA tutorial's
    `y.transpose(1, 2).view(B, T, H * D)` relies on it); its math path returns a contiguous product."""
    results = []
    for lib, backend, kernel in ((mt, SDPBackend, sdpa_kernel), (torch, TorchBackend, torch_kernel)):
        name, q, k, v, kwargs = _layouts(lib)[index]
        assert name == LAYOUTS[index]
        q.requires_grad_(True)
        lib.manual_seed(0)
        with kernel(backend.MATH if only_math else [backend.FLASH_ATTENTION, backend.MATH]):
            out = lib.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs)
        try:
            viewed = out.transpose(-3, -2).view(*out.shape[:-3], out.shape[-2], -1).shape
        except RuntimeError:
            viewed = "refused"
        node = type(out.grad_fn).__name__ if lib is torch else torch_node_name(out.grad_fn)
        results.append((_memory_order(out.stride(), out.shape), node, viewed if viewed == "refused" else tuple(viewed)))
    assert results[0] == results[1]


def test_the_flash_layout_changes_no_number():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 5, 3, 4))
    grads = []
    for kernels in ([SDPBackend.FLASH_ATTENTION], [SDPBackend.MATH]):
        q = mt.tensor(x, requires_grad=True)
        with sdpa_kernel(kernels):
            out = mt.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), q.transpose(1, 2),
                                                                q.transpose(1, 2), is_causal=True)
        (out * mt.tensor(rng.standard_normal(out.shape))).sum().backward()
        grads.append((out.detach().numpy().copy(), q.grad.numpy()))
        rng = np.random.default_rng(2)
        rng.standard_normal((2, 5, 3, 4))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])

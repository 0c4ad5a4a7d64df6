"""`torch.nn.attention`'s choice of attention kernel and `torch.backends.cuda`'s flags, against PyTorch's CPU
build: which choices run (on minitensor's one math path) and which raise PyTorch's error, and the flags
as PyTorch keeps them."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.backends.cuda as mt_cuda
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

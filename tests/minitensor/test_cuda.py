"""minitensor.cuda and minitensor.backends answer as a PyTorch build without a GPU does."""
import pytest

import minitensor as mt


def test_cuda_reports_no_gpu_and_seeding_it_does_nothing():
    state = mt.get_rng_state()
    assert mt.cuda.is_available() is False
    assert mt.cuda.device_count() == 0
    assert mt.cuda.manual_seed(1) is None and mt.cuda.manual_seed_all(1) is None
    assert mt.get_rng_state() == state  # the CPU generator is not the GPU's


def test_backends_report_no_accelerator():
    assert mt.backends.mps.is_available() is False and mt.backends.mps.is_built() is False
    assert mt.backends.cudnn.is_available() is False
    mt.backends.cudnn.deterministic, mt.backends.cudnn.benchmark = True, False  # what seeding scripts write


def test_the_device_line_of_a_tutorial_runs_on_the_cpu():
    device = "cuda" if mt.cuda.is_available() else "cpu"
    model = mt.nn.Linear(3, 2).to(device)
    x = mt.randn(4, 3).to(device)
    assert model(x).shape == (4, 2)
    assert mt.device(device) == x.device
    dev = mt.device("cuda" if mt.cuda.is_available() else "cpu")
    assert x.to(dev) is x


def test_same_answers_as_a_torch_build_without_a_gpu():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available() or torch.backends.mps.is_available():
        pytest.skip("this PyTorch sees a GPU")
    assert mt.cuda.is_available() == torch.cuda.is_available()
    assert mt.cuda.device_count() == torch.cuda.device_count()
    assert mt.backends.mps.is_available() == torch.backends.mps.is_available()
    assert mt.backends.cudnn.is_available() == torch.backends.cudnn.is_available()

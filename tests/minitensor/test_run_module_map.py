"""The torch modules tutorials import resolve under the runner (`import torch.xyz`, `from torch.xyz import
name`), and the modules left out are each named on the compatibility page, so a gap is documented."""
import importlib
import re
from pathlib import Path

import pytest

from minitensor import run as runner

DOC = (Path(__file__).resolve().parents[2] / "docs" / "pytorch_compatibility.md").read_text()

# module -> the names tutorials take from it
IMPORTED = {
    "torch": ["tensor", "no_grad", "manual_seed", "float32"],
    "torch.nn": ["Module", "Linear", "Sequential"],
    "torch.nn.functional": ["relu", "cross_entropy", "scaled_dot_product_attention"],
    "torch.nn.init": ["xavier_uniform_", "zeros_"],
    "torch.nn.utils": ["clip_grad_norm_", "parameters_to_vector"],
    "torch.nn.utils.rnn": ["pad_sequence", "pack_padded_sequence"],
    "torch.nn.utils.clip_grad": ["clip_grad_norm_", "clip_grad_value_"],
    "torch.nn.utils.stateless": ["functional_call"],
    "torch.nn.parameter": ["Parameter"],
    "torch.nn.modules": ["Module"],
    "torch.nn.modules.module": ["Module"],
    "torch.nn.modules.loss": ["_Loss", "_WeightedLoss", "CrossEntropyLoss", "MSELoss"],
    "torch.nn.modules.activation": ["ReLU", "MultiheadAttention"],
    "torch.nn.modules.linear": ["Linear", "Identity"],
    "torch.nn.modules.conv": ["Conv2d", "_ConvNd"],
    "torch.nn.modules.container": ["Sequential", "ModuleList"],
    "torch.nn.modules.normalization": ["LayerNorm"],
    "torch.nn.modules.dropout": ["Dropout"],
    "torch.nn.modules.sparse": ["Embedding"],
    "torch.nn.modules.rnn": ["LSTM", "GRU"],
    "torch.nn.modules.pooling": ["MaxPool2d"],
    "torch.nn.modules.batchnorm": ["BatchNorm1d", "_BatchNorm"],
    "torch.nn.modules.transformer": ["TransformerEncoderLayer"],
    "torch.optim": ["Adam", "SGD", "Optimizer"],
    "torch.optim.lr_scheduler": ["StepLR", "LambdaLR"],
    "torch.optim.optimizer": ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"],
    "torch.optim.swa_utils": ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn"],
    "torch.utils.data": ["DataLoader", "Dataset", "TensorDataset"],
    "torch.utils.data.dataloader": ["default_collate"],
    "torch.utils.checkpoint": ["checkpoint", "checkpoint_sequential"],
    "torch.profiler": ["profile", "record_function", "ProfilerActivity", "schedule", "tensorboard_trace_handler"],
    "torch.autograd.profiler": ["profile", "record_function", "EventList", "FunctionEvent"],
    "torch.autograd.graph": ["Node", "increment_version", "saved_tensors_hooks", "register_multi_grad_hook"],
    "torch.utils.benchmark": ["Timer", "Measurement", "Compare"],
    "torch.nn.attention.bias": ["causal_lower_right", "causal_upper_left", "CausalBias", "CausalVariant"],
    "torch.autograd": ["Function", "grad"],
    "torch.autograd.functional": ["jacobian"],
    "torch.func": ["functional_call", "vmap"],
    "torch.testing": ["assert_close"],
    "torch.types": ["Number"],
    "torch.cuda": ["is_available"],
    "torch.cuda.amp": ["autocast", "GradScaler"],
    "torch.amp": ["autocast", "GradScaler"],
    "torch.backends.cudnn": ["benchmark"],
    "torch.distributions": ["Normal", "Categorical"],
    "torch.distributions.transforms": ["ExpTransform", "AffineTransform"],
    "torch.distributions.transformed_distribution": ["TransformedDistribution"],
    "torch.distributions.cauchy": ["Cauchy"],
    "torch.distributions.chi2": ["Chi2"],
    "torch.distributions.kl": ["kl_divergence"],
    "torch.linalg": ["norm"],
    "torch.special": ["erf"],
    "torch.serialization": ["add_safe_globals"],
    "torch.autograd.forward_ad": ["dual_level", "make_dual", "unpack_dual"],
    "torch.signal.windows": ["hann"],
    "torch.nn.utils.fusion": ["fuse_conv_bn_eval"],
}


@pytest.mark.parametrize("module", sorted(IMPORTED))
def test_a_module_tutorials_import_resolves_with_its_names(module):
    with runner.torch_is_minitensor():
        mod = importlib.import_module(module)
        assert mod.__name__ == module
        for name in IMPORTED[module]:
            exec(f"from {module} import {name}", {})
            assert getattr(mod, name) is not None


def test_every_torch_distributions_submodule_minitensor_has_is_mapped():
    folder = Path(runner.__file__).resolve().parent / "distributions"
    mine = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")} - {"folded", "kl_extra"}
    assert mine and all(f"torch.distributions.{m}" in runner.MODULES for m in mine)


# tutorials' modules minitensor leaves out: each is named on the compatibility page, and stops a script
LEFT_OUT = ["torch.fft", "torch.sparse", "torch.jit", "torch.distributed", "torch.multiprocessing", "torch.hub",
            "torch.nested", "torch.export", "torch.fx", "torch.ao", "torch.quantization",
            "torch.nn.parallel", "torch.nn.attention.flex_attention",
            "torch.utils.cpp_extension"]


def _section(title):
    return DOC.split(f"\n## {title}\n")[1].split("\n## ")[0]


@pytest.mark.parametrize("module", LEFT_OUT)
def test_a_module_left_out_is_documented_and_stops_the_script(module):
    assert re.search(rf"`{re.escape(module)}`", _section("Not supported")), f"{module} is not in 'Not supported'"
    with runner.torch_is_minitensor(), pytest.raises(ImportError, match=re.escape(module)):
        importlib.import_module(module)


def test_the_stand_ins_are_documented_as_stand_ins():
    differs = _section("Differs on purpose")
    for module in ("torch.utils.checkpoint", "torch.cuda.amp"):
        assert module in runner.MODULES and f"`{module}" in differs
        assert f"`{module}`" not in _section("Not supported")

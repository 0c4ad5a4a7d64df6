"""The runner: PyTorch scripts run unmodified on minitensor and print what they print under PyTorch;
a torch name minitensor lacks stops them with one line naming it and where it was used."""
import configparser
import contextlib
import importlib
import io
import math
import os
import re
import runpy
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import minitensor as mt
from minitensor import run as runner

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "run_scripts"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def run_on_minitensor(script, *args):
    """`python -m minitensor.run script args` in a fresh interpreter, with this worktree's code."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "minitensor.run", str(script), *map(str, args)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


def run_on_torch(script, *args):
    """The same script with the real PyTorch, in this process; its printed output."""
    return run_in_process(script, False, *args)[0]


def assert_same_output(ours, theirs, rel=2e-5):
    """Line by line, the same text, and numbers equal to float32 training precision."""
    ours, theirs = ours.splitlines(), theirs.splitlines()
    assert len(ours) == len(theirs), (ours, theirs)
    for a, b in zip(ours, theirs):
        assert NUMBER.sub("#", a) == NUMBER.sub("#", b), (a, b)
        for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
            # (1e-6: values printed to 6 decimals may round to neighbours; 1.01 as 0.048344 - 0.048343 > 1e-6 in floats)
            assert math.isclose(float(x), float(y), rel_tol=rel, abs_tol=1.01e-6), (a, b)


# float32 rounding differences between the libraries grow with the optimizer steps: the seq2seq
# script's 80 Adam steps drift to ~3e-5 (run in float64, both print the same 12 digits).
LONGER_TRAINING = {"gru_seq2seq_attention.py": 1e-4}


@pytest.mark.slow  # runs each script with minitensor and with PyTorch
@pytest.mark.parametrize("script, uses_dir", [
    ("gpt_manual_attention.py", False),
    ("mlp_dataloader_checkpoint.py", True),
    ("bag_of_tokens_classifier.py", False),
    ("transformer_encoder_classifier.py", False),
    ("gru_seq2seq_attention.py", False),
    ("lstm_word_language_model.py", False),
])
def test_tutorial_scripts_print_what_pytorch_prints(script, uses_dir, tmp_path):
    ours_dir, theirs_dir = tmp_path / "ours", tmp_path / "theirs"
    ours_dir.mkdir(), theirs_dir.mkdir()
    done = run_on_minitensor(SCRIPTS / script, *([ours_dir] if uses_dir else []))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    if uses_dir:  # sys.argv reached the script, and the checkpoint is minitensor's pickle-free format
        assert "same outputs after reload: True" in done.stdout and "equal True" in done.stdout
        assert isinstance(mt.load(ours_dir / "checkpoint.pt")["epoch"], int)
    assert_same_output(done.stdout, run_on_torch(SCRIPTS / script, *([theirs_dir] if uses_dir else [])),
                       rel=LONGER_TRAINING.get(script, 2e-5))


def run_in_process(script, on_minitensor, *args):
    """The script's printed output and its warnings' messages, run here (no interpreter to start): with
    `torch` as minitensor (the runner's own `run`), or with the real PyTorch."""
    if not on_minitensor:
        pytest.importorskip("torch")
    out, argv, args = io.StringIO(), sys.argv, [str(a) for a in args]
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
            warnings.simplefilter("always")
            if on_minitensor:
                runner.run(str(script), args)
            else:
                sys.argv = [str(script), *args]
                runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = argv
    return out.getvalue(), sorted({str(w.message) for w in caught})


# The official tutorials' idioms, one tutorial a script, each run as written for PyTorch: what they print
# (reprs included: grad_fn names, modules, tensors) and what they warn must be PyTorch's.
@pytest.mark.slow  # compares with PyTorch
@pytest.mark.parametrize("script", [
    "polynomial_sin_fit.py",          # Learning PyTorch with Examples
    "lenet_neural_networks.py",       # Neural Networks
    "quickstart_build_optimize.py",   # Build the Neural Network, Optimizing Model Parameters
    "tensor_basics.py",               # Tensors
    "autograd_basics.py",             # Automatic Differentiation, A Gentle Introduction to torch.autograd
    "char_rnn_classification.py",     # NLP From Scratch: Classifying Names with a Character-Level RNN
    "lstm_pos_tagger.py",             # Sequence Models and Long Short-Term Memory Networks
    "transformer_lm_save_load.py",    # Language Modeling with nn.Transformer, Saving and Loading Models
    # the second sweep: idioms the scripts above do not reach
    "nn_really_refactors.py",         # What is torch.nn really?
    "vae_reparameterize.py",          # the VAE example
    "dqn_reinforce_gridworld.py",     # Reinforcement Learning (DQN) Tutorial, the REINFORCE example
    "dcgan_miniature.py",             # DCGAN Tutorial
    "cbow_ngram_embeddings.py",       # Word Embeddings: Encoding Lexical Semantics
    "lr_schedulers.py",               # torch.optim: How to adjust learning rate
    "func_jacobians_hessians.py",     # torch.func: Jacobians, Hessians, hvp, vhp; Per-sample-gradients
    "nanogpt_generate_sampling.py",   # nanoGPT's generate and top-k / top-p sampling
    # the third sweep (h-tut9)
    "fgsm_adversarial.py",            # Adversarial Example Generation (FGSM)
    "style_transfer_lbfgs.py",        # Neural Transfer Using PyTorch (gram matrix, LBFGS with a closure)
    "transfer_learning_finetune.py",  # Transfer Learning for Computer Vision (frozen backbone, new head)
    "module_hooks_introspection.py",  # the Modules note: hooks, named_modules, load_state_dict(strict=False)
    "distillation_contrastive.py",    # Knowledge Distillation Tutorial, an InfoNCE loss, nn.init
    "custom_function_double_backward.py",  # Extending PyTorch, Double Backward with Custom Functions, WGAN-GP
    # h-prune
    "pruning_tutorial.py",            # Pruning Tutorial (torch.nn.utils.prune)
    "parametrizations_tutorial.py",   # Parametrizations Tutorial (h-param), and nn.utils.parametrizations
    # h-mods: modules the runner maps since (swa_utils, utils.checkpoint, cuda.amp, testing, nn.modules.loss)
    "swa_checkpoint_amp.py",          # torch.optim's SWA recipe, activation checkpointing, the old AMP spelling
    "forward_ad_tutorial.py",         # Forward-mode Automatic Differentiation (Beta): torch.autograd.forward_ad
    "saved_tensors_hooks_tutorial.py",  # Hooks for autograd saved tensors (grad_fn._saved_*, saved_tensors_hooks)
    # h-tut2: the torch.func tutorials, custom Functions and the recipes
    "per_sample_grads_cnn.py",        # Per-sample-gradients (a CNN: functional_call, vmap(grad(...)))
    "model_ensembling.py",            # Model ensembling (stack_module_state, vmap with in_dims)
    "neural_tangent_kernels.py",      # Neural Tangent Kernels (jacrev contraction, and vjp/jvp products)
    "func_custom_function.py",        # Extending torch.func with autograd.Function (setup_context, vmap, jvp)
    "fuse_conv_bn_custom_function.py",  # Fusing Convolution and Batch Norm using Custom Function (torch.nn.grad)
    "zeroing_out_gradients.py",       # recipe: Zeroing out gradients in PyTorch
    "warmstarting_model.py",          # recipe: Warmstarting model using parameters from a different model
    "changing_default_device.py",     # recipe: Changing default device
    # h-tut3
    "char_rnn_generation.py",         # NLP From Scratch: Generating Names with a Character-Level RNN
    "spatial_transformer.py",         # Spatial Transformer Networks (affine_grid, grid_sample)
    "reproducibility_notes.py",       # the Reproducibility notes (seeds, deterministic algorithms, Generator)
    "autograd_mechanics_broadcasting.py",  # the Broadcasting semantics and Autograd mechanics notes
    "d2l_from_scratch.py",            # Dive into Deep Learning's from-scratch chapters, without the d2l package
])
def test_tutorial_idioms_print_and_warn_what_pytorch_does(script):
    ours, our_warnings = run_in_process(SCRIPTS / script, on_minitensor=True)
    theirs, their_warnings = run_in_process(SCRIPTS / script, on_minitensor=False)
    assert_same_output(ours, theirs)
    assert our_warnings == [w for w in their_warnings if not w.startswith(NOT_GIVEN)]


# PyTorch's warning that TransformerEncoder can't take its nested-tensor path (batch_first=False here):
# minitensor has no such path and does not give it (docs/pytorch_compatibility.md, the Transformer family).
# And PyTorch's own deprecation of torch.jit.script, which its torch.func forward mode (jacfwd, hessian)
# calls while it sets itself up, once a process: about PyTorch's internals, not the script's code.
NOT_GIVEN = ("enable_nested_tensor is True, but self.use_nested_tensor is False", "`torch.jit.script` is deprecated")


def test_a_missing_name_is_one_line_naming_it_and_the_script_line(tmp_path):
    script = tmp_path / "uses_fft.py"
    script.write_text("import torch\n\nx = torch.ones(4)\nprint('before')\ny = torch.fft.rfft(x)\nprint('after')\n")
    done = run_on_minitensor(script)
    assert done.returncode == 2 and done.stdout == "before\n"
    assert done.stderr == f"minitensor.run: torch.fft is not available in minitensor (used at {script}:5)\n"


@pytest.mark.parametrize("line, missing", [
    ("import torch.fft", "torch.fft"),
    ("from torch import fft", "torch.fft"),
    ("from torch.nn import Linear, SyncBatchNorm", "torch.nn.SyncBatchNorm"),
    ("import torch.nn.functional as F; F.scaled_mm(torch.ones(1))", "torch.nn.functional.scaled_mm"),
    ("torch.ops.aten", "torch.ops"),  # minitensor.ops is minitensor's own, not torch.ops
    ("from torch.utils.data import DistributedSampler", "torch.utils.data.DistributedSampler"),
    ("from torch.nn.attention.flex_attention import flex_attention", "torch.nn.attention.flex_attention"),  # unmapped
])
def test_each_way_of_reaching_a_missing_name_gives_the_runner_error(line, missing, tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text(f"import torch\n{line}\n")
    assert runner.main([str(script)]) == 2
    err = capsys.readouterr().err
    assert err == f"minitensor.run: {missing} is not available in minitensor (used at {script}:2)\n"


def test_the_scripts_own_fallbacks_still_work(tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text(textwrap.dedent("""\
        import torch
        import torch.nn.functional as F
        try:
            import torch.compile
        except ImportError:
            print("no compile")
        print(hasattr(F, "scaled_mm"), hasattr(F, "softmax"), getattr(torch, "fft", None))
        print(__name__)
    """))
    assert runner.main([str(script)]) == 0
    assert capsys.readouterr().out == "no compile\nFalse True None\n__main__\n"


def test_other_errors_keep_their_traceback(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import torch\nraise KeyError('mine')\n")
    with pytest.raises(KeyError, match="mine"):
        runner.main([str(script)])


def test_help_and_usage(capsys, tmp_path):
    assert runner.main(["--help"]) == 0 and "python -m minitensor.run script.py" in capsys.readouterr().out
    assert runner.main([]) == 2 and "usage" in capsys.readouterr().err
    assert runner.main([str(tmp_path / "nope.py")]) == 2 and "nope.py" in capsys.readouterr().err


def test_the_console_script_calls_main():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    entry = dict(line.split(" = ") for line in cfg["options.entry_points"]["console_scripts"].strip().splitlines())
    module, _, func = entry["minitensor-run"].partition(":")
    assert getattr(importlib.import_module(module), func) is runner.main


def test_reprs_say_torch_only_while_mapped():
    torch = pytest.importorskip("torch")
    real = torch
    before = set(sys.meta_path), repr(mt.zeros(2, 3).shape)
    assert not any(isinstance(f, runner._TorchFinder) for f in sys.meta_path)  # import minitensor alone
    expected = repr(real.zeros(2, 3).shape), repr(real.ones(2, dtype=real.float64))
    with runner.torch_is_minitensor():
        import torch
        assert torch.zeros is mt.zeros and torch.nn.Linear is mt.nn.Linear
        assert (repr(torch.zeros(2, 3).shape), repr(torch.ones(2, dtype=torch.float64))) == expected
    assert sys.modules["torch"] is real and (set(sys.meta_path), repr(mt.zeros(2, 3).shape)) == before
    assert before[1] == "minitensor.Size([2, 3])"


def test_everything_is_put_back_after_a_failing_script(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import sys, torch\nassert sys.argv == [__file__, 'a', '-b']\nraise ValueError('x')\n")
    argv, path, meta = list(sys.argv), list(sys.path), list(sys.meta_path)
    with pytest.raises(ValueError):
        runner.run(str(script), ["a", "-b"])
    assert (sys.argv, sys.path, sys.meta_path, mt.Size.shown_as) == (argv, path, meta, "minitensor")


@pytest.mark.slow  # times SDPA and a module with torch.utils.benchmark, on both libraries
def test_the_sdpa_tutorials_timing_and_profiling_run_as_in_pytorch(tmp_path):
    """PyTorch's SDPA tutorial, on the CPU and small: torch.utils.benchmark, nn.attention's kernel choice,
    `.transpose(1, 2).view(...)` on SDPA's output, torch.compile and torch.profiler. The times differ;
    every line around them is PyTorch's."""
    script = SCRIPTS / "sdpa_tutorial_timing.py"
    done = run_on_minitensor(script, tmp_path)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert (tmp_path / "compiled_causal_attention_trace.json").exists()
    pytest.importorskip("torch")
    theirs = run_on_torch(script, tmp_path)
    assert [NUMBER.sub("#", line) for line in done.stdout.splitlines()] == \
        [NUMBER.sub("#", line) for line in theirs.splitlines()]

"""docs/pytorch_compatibility.md stays true: what it lists as supported resolves through the runner's
mapping of torch onto minitensor; what it lists as not supported gives the runner's clear error."""
import functools
import importlib
import re
from pathlib import Path

import pytest

from minitensor import run as runner

DOC = (Path(__file__).resolve().parents[2] / "docs" / "pytorch_compatibility.md").read_text()


def names_in(section):
    """The `torch.xyz` names in backticks in the doc's section `## {section}`."""
    body = DOC.split(f"\n## {section}\n")[1].split("\n## ")[0]
    return sorted(set(re.findall(r"`(torch(?:\.\w+)*)`", body)))


def resolve(name):
    """Look `name` up as a script would (import torch, then attribute by attribute), torch being minitensor."""
    with runner.torch_is_minitensor():
        return functools.reduce(getattr, name.split(".")[1:], importlib.import_module("torch"))


def test_the_doc_lists_names():
    # (the "Not supported" list shrinks as names are added: this only checks that both parse)
    assert len(names_in("Supported")) > 150 and len(names_in("Not supported")) >= 5


@pytest.mark.parametrize("name", names_in("Supported"))
def test_supported_names_resolve(name):
    assert resolve(name) is not None


@pytest.mark.parametrize("name", names_in("Not supported"))
def test_unsupported_names_give_the_runner_error(name):
    with pytest.raises(runner.NotInMinitensor, match=f"^{re.escape(name)} is not available in minitensor"):
        resolve(name)


@pytest.mark.parametrize("module", [n for n in runner.MODULES if n in names_in("Supported")])
def test_supported_modules_import(module):
    with runner.torch_is_minitensor():
        assert importlib.import_module(module).__name__ == module


def recurrent_section():
    """The `torch.xyz` names of '## Recurrent layers'."""
    body = DOC.split("\n## Recurrent layers\n")[1].split("\n## ")[0]
    return sorted(set(re.findall(r"`(torch(?:\.\w+)*)`", body)))


def test_the_recurrent_section_lists_names():
    assert len(recurrent_section()) >= 8 and "torch.nn.utils.rnn.PackedSequence" in recurrent_section()


@pytest.mark.parametrize("name", recurrent_section())
def test_supported_recurrent_names_resolve(name):
    assert resolve(name) is not None

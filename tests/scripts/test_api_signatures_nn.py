"""scripts/api_signatures_nn.py against the installed PyTorch: every signature of the nn, optim and data
names, and every torch.nn layer built with its defaults (state-dict keys, shapes, repr), matches
PyTorch's, but for the differences docs/pytorch_compatibility.md lists with their reasons; and the
comparison itself tells the differences it is meant to find."""
import importlib.util
import inspect
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("api_signatures_nn", ROOT / "scripts" / "api_signatures_nn.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sig = _load()
DOCUMENTED = sig.documented()


def _mismatches(results):
    return {label: why for out in results.values() for label, why in out["mismatch"].items()}


@pytest.fixture(scope="module")
def signatures():
    return sig.check_signatures()


def test_every_signature_matches_or_is_documented(signatures):
    found = _mismatches(signatures)
    undocumented = {label: why for label, why in found.items() if label not in DOCUMENTED}
    assert not undocumented, "\n".join(f"{label}: {why}" for label, why in undocumented.items())
    stale = [label for label in DOCUMENTED if label not in found]
    assert not stale, f"documented as different but now matching (remove the row): {stale}"


def test_most_names_are_checked(signatures):
    checked = sum(len(out["match"]) + len(out["mismatch"]) for out in signatures.values())
    unreadable = sum(len(out["uncheckable"]) for out in signatures.values())
    assert checked > 400 and unreadable < 20, (checked, unreadable)
    assert "torch.nn.functional.conv2d" in signatures["torch.nn.functional"]["match"]  # read from the docstring
    assert "torch.optim.AdamW.step" in signatures["torch.optim"]["match"]


def test_every_layer_built_by_default_has_pytorchs_state_dict_and_repr():
    out = sig.check_modules()
    bad = {label: why for label, why in out["mismatch"].items() if label not in DOCUMENTED}
    assert not bad, "\n".join(f"{label}: {why}" for label, why in bad.items())
    assert len(out["match"]) > 150 and not out["uncheckable"]


# ---- the comparison finds what it should ----
def _f(a, b=1, *, c=None): ...


@pytest.mark.parametrize("other, expected", [
    (lambda a, b=1, *, c=None: None, "match"),
    (lambda a, b=2, *, c=None: None, "b default 2 (PyTorch: 1)"),
    (lambda a, b=1, c=None: None, "c is positional or keyword (PyTorch: keyword-only)"),
    (lambda a, c=None, *, b=1: None, "order differs"),
    (lambda a, b=1: None, "lacks c"),
    (lambda a, b=1, *, c=None, d=0: None, "has extra d"),
    (lambda a, b=True, *, c=None: None, "b default True (PyTorch: 1)"),  # a bool is not the number 1
    (lambda a, b=1.0, *, c=None: None, "match"),  # 1 and 1.0: equal values
])
def test_compare_reports_each_kind_of_difference(other, expected):
    verdict, why = sig.compare(_f, other)
    assert (verdict == "match") if expected == "match" else (verdict == "mismatch" and expected in why), why


def test_signatures_from_docstrings_and_uncheckable_ones():
    def builtin_like(*args, **kwargs):
        """pool(input, kernel_size, stride=None, lower=1./8) -> Tensor"""
    found = sig._docstring_signature(builtin_like, "pool")
    assert [(p.name, p.default) for p in found.parameters.values()] == [
        ("input", inspect.Parameter.empty), ("kernel_size", inspect.Parameter.empty), ("stride", None),
        ("lower", 0.125)]
    assert sig.compare(builtin_like, lambda input, kernel_size, stride=None, lower=0.125: None, "pool")[0] == "match"
    assert sig.compare(builtin_like, lambda input, kernel_size, stride=0, lower=0.125: None, "pool")[0] == "mismatch"

    def opaque(*args, **kwargs):
        """Applies something."""
    assert sig.compare(opaque, lambda x: None)[0] == "uncheckable"


def test_the_documented_table_parses():
    assert {"torch.nn.RNN", "torch.nn.GRU", "torch.utils.data.Sampler"} <= set(DOCUMENTED)
    assert all(len(reason) > 20 for reason in DOCUMENTED.values())
    with pytest.raises(ValueError, match="3 cells"):
        sig.documented(f"\n{sig.TABLE_HEADING}\n\n| a | b |\n|---|---|\n| `x` | y |\n")

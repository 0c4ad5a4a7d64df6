"""scripts/api_errors.py against the installed PyTorch (issue 30 point 2): every in-scope name of torch,
torch.Tensor, F, nn, linalg and special, called on the sweep's bad inputs, raises PyTorch's exception class
(or returns PyTorch's result) and changes nothing it was given when it raises, but for the differences
docs/pytorch_compatibility.md lists under "Errors"; and the comparison itself tells the differences it is
meant to find."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("api_errors", ROOT / "scripts" / "api_errors.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("api_errors", module)  # (its dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


errors = _load()


@pytest.fixture(scope="module")
def rows():
    return errors.sweep()


def test_every_difference_from_pytorch_is_documented(rows):
    undocumented = [r for r in rows if r.kind in errors.DIFFERENCES and not r.documented]
    assert not undocumented, "\n".join(f"{r.label} [{r.case}] {r.kind}: {r.detail}" for r in undocumented)


def test_no_failed_call_changes_its_inputs(rows):
    """the lazy layers included: they check the input before they take their shapes from it (PyTorch's
    take them first, so a refused input leaves them initialised)"""
    mutated = [r for r in rows if r.kind == "mutated"]
    assert not mutated, "\n".join(f"{r.label} [{r.case}]: {r.detail}" for r in mutated)


def test_the_sweep_reaches_every_namespace(rows):
    for namespace in errors.NAMESPACES:
        assert sum(r.namespace == namespace for r in rows) >= 100, namespace


def test_the_documented_tables_parse_and_name_real_cases():
    doc = errors.documented()
    assert doc and set(doc.values()) <= {"kept", "open"}
    cases = {"0-d", "5-d", "int", "bool", "str-input", "no-broadcast", "mixed-float", "dim=5", "dim=-4", "bad-keyword",
             "init-bad-keyword", "init-str", "forward-0-d", "forward-5-d", "forward-int"}
    for name, case in doc:
        assert name.startswith("torch."), name
        assert case in cases or case.startswith("str-") or "*" in case, case


# ---- the comparison finds what it is meant to find --------------------------------------------------

def test_a_class_of_pytorch_own_is_matched_by_name_or_builtin_base():
    assert errors._same_class(RuntimeError("x"), NotImplementedError("x"))  # a subclass is fine
    assert not errors._same_class(NotImplementedError("x"), RuntimeError("x"))
    assert not errors._same_class(TypeError("x"), AttributeError("x"))
    assert errors._same_class(torch.linalg.LinAlgError("x"), mt.linalg.LinAlgError("x"))


def test_results_differing_in_dtype_shape_or_values_are_found():
    t, m = torch.tensor([1.0, 2.0]), mt.tensor([1.0, 2.0])
    assert errors.same_results(t, m, torch, mt, random=False) is None
    assert "dtype" in errors.same_results(t, m.double(), torch, mt, random=False)
    assert "shape" in errors.same_results(t, m[:1], torch, mt, random=False)
    assert "values" in errors.same_results(t, m + 1, torch, mt, random=False)
    assert errors.same_results(t, m + 1, torch, mt, random=True) is None  # drawn values: shape and dtype only
    assert errors.same_results(torch.float32, mt.float32, torch, mt, random=False) is None


def test_a_changed_input_is_found():
    x = mt.tensor(np.ones((2, 3), dtype=np.float32))
    before = errors._snapshot(x)
    assert errors._same_snapshot(before, errors._snapshot(x))
    x.add_(0)  # same values, but the version counter moved
    assert not errors._same_snapshot(before, errors._snapshot(x))


def test_cases_follow_the_signature():
    labels = [c.name for c in errors.cases("torch", "sum", errors.parameters("torch", "sum"))]
    assert {"0-d", "5-d", "int", "bool", "str-input", "dim=5", "dim=-4", "bad-keyword"} <= set(labels)
    labels = [c.name for c in errors.cases("torch", "add", errors.parameters("torch", "add"))]
    assert "no-broadcast" in labels

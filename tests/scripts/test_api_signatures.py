"""scripts/api_signatures.py: every name minitensor shares with PyTorch takes PyTorch's arguments, but for
the differences docs/pytorch_compatibility.md lists (kept, with a reason, or not yet fixed); and a row of
the not-yet-fixed table leaves it when its fix lands."""
import importlib.util
import inspect
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def load_script():
    sys.path.insert(0, str(ROOT / "scripts"))  # it imports api_coverage beside it
    spec = importlib.util.spec_from_file_location("api_signatures", ROOT / "scripts" / "api_signatures.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["api_signatures"] = module  # (its dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


sig = load_script()


@pytest.fixture(scope="module")
def results():
    return sig.run(sig.NAMESPACES)


def test_no_signature_differs_from_pytorchs_outside_the_doc(results):
    bad = {f"{r.namespace}.{r.name}": [m for _, m in r.issues] for r in results if r.issues}
    assert not bad, f"signatures that differ from PyTorch's (fix them, or list them in the doc): {bad}"
    checked = [r for r in results if not r.uncheckable]
    assert len(checked) > 1000  # the comparison ran over the namespaces, not over nothing


def test_no_row_of_the_not_yet_fixed_table_is_fixed_already(results):
    pending = sig.kept_differences(headings=(sig.PENDING_HEADING,))
    still_open = {(f"{r.namespace}.{r.name}", p) for r in results for p, _ in r.open}
    fixed = sorted(key for key in pending if key not in still_open)
    assert not fixed, f"fixed: drop them from the doc's 'not yet fixed' table: {fixed}"


P = inspect.Parameter.empty


@pytest.mark.parametrize("theirs, mine, expected", [
    # the same signature
    ([[("input", "positional", P), ("dim", "positional", None), ("dtype", "keyword-only", None)]],
     [("input", "positional", P), ("dim", "positional", None), ("dtype", "keyword-only", None)], []),
    # keyword-only in PyTorch, positional in minitensor
    ([[("input", "positional", P), ("dtype", "keyword-only", None)]],
     [("input", "positional", P), ("dtype", "positional", None)], ["dtype"]),
    # another name, another default, a keyword missing
    ([[("input", "positional", P), ("dim", "positional", 0), ("out", "keyword-only", None)]],
     [("input", "positional", P), ("axis", "positional", 1)], ["dim", "out", "axis"]),
    # overloads that disagree at a place (max(input, dim) / max(input, other)): other= as a keyword is enough
    ([[("input", "positional", P), ("dim", "positional", P)], [("input", "positional", P), ("other", "positional", P)]],
     [("input", "positional", P), ("dim", "positional", None), ("other", "keyword-only", None)], []),
    # *size and size=: PyTorch has both forms, minitensor's *sizes with size= takes both
    ([[("size", "*args", P), ("dtype", "keyword-only", None)],
      [("size", "positional", P), ("dtype", "keyword-only", None)]],
     [("sizes", "*args", P), ("size", "keyword-only", None), ("dtype", "keyword-only", None)], []),
    ([[("size", "*args", P)], [("size", "positional", P)]], [("shape", "*args", P)], ["size"]),
])
def test_the_comparison_finds_each_kind_of_difference(theirs, mine, expected):
    def params(rows):
        return [sig.Param(*row) for row in rows]
    issues = sig.compare([params(o) for o in theirs], params(mine))
    assert sorted({p for p, _ in issues}) == sorted(expected), issues


def test_the_doc_tables_parse():
    kept = sig.kept_differences()
    assert ("torch.*_", "self") in kept
    assert all(reason for reason in kept.values())
    with pytest.raises(ValueError, match="3 cells"):
        sig.kept_differences(f"\n{sig.TABLE_HEADING}\n| a | b |\n|---|---|\n| `torch.x` | `y` |\n")


def test_only_overloads_that_move_a_name_are_left_out_as_deprecated():
    def ps(pos, kw=()):
        return [sig.Param(n, "positional", P) for n in pos] + [sig.Param(n, "keyword-only", None) for n in kw]
    add, add_old = ps(["input", "other"], ["alpha", "out"]), ps(["input", "alpha", "other"], ["out"])
    assert sig._without_deprecated([add, add_old]) == [add]  # alpha before other: PyTorch's deprecated form
    sort_kw = ps(["input"], ["stable", "dim", "descending", "out"])
    sort_pos = ps(["input", "dim", "descending"], ["out"])
    assert sig._without_deprecated([sort_kw, sort_pos]) == [sort_kw, sort_pos]  # more by position moves nothing
    addmm, addmm_old = ps(["input", "mat1", "mat2"], ["beta", "alpha", "out"]), ps(
        ["beta", "input", "alpha", "mat1", "mat2"], ["out"])
    assert sig._without_deprecated([addmm, addmm_old]) == [addmm]

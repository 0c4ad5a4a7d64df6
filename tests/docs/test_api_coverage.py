"""The "Out of scope" table of docs/pytorch_compatibility.md and scripts/api_coverage.py, which reads it,
stay in step: the table parses, lists no name twice and no name minitensor has; where PyTorch is
installed, every name it lists is one of PyTorch's public names, and the script prints its figures."""
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "pytorch_compatibility.md").read_text()


def load_script():
    spec = importlib.util.spec_from_file_location("api_coverage", ROOT / "scripts" / "api_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cov = load_script()
TABLE = cov.out_of_scope()


def test_the_table_parses_into_reasoned_rows():
    assert set(TABLE) <= set(cov.NAMESPACES)
    assert {"torch", "torch.Tensor", "torch.nn.functional"} <= set(TABLE)
    assert sum(len(names) for names in TABLE.values()) > 300
    for namespace, names in TABLE.items():
        for name, reason in names.items():
            assert len(reason) > 20, f"{namespace}.{name}: a reason, not a word"


def test_a_name_listed_twice_is_refused():
    """The doc's own table with one more row that repeats two of its names."""
    row = "| `torch` | `cudnn_batch_norm`, `miopen_rnn` | backend kernels |\n"
    header_end = DOC.index("|---|---|---|\n", DOC.index("\n### Out of scope\n")) + len("|---|---|---|\n")
    doubled = DOC[:header_end] + row + DOC[header_end:]
    with pytest.raises(ValueError, match=r"torch\.(cudnn_batch_norm|miopen_rnn) is listed twice"):
        cov.out_of_scope(doubled)


@pytest.mark.parametrize("bad_row, message", [
    ("| `torch` | cudnn_batch_norm | why |", "names must be"),          # a name without backticks
    ("| `torch` | `a*` | why |", "names must be"),                      # a pattern, not a name
    ("| `torch.fft` | `fft` | why |", "unknown namespace"),
    ("| `torch` | `zzz` |", "3 cells"),
    ("| `torch` | `zzz` |  |", "no reason"),
])
def test_a_malformed_row_is_refused(bad_row, message):
    text = "# t\n\n### Out of scope\n\n| Namespace | Names | Reason |\n|---|---|---|\n" + bad_row + "\n"
    with pytest.raises(ValueError, match=message):
        cov.out_of_scope(text)


def test_no_out_of_scope_name_is_one_minitensor_has():
    has = cov.minitensor_has({namespace: sorted(names) for namespace, names in TABLE.items()})
    implemented = [f"{namespace}.{name}" for namespace in TABLE for name in sorted(has[namespace])]
    assert not implemented, f"minitensor has these, so they are in scope: remove them from the table: {implemented}"


def test_the_lookup_sees_what_a_script_sees():
    """Names minitensor has count, names it lacks do not, and so does an unmapped namespace."""
    before = sys.modules.get("torch")  # the real torch, if another test imported it
    has = cov.minitensor_has({"torch": ["tensor", "no_such_name", "nn"], "torch.Tensor": ["view", "no_such_name"],
                              "torch.fft": ["fft"]})
    assert has == {"torch": {"tensor", "nn"}, "torch.Tensor": {"view"}, "torch.fft": set()}
    assert sys.modules.get("torch") is before


def test_a_namespace_counts_once_the_runner_maps_it(monkeypatch):
    """Modules minitensor gains (minitensor.linalg, ...) count as soon as run.MODULES maps them."""
    from minitensor import run as runner

    assert cov.minitensor_has({"torch.fft": ["relu"]}) == {"torch.fft": set()}
    monkeypatch.setitem(runner.MODULES, "torch.fft", "minitensor.nn.functional")
    monkeypatch.setattr(runner, "_STAND_INS", {})  # the runner's cache of stand-ins, fresh for this test
    assert cov.minitensor_has({"torch.fft": ["relu", "fft"]}) == {"torch.fft": {"relu"}}


def test_the_doc_shows_figures_for_every_namespace():
    body = DOC.split("\n## Coverage of PyTorch's API\n")[1].split("\n### Out of scope\n")[0]
    shown = re.findall(r"^\| `(torch[\w.]*)` \| \d+ \| \d+ \| [\d.]+ \| \d+ \|$", body, flags=re.M)
    assert shown == cov.NAMESPACES
    assert re.search(r"Figures on \d{4}-\d\d-\d\d, PyTorch [\d.]+, from `[^`]*api_coverage\.py", body)


# --- where PyTorch is installed ---------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch")


@pytest.mark.slow
@pytest.mark.parametrize("namespace", sorted(TABLE))
def test_every_out_of_scope_name_is_one_of_pytorchs_public_names(namespace):
    _torch()
    public = set(cov.public_names(namespace))
    stale = sorted(set(TABLE[namespace]) - public)
    assert not stale, f"not public names of {namespace} in this PyTorch: remove them from the table: {stale}"


@pytest.mark.slow
def test_the_public_name_rule():
    _torch()
    torch_names = cov.public_names("torch")
    assert {"set_grad_enabled", "set_default_dtype", "compile", "bfloat16", "zeros"} <= set(torch_names)
    assert not {"nn", "linalg", "TYPE_CHECKING", "math"} & set(torch_names)
    functional = set(cov.public_names("torch.nn.functional"))
    assert "scaled_dot_product_attention" in functional
    assert not {"math", "Optional", "reproducibility_notes"} & functional
    nn = set(cov.public_names("torch.nn"))
    assert "Linear" in nn and not {"modules", "functional", "init"} & nn
    tensor = set(cov.public_names("torch.Tensor"))
    assert {"add", "view", "T", "grad"} <= tensor and not any(n.startswith("_") for n in tensor)
    assert "_DatasetKind" not in cov.public_names("torch.utils.data")  # in its __all__, but private


@pytest.mark.slow
def test_min_fails_below_the_threshold(capsys):
    _torch()
    assert cov.main(["--namespace", "torch.random", "--min", "0"]) == 0
    assert cov.main(["--namespace", "torch.random", "--min", "100.1"]) == 1
    assert "below 100.1 %: torch.random" in capsys.readouterr().err


@pytest.mark.slow
def test_the_script_prints_a_line_per_namespace(capsys):
    _torch()
    assert cov.main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    for namespace in cov.NAMESPACES:
        (line,) = [ln for ln in lines if ln.split()[:1] == [namespace]]
        in_scope, have, percent, out = line.split()[1:]
        assert 0 <= int(have) <= int(in_scope) and int(out) == len(TABLE.get(namespace, {}))
        assert float(percent) == pytest.approx(100 * int(have) / int(in_scope), abs=0.06)
    assert lines[-1].split()[0] == "all"

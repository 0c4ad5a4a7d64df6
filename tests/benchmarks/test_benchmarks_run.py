"""Every benchmark script runs end to end on its tiniest settings (the hidden --smoke flag) and
prints its tables and its target lines, with PyTorch and as if it were not installed.

Only what is printed is checked, never a timing: timings on a shared machine say nothing here.
"""
import importlib.util
import pathlib
import re
import sys

import pytest

pytestmark = pytest.mark.slow  # each test runs a benchmark script end to end

BENCHMARKS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"


def run(monkeypatch, capsys, name, *argv):
    """Load benchmarks/<name>.py by path, run main(["--smoke", *argv]) and return what it printed."""
    monkeypatch.setattr(sys, "path", list(sys.path))  # the script puts the repo root on it; undone after
    spec = importlib.util.spec_from_file_location(f"_benchmark_{name}_under_test", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--smoke", *argv])
    out = capsys.readouterr().out
    assert re.search(r"^minitensor\.tune_malloc\(\): (applied|not applied)", out, re.M), out
    assert re.search(r"^BLAS threads: (\d|BLAS default)", out, re.M), out  # in the header of every run
    return out


@pytest.fixture(params=["torch", "no torch"])
def torch_installed(request, monkeypatch):
    if request.param == "torch":
        pytest.importorskip("torch")
        return True
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError, as when it is absent
    return False


def target(name):
    return re.compile(rf"^(PASS|FAIL)  {re.escape(name)}: -?\d+\.\d+", re.M)


def test_bench_overhead(monkeypatch, capsys):
    out = run(monkeypatch, capsys, "bench_overhead")
    assert out.count("op           numpy µs  minitensor µs  overhead µs") == 2  # forward, forward + backward
    for op in ("add", "mul scalar", "relu", "softmax(-1)", "matmul", "x[0]"):
        assert re.search(rf"^{re.escape(op)} +-?\d", out, re.M), op
    assert "median forward + backward overhead over 18 ops" in out
    assert re.search(r"^info  median forward overhead per op: -?\d+\.\d+ µs$", out, re.M), out
    assert not re.search(r"^(PASS|FAIL) ", out, re.M), "the per-op target was retired: information only"
    assert "worst forward overhead:" in out
    assert re.search(r"^info  a bare recorded node .* adds -?\d+\.\d+ µs to numpy's add in this run; "
                     r"minitensor's add adds -?\d+\.\d+ µs$", out, re.M), out
    assert re.search(r"^info  x \+ y per op, forward: minitensor \d+\.\d+ µs", out, re.M), out
    if "torch µs" in out:
        assert re.search(r"^info  median forward overhead / PyTorch's in the same run: \d+\.\d+", out, re.M), out
        assert re.search(r"^info  x \+ y per op, forward: minitensor \d+\.\d+ µs, PyTorch \d+\.\d+ µs "
                         r"\(ratio \d+\.\d+\)$", out, re.M), out


@pytest.mark.parametrize("layers", [[], ["--layers"]])
def test_bench_attention(monkeypatch, capsys, torch_installed, layers):
    if layers and torch_installed:
        pytest.skip("the composed-vs-fused cases don't use PyTorch: once is enough")
    out = run(monkeypatch, capsys, "bench_attention", *layers)
    assert re.search(r"^T +floor ms +minitensor ms +x floor +\+ weights ms +x floor +composed ms +x floor +torch 1t ms",
                     out, re.M), out
    row = re.search(r"^16 +(.*)$", out, re.M).group(1).split()
    assert len(row) == 11 and ("-" not in row) == torch_installed, row
    assert ("PyTorch is not installed" in out) != torch_installed
    assert re.search(r"^info  minitensor / numpy floor at T=16: \d+\.\d+x \(no target", out, re.M), out
    assert re.search(r"^T=16: minitensor / floor per round \d+\.\d+ \(quartiles \d+\.\d+-\d+\.\d+\); "
                     r"ratio of the medians \d+\.\d+$", out, re.M), out
    if layers:
        assert re.search(r"^TransformerBlock B=16 T=64 d_model=64 H=4 float32 +\d", out, re.M), out


def test_bench_client(monkeypatch, capsys, torch_installed):
    out = run(monkeypatch, capsys, "bench_client")
    if not torch_installed:
        assert "SKIP  minitensor / PyTorch eager, tutorial GPT, 1 thread: PyTorch is not installed" in out
        return
    for threads in (1, 2):
        assert re.search(rf"^threads={threads}: minitensor / PyTorch per round \d+\.\d+ \(quartiles", out, re.M), out
    # (the script stops before timing if the two libraries' losses on the same weights disagree)
    assert out.count("same weights, same batch, dropout off: loss ") == 2, out
    assert target("minitensor / PyTorch eager, tutorial GPT, 1 thread (median of per-round ratios)").search(out), out


def test_bench_tiny(monkeypatch, capsys, torch_installed):
    out = run(monkeypatch, capsys, "bench_tiny")
    assert re.search(r"^processor: \S", out, re.M), out
    if not torch_installed:
        assert "SKIP  minitensor / PyTorch eager, lecture MLP step, 1 thread: PyTorch is not installed" in out
        return
    # --smoke runs the one-thread round in the test's process (a full run has a child per thread count)
    assert re.search(r"^threads=1: minitensor / PyTorch per round \d+\.\d+ \(quartiles", out, re.M), out
    # (the script stops before timing if the two libraries' losses on the same weights disagree)
    assert out.count("same weights, same batches: loss ") == 1, out
    assert target("minitensor / PyTorch eager, lecture MLP step, 1 thread (median of per-round ratios)").search(out)


def test_bench_train(monkeypatch, capsys, torch_installed):
    out = run(monkeypatch, capsys, "bench_train")
    assert out.count("== BLAS (and PyTorch) on ") == 2, out
    assert len(re.findall(r"^library +ms/step +steps/s$", out, re.M)) == 2, out
    assert len(re.findall(r"^minitensor +\d", out, re.M)) == 2, out
    assert len(re.findall(r"^numpy floor +\d", out, re.M)) == 2, out
    assert re.search(r"autograd nodes per step .*minitensor \d+", out), out
    for threads in (1, 2):
        assert re.search(rf"^threads={threads}: minitensor / numpy floor \(its matrix products "
                         r"alone\) per round \d+\.\d+",
                         out, re.M), out
        assert re.search(r"^info  minitensor / numpy floor \(the step's matrix products "
                         rf"alone\), {threads} thread\(s\): "
                         r"\d+\.\d+x$", out, re.M), out
        verdict = (rf"^(PASS|FAIL)  minitensor / PyTorch eager, {threads} thread\(s\) "
                   r"\(median of per-round ratios\): \d+\.\d+x")
        skip = f"SKIP  minitensor / PyTorch, {threads} thread(s): PyTorch is not installed"
        if torch_installed:
            assert re.search(rf"^threads={threads}: minitensor / PyTorch per round \d+\.\d+", out, re.M), out
            assert re.search(verdict, out, re.M), out
        else:
            assert skip in out and not re.search(r"^PyTorch +\d", out, re.M), out


def test_bench_memory(monkeypatch, capsys):
    out = run(monkeypatch, capsys, "bench_memory")
    assert re.search(r"^peak traced during the step +\d+\.\d+", out, re.M), out
    assert re.search(r"^AdamW state \(exp_avg, exp_avg_sq\) +\d+\.\d+", out, re.M), out
    if sys.platform.startswith("linux"):
        assert re.search(r"^step +RSS MB", out, re.M), out
        assert target("RSS growth from step 2 to step 4").search(out), out
        assert re.search(r"^RSS is (flat|growing) after step 2$", out, re.M), out
    else:
        assert "SKIP  RSS flat" in out


def test_bench_core(monkeypatch, capsys, torch_installed):
    out = run(monkeypatch, capsys, "bench_core")
    assert re.search(r"^workload +minitensor ms +torch ms +ratio", out, re.M), out
    for workload in ("tiny_ops", "mlp_step", "attention_step", "layer_norm_step"):
        cells = re.search(rf"^{workload} +(.*)$", out, re.M).group(1).split()
        assert len(cells) == (3 if torch_installed else 1), cells


def test_round_ratios_pair_the_blocks_of_each_round(monkeypatch):
    """The ratio is taken within each round, then its median and quartiles over the rounds: a
    machine twice as slow in one round changes neither step's ratio there."""
    monkeypatch.setattr(sys, "path", [str(BENCHMARKS.parent)] + sys.path)
    from benchmarks._timing import interleaved, round_ratios

    rounds = {"mt": [1.2, 2.6, 1.3, 2.2, 1.1], "floor": [1.0, 2.0, 1.0, 2.0, 1.0]}
    assert round_ratios(rounds, "mt", "floor") == pytest.approx((1.2, 1.1, 1.3))  # per-round 1.2 1.3 1.3 1.1 1.1
    assert round_ratios({"a": [3.0], "b": [2.0]}, "a", "b") == (1.5, 1.5, 1.5)
    calls = []
    rounds = {}
    medians = interleaved({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, 3, 2, rounds=rounds)
    assert calls == ["a", "a", "b", "b"] + ["a", "a", "b", "b"] * 3  # warm-up, then 3 interleaved rounds
    assert sorted(rounds) == ["a", "b"] and all(len(r) == 3 and min(r) > 0 for r in rounds.values())
    assert medians == {name: sorted(r)[1] for name, r in rounds.items()}

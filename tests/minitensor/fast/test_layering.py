"""The speed layer plugs in from above: nothing below imports it, and without it the math is the same.

1. Every module of minitensor/ and attention/ is parsed, and none but minitensor/fast/*,
   minitensor/__init__.py (the one line that plugs it in) and attention/fast.py may import
   `minitensor.fast`, however written: absolute or relative, `import` or `from ... import`, at the
   top or inside a function.
2. A small transformer-like step (embedding, LayerNorm, Linear, GELU, cross-entropy, AdamW) gives
   the same loss, gradients and updated parameters with the speed layer as on the plain path,
   both in this process (`plug_out`) and in a fresh one started with MINITENSOR_PLAIN=1.
"""
import ast
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import minitensor.nn.functional as F
from minitensor import fast
from minitensor.optim import Adam

ROOT = pathlib.Path(__file__).resolve().parents[3]
ALLOWED = {"minitensor/__init__.py", "attention/fast.py"}
# attention's speed layer is imported only by what sits above the teaching path (the benchmarks,
# outside both packages, import both layers to measure them)
ATTENTION_FAST_USERS = {"attention/trainer.py"}


def _imported_modules(path):
    """The absolute names of every module `path` imports (a relative import resolved against its package)."""
    rel = path.relative_to(ROOT)
    package = list(rel.parent.parts) if rel.name == "__init__.py" else list(rel.with_suffix("").parts[:-1])
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names.append(module)
            names += [f"{module}.{alias.name}" for alias in node.names]  # `from .. import fast`
    return names


def _imports_fast(path):
    return any(name == "minitensor.fast" or name.startswith("minitensor.fast.") for name in _imported_modules(path))


def _modules():
    for top in ("minitensor", "attention"):
        yield from sorted((ROOT / top).rglob("*.py"))


def test_the_checker_sees_every_way_of_importing_it(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    forms = ["from .. import fast", "from ..fast.vjps import ones_vector", "import minitensor.fast",
             "from minitensor import fast", "from minitensor.fast import Replay", "def f():\n    from .. import fast"]
    (tmp_path / "minitensor" / "ops").mkdir(parents=True)
    for i, form in enumerate(forms):
        path = tmp_path / "minitensor" / "ops" / f"m{i}.py"
        path.write_text(form + "\n")
        assert _imports_fast(path), form
    path = tmp_path / "minitensor" / "ops" / "clean.py"
    path.write_text("from .. import _fperr\nfrom ..autograd import function\nimport fast\n")
    assert not _imports_fast(path)


def test_nothing_below_the_speed_layer_imports_it():
    offenders = []
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("minitensor/fast/") or rel in ALLOWED:
            continue
        if _imports_fast(path):
            offenders.append(rel)
    assert offenders == [], f"these modules import minitensor.fast, which must plug in from above: {offenders}"


def test_only_the_trainer_imports_attentions_speed_layer():
    users = {path.relative_to(ROOT).as_posix() for path in (ROOT / "attention").rglob("*.py")
             if "attention.fast" in _imported_modules(path)}
    assert users <= ATTENTION_FAST_USERS, users - ATTENTION_FAST_USERS


# ---- the same numbers without it ----------------------------------------------------------------
# A step of a tiny model written with the ops the speed layer has twins for; run as a script too.
STEP = r'''
import json, sys
import numpy as np
import minitensor as mt
import minitensor.nn.functional as F


def step(plugged):
    rng = np.random.default_rng(0)
    V, D, N = 7, 8, 12
    table = mt.tensor(rng.standard_normal((V, D)), dtype=mt.float64, requires_grad=True)
    w1 = mt.tensor(rng.standard_normal((4 * D, D)) / 3, dtype=mt.float64, requires_grad=True)
    b1 = mt.tensor(rng.standard_normal(4 * D), dtype=mt.float64, requires_grad=True)
    w2 = mt.tensor(rng.standard_normal((D, 4 * D)) / 5, dtype=mt.float64, requires_grad=True)
    head = mt.tensor(rng.standard_normal((V, D)) / 3, dtype=mt.float64, requires_grad=True)
    lw = mt.tensor(1 + rng.standard_normal(D) / 10, dtype=mt.float64, requires_grad=True)
    lb = mt.tensor(rng.standard_normal(D) / 10, dtype=mt.float64, requires_grad=True)
    params = [table, w1, b1, w2, head, lw, lb]
    idx = mt.tensor(rng.integers(0, V, (2, N // 2)))
    target = mt.tensor(rng.integers(0, V, N))
    h = F.layer_norm(F.embedding(idx, table).reshape(N, D), (D,), lw, lb)
    for approximate in ("none", "tanh"):
        h = F.layer_norm(h + F.linear(F.gelu(F.linear(h, w1, b1), approximate=approximate), w2), (D,))
    loss = F.cross_entropy(F.linear(h, head), target, label_smoothing=0.1)
    loss.backward()
    grads = [p.grad.numpy().tolist() for p in params]
    mt.optim.AdamW(params, lr=0.1).step()
    return dict(plugged=plugged, loss=loss.item(), grads=grads, params=[p.detach().numpy().tolist() for p in params])


if __name__ == "__main__":
    print(json.dumps(step(mt.fast.is_plugged_in())))
'''


def _step_in_process():
    namespace = {}
    exec(compile(STEP, "step", "exec"), namespace)
    return namespace["step"](fast.is_plugged_in())


def _assert_same(plain, speedy):
    assert plain["plugged"] is False and speedy["plugged"] is True
    np.testing.assert_allclose(plain["loss"], speedy["loss"], rtol=1e-13)
    for name in ("grads", "params"):
        for i, (a, b) in enumerate(zip(plain[name], speedy[name])):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"{name} {i}")


@pytest.fixture
def plain_path():
    fast.plug_out()
    try:
        yield
    finally:
        fast.plug_in()


def test_plug_out_empties_every_slot_and_plug_in_fills_them(plain_path):
    assert not fast.is_plugged_in() and F.LayerNorm.fast_forward is None and Adam.fast_update_group is None
    fast.plug_in()
    assert fast.is_plugged_in() and F.Linear.fast_backward is not None


def test_the_plain_path_in_this_process_gives_the_same_step():
    speedy = _step_in_process()
    fast.plug_out()
    try:
        plain = _step_in_process()
    finally:
        fast.plug_in()
    _assert_same(plain, speedy)


@pytest.mark.slow  # runs a model step in a subprocess
def test_minitensor_plain_leaves_the_speed_layer_out_and_the_step_is_the_same(tmp_path):
    script = tmp_path / "step.py"
    script.write_text(STEP)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    runs = {}
    for plain in ("1", "0"):
        env[fast.PLAIN_SWITCH] = plain
        out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, check=True)
        runs[plain] = json.loads(out.stdout)
    _assert_same(runs["1"], runs["0"])

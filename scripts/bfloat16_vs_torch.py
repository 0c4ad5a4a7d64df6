"""Every float op of the test op table, in bfloat16, against PyTorch's bfloat16 (issue 29, h-names29).

    PYTHONPATH=$PWD python scripts/bfloat16_vs_torch.py [--min 0.0] [--markdown]

Needs PyTorch and ml_dtypes. Each row of `tests/minitensor/test_ops.py`'s TABLE is run once on one drawn
case: the same bfloat16 inputs go to minitensor and to PyTorch (the row's function with `mt`, `F` and `T`
rebound to torch's), and the forward results and the gradients (of the results weighted by a random
bfloat16 upstream) are compared. A difference is the largest |minitensor - PyTorch| over the largest
|PyTorch| of that result (at least 0.05), so 2^-8 = 0.0039 is one bfloat16 rounding of the biggest value;
each row is drawn `--draws` times (3) and its largest differences are shown. Rows whose
function has no PyTorch twin by that rebinding (minitensor-only helpers, numpy arguments) are listed apart.
"""
from __future__ import annotations

import argparse
import sys
import types
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _torch_twin(fn, torch):
    """fn with minitensor's names rebound to PyTorch's (a lambda of the table), or torch's op of fn's name."""
    if getattr(fn, "__name__", "") == "<lambda>":
        import torch.nn.functional as TF
        names = dict(fn.__globals__, mt=torch, F=TF, T=torch.tensor)
        return types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__, fn.__closure__)
    name = getattr(fn, "__name__", None)
    for where in (torch, torch.special, torch.linalg, torch.nn.functional):
        if name and hasattr(where, name):
            return getattr(where, name)
    return None


def _inputs(op, rng):
    """One case of the row: the largest of a few drawn shapes, values drawn from the row's domain."""
    best = None
    for _ in range(12):
        shapes, kw = op.case.example()
        size = sum(int(np.prod(s)) for s in shapes)
        if size <= 400 and (best is None or size > best[0]):
            best = (size, shapes, kw)
    _, shapes, kw = best
    domains = op.domain if isinstance(op.domain, tuple) else (op.domain,) * len(shapes)
    for _ in range(50):  # values the row's `valid` accepts once rounded to bfloat16 (off its kinks)
        arrays = []
        for shape, d in zip(shapes, domains):
            lo, hi = d.get("min_value", -3.0), d.get("max_value", 3.0)
            a = rng.uniform(lo, hi, size=shape)
            gap = d.get("away_from_zero")
            if gap:
                a = np.where(np.abs(a) < gap, np.sign(a + 1e-12) * gap * 1.5, a)
            arrays.append(a.astype(ml_dtypes.bfloat16).astype(np.float64))
        if op.valid is None or op.valid(*arrays, **kw):
            break
    return arrays, kw


def _relative(mine, theirs):
    mine = np.asarray(mine, dtype=np.float64)
    theirs = np.asarray(theirs, dtype=np.float64)
    both = np.isfinite(mine) & np.isfinite(theirs)
    if not np.array_equal(np.isfinite(mine), np.isfinite(theirs)):
        return float("inf")
    scale = max(float(np.abs(theirs[both]).max(initial=0.0)), 0.05)  # (a result near 0 everywhere: its noise)
    return float(np.abs(mine[both] - theirs[both]).max(initial=0.0)) / scale


def _run(L, f, arrays, kw, dtype):
    """f's results and its inputs' gradients (upstream: fixed random weights), all as float32 arrays."""
    xs = [L.tensor(a.astype(np.float32)).to(dtype).requires_grad_() for a in arrays]
    out = f(*xs, **kw)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if hasattr(o, "requires_grad")]
    w = np.random.default_rng(7)
    total = None
    for o in outs:
        if o.requires_grad and o.dtype == dtype:
            weight = L.tensor(w.standard_normal(tuple(o.shape)).astype(ml_dtypes.bfloat16).astype(np.float32))
            term = (o * weight.to(dtype)).sum()
            total = term if total is None else total + term
    if total is not None:
        try:
            total.backward()
        except Exception:  # noqa: BLE001  (PyTorch has no derivative for some: floor_divide)
            pass
    return ([o.detach().float().numpy() for o in outs],
            [None if x.grad is None else x.grad.float().numpy() for x in xs])


def _differences(a, b):
    (ra, ga), (rb, gb) = a, b
    forward = max((_relative(m, t) for m, t in zip(ra, rb)), default=0.0)
    gradient = max((_relative(m, t) for m, t in zip(ga, gb) if m is not None and t is not None), default=0.0)
    return forward, gradient


def compare(op, torch, mt, rng):
    """(forward, gradient) differences of minitensor's bfloat16 from PyTorch's, then of each from PyTorch's
    float32 on the same inputs; or a string saying why the row was not compared."""
    twin = _torch_twin(op.fn, torch)
    if twin is None:
        return "no PyTorch twin"
    arrays, kw = _inputs(op, rng)
    runs = []
    for L, f, dtype in ((mt, op.fn, mt.bfloat16), (torch, twin, torch.bfloat16), (torch, twin, torch.float32)):
        try:
            runs.append(_run(L, f, arrays, kw, dtype))
        except Exception as exc:  # noqa: BLE001  (a row whose lambda is minitensor's own)
            return f"{'minitensor' if L is mt else 'PyTorch'}: {type(exc).__name__}: {str(exc)[:60]}"
    mine, theirs, exact = runs
    return (*_differences(mine, theirs), *_differences(mine, exact), *_differences(theirs, exact))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min", type=float, default=0.0, help="list only rows differing by more than this")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument("--draws", type=int, default=3, help="cases drawn per row")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("bfloat16_vs_torch: needs PyTorch and ml_dtypes", file=sys.stderr)
        return 0
    sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "minitensor")]
    warnings.simplefilter("ignore")
    import test_ops

    import minitensor as mt

    rng = np.random.default_rng(0)
    rows, skipped = [], []
    for op in test_ops.TABLE:
        got = [compare(op, torch, mt, rng) for _ in range(args.draws)]
        numbers = [g for g in got if not isinstance(g, str)]
        if numbers:
            rows.append((op.id, tuple(max(column) for column in zip(*numbers))))
        else:
            skipped.append((op.id, got[0]))
    rows.sort(key=lambda r: -max(r[1][:2]))
    head = ["vs PyTorch bf16 fwd", "grad", "minitensor vs f32 fwd", "grad", "PyTorch bf16 vs f32 fwd", "grad"]
    if args.markdown:
        print("| op | " + " | ".join(head) + " |\n|---|" + "---:|" * len(head))
    else:
        print(f"{'op':<28}" + "".join(f"{h.split()[-1]:>9}" for h in head) + "   (minitensor bf16 vs PyTorch bf16, "
              "minitensor bf16 vs PyTorch f32, PyTorch bf16 vs PyTorch f32)")
    for name, numbers in rows:
        if max(numbers[:2]) > args.min:
            cells = [f"{v:.2g}" for v in numbers]
            print(f"| `{name}` | " + " | ".join(cells) + " |" if args.markdown
                  else f"{name:<28}" + "".join(f"{c:>9}" for c in cells))
    print(f"\n{len(rows)} rows compared, {len(skipped)} not:", file=sys.stderr)
    for name, why in skipped:
        print(f"  {name}: {why}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How much of each op module is math: per module, the lines inside `forward`/`backward`, the
module's total lines, and which forward/backward bodies validate instead of only computing.

A body counts as validating when it has
  - a `raise`, or a `try` whose handler raises (an error translated in the middle of the math),
  - a call of a helper that raises by itself (a function of minitensor/ops, `tensor.py` or
    `_dtype.py` with a `raise` of its own; public ops such as `where` or `narrow` are math, not checks),
  - a dtype rule: a comparison that reads `.dtype` or `.kind`, or a call of a promotion helper.

    PYTHONPATH=$PWD python scripts/op_stats.py [module.py ...]   (default: every minitensor/ops module)
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPS = ROOT / "minitensor" / "ops"
PROMOTION = {"result_dtype", "promote_types", "in_common_dtype", "_as_result_type"}


def raising_helpers() -> set[str]:
    """Names of module-level functions that contain a `raise` of their own and are not public ops."""
    public = set(re.findall(r"\b[A-Z][A-Za-z]*\.([a-z_]\w*)", (OPS / "table.py").read_text()))
    names = set()
    for path in [*OPS.glob("*.py"), ROOT / "minitensor" / "tensor.py", ROOT / "minitensor" / "_dtype.py"]:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name not in public and any(
                    isinstance(n, ast.Raise) for n in ast.walk(node)):
                names.add(node.name)
    return names


def why_validating(fn: ast.FunctionDef, helpers: set[str]) -> list[str]:
    reasons = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Raise):
            reasons.append("raise")
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in helpers | PROMOTION:
            reasons.append(f"calls {n.func.id}")
        elif isinstance(n, ast.Compare) and any(
                isinstance(a, ast.Attribute) and a.attr in ("dtype", "kind") for a in ast.walk(n)):
            reasons.append("dtype test")
    return sorted(set(reasons))


def module_stats(path: Path, helpers: set[str]) -> tuple[int, int, int, list[str]]:
    tree = ast.parse(path.read_text())
    inside, bodies, flagged = 0, 0, []
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for fn in cls.body:
            if isinstance(fn, ast.FunctionDef) and fn.name in ("forward", "backward"):
                bodies += 1
                inside += fn.end_lineno - fn.lineno + 1  # type: ignore[operator]
                reasons = why_validating(fn, helpers)
                if reasons:
                    flagged.append(f"{cls.name}.{fn.name} ({', '.join(reasons)})")
    return inside, len(path.read_text().splitlines()), bodies, flagged


def main(argv: list[str]) -> None:
    paths = [Path(a) for a in argv] or sorted(p for p in OPS.glob("*.py") if not p.name.startswith("__"))
    helpers = raising_helpers()
    totals = [0, 0, 0, 0]
    print(f"{'module':<16} {'fwd/bwd lines':>13} {'total':>6} {'share':>6} {'bodies':>6} {'validating':>10}")
    for path in paths:
        inside, total, bodies, flagged = module_stats(path, helpers)
        share = f"{100 * inside / total:.0f}%" if total else "-"
        print(f"{path.name:<16} {inside:>13} {total:>6} {share:>6} {bodies:>6} {len(flagged):>10}")
        for f in flagged:
            print(f"{'':<18}{f}")
        for i, v in enumerate((inside, total, bodies, len(flagged))):
            totals[i] += v
    share = f"{100 * totals[0] / totals[1]:.0f}%" if totals[1] else "-"
    print(f"{'all':<16} {totals[0]:>13} {totals[1]:>6} {share:>6} {totals[2]:>6} {totals[3]:>10}")


if __name__ == "__main__":
    main(sys.argv[1:])

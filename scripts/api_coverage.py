"""How much of PyTorch's public API minitensor has, namespace by namespace.

    PYTHONPATH=$PWD python scripts/api_coverage.py [--namespace torch.linalg] [--missing] [--json] [--min 90]

Needs PyTorch installed (it lists PyTorch's names); without it the script says so and exits 0, so
CI without PyTorch carries on. For each namespace it prints the in-scope total, how many of those
names minitensor has, and the percentage; `--missing` adds the in-scope names minitensor lacks,
`--min P` exits 1 when a namespace is below P percent.

Which names count (the rule docs/pytorch_compatibility.md states under "Coverage of PyTorch's API"):

- a namespace's public names are its `__all__` where it has one, else `dir()` without names that
  start with `_`; `torch` itself takes both, since its `__all__` leaves out names tutorials type
  (`set_grad_enabled`, `set_default_dtype`, `unique`, `broadcast_shapes`);
- names that start with `_` never count, even when listed in `__all__`;
- a module is not a name: `torch.nn`, `torch.linalg` are namespaces with rows of their own,
  implementation packages (`torch.nn.modules`, `torch.nn.parallel`) are not counted at all;
- from `dir()` only what PyTorch defines counts: names imported from the standard library or
  typing (`math`, `Optional`, `Callable`) and plain data (`TYPE_CHECKING`, docstring fragments
  such as `torch.nn.functional.reproducibility_notes`) are left out;
- `torch.Tensor`'s names are `dir(torch.Tensor)` without `_`: methods and attributes (the operators
  `__add__`, ... are counted through their named methods);
- the names the doc's "Out of scope" table lists, each with its reason, are left out.

"Minitensor has a name" is decided as a user's script would see it: inside
`minitensor.run.torch_is_minitensor()`, `import torch.xyz` then `hasattr` (`torch.Tensor` is
minitensor's Tensor there). A namespace the runner does not map (`MODULES` in minitensor/run.py)
has none of its names. A name that exists and raises (`Tensor.cuda`) counts as had: the script
gets minitensor's own error, not a missing name.
"""
from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "pytorch_compatibility.md"
TABLE_HEADING = "### Out of scope"

NAMESPACES = [
    "torch", "torch.Tensor", "torch.autograd", "torch.autograd.functional", "torch.func", "torch.linalg",
    "torch.special", "torch.distributions", "torch.random", "torch.nn", "torch.nn.functional", "torch.nn.init",
    "torch.nn.utils", "torch.nn.utils.rnn", "torch.nn.utils.prune", "torch.nn.utils.parametrize",
    "torch.nn.utils.parametrizations", "torch.optim", "torch.optim.lr_scheduler", "torch.utils.data",
    "torch.testing", "torch.optim.swa_utils", "torch.utils.checkpoint", "torch.cuda.amp", "torch.nn.attention",
    "torch.profiler", "torch.autograd.profiler", "torch.utils.benchmark",
    "torch.nn.attention.bias",
    "torch.nn.utils.fusion", "torch.nn.utils.stateless", "torch.signal.windows", "torch.utils.hooks",
    "torch.autograd.graph", "torch.autograd.forward_ad",
    "torch.nn.grad",
]
# Namespaces whose `__all__` is incomplete: their defined names from dir() are added to it
ALL_AND_DIR = {"torch"}


# --- the doc's table ------------------------------------------------------------------------------

def out_of_scope(text: str | None = None) -> dict[str, dict[str, str]]:
    """namespace -> {name: reason}, read from the doc's "Out of scope" table.

    Each row is `| namespace | names | reason |`, the namespace and every name in backticks. A
    malformed row, an unknown namespace or a name listed twice is a ValueError naming the row.
    """
    text = DOC.read_text() if text is None else text
    if f"\n{TABLE_HEADING}\n" not in text:
        raise ValueError(f"{DOC.name} has no '{TABLE_HEADING}' section")
    body = text.split(f"\n{TABLE_HEADING}\n", 1)[1]
    body = re.split(r"\n#{1,3} ", body, maxsplit=1)[0]
    rows = [line for line in body.splitlines() if line.startswith("|")]
    if len(rows) < 3:
        raise ValueError(f"the '{TABLE_HEADING}' table has no rows")
    table: dict[str, dict[str, str]] = {}
    for line in rows[2:]:  # after the header and its |---| line
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3:
            raise ValueError(f"an out-of-scope row needs 3 cells (namespace | names | reason): {line[:80]!r}")
        namespace_cell, names_cell, reason = cells
        namespace = namespace_cell.strip("`")
        if namespace not in NAMESPACES or namespace_cell != f"`{namespace}`":
            raise ValueError(f"unknown namespace {namespace_cell!r} in an out-of-scope row (known: {NAMESPACES})")
        names = [n.strip() for n in names_cell.split(",")]
        if not names or not all(re.fullmatch(r"`[A-Za-z]\w*`", n) for n in names):
            raise ValueError(f"names must be `name`, `name`, ... in the row of {namespace}: {names_cell[:80]!r}")
        if not reason:
            raise ValueError(f"a row of {namespace} gives no reason")
        for name in (n.strip("`") for n in names):
            if name in table.setdefault(namespace, {}):
                raise ValueError(f"{namespace}.{name} is listed twice in the out-of-scope table")
            table[namespace][name] = reason
    return table


# --- PyTorch's names ------------------------------------------------------------------------------

def _torch_object(namespace: str):
    if namespace == "torch.Tensor":
        import torch
        return torch.Tensor
    return importlib.import_module(namespace)


def _defined_by_torch(value) -> bool:
    """True for a function, class or object PyTorch defines (not the stdlib's, typing's or plain data)."""
    if isinstance(value, types.ModuleType):
        return False
    if isinstance(value, (bool, int, float, str, bytes, dict, list, tuple, set, frozenset, type(None))):
        return False
    module = getattr(value, "__module__", None) or getattr(type(value), "__module__", None) or ""
    return module == "torch" or module.startswith("torch.")


def public_names(namespace: str) -> list[str]:
    """PyTorch's public names in `namespace` (the rule in this file's docstring), before the table."""
    obj = _torch_object(namespace)
    if namespace == "torch.Tensor":
        return sorted(n for n in dir(obj) if not n.startswith("_"))
    listed = getattr(obj, "__all__", None)
    names = set()
    if listed is not None:
        names |= {n for n in listed if not isinstance(getattr(obj, n, None), types.ModuleType)}
    if listed is None or namespace in ALL_AND_DIR:
        names |= {n for n in dir(obj) if _defined_by_torch(getattr(obj, n, None))}
    return sorted(n for n in names if not n.startswith("_"))


# --- what minitensor has --------------------------------------------------------------------------

def minitensor_has(names_by_namespace: dict[str, list[str]]) -> dict[str, set[str]]:
    """namespace -> the given names a script finds there when torch is minitensor (the runner's view)."""
    from minitensor import run as runner

    found: dict[str, set[str]] = {}
    with runner.torch_is_minitensor():
        for namespace, names in names_by_namespace.items():
            try:
                if namespace == "torch.Tensor":
                    obj = importlib.import_module("torch").Tensor
                else:
                    obj = importlib.import_module(namespace)
            except ImportError:  # the runner maps no minitensor module onto it: none of its names
                found[namespace] = set()
                continue
            found[namespace] = {n for n in names if _has(obj, n)}
    return found


def _has(obj, name: str) -> bool:
    """hasattr, except that a lookup failing with any error means the script cannot use the name."""
    try:
        getattr(obj, name)
    except Exception:
        return False
    return True


# --- the figures ----------------------------------------------------------------------------------

def measure(namespaces: list[str]) -> list[dict]:
    """Per namespace: in-scope total, how many minitensor has, the percentage, the missing names."""
    table = out_of_scope()
    in_scope = {}
    for namespace in namespaces:
        excluded = table.get(namespace, {})
        in_scope[namespace] = [n for n in public_names(namespace) if n not in excluded]
    has = minitensor_has(in_scope)
    results = []
    for namespace in namespaces:
        names = in_scope[namespace]
        have = has[namespace]
        results.append({
            "namespace": namespace,
            "in_scope": len(names),
            "have": len(have),
            "percent": round(100 * len(have) / len(names), 1) if names else 100.0,
            "out_of_scope": len(table.get(namespace, {})),
            "missing": [n for n in names if n not in have],
        })
    return results


def total(results: list[dict]) -> dict:
    """The figures of several namespaces together (a row like theirs, without the missing names)."""
    in_scope, have = sum(r["in_scope"] for r in results), sum(r["have"] for r in results)
    return {"namespace": "all", "in_scope": in_scope, "have": have,
            "percent": round(100 * have / in_scope, 1) if in_scope else 100.0,
            "out_of_scope": sum(r["out_of_scope"] for r in results)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--namespace", choices=NAMESPACES, help="only this namespace")
    parser.add_argument("--missing", action="store_true", help="list the in-scope names minitensor lacks")
    parser.add_argument("--json", action="store_true", help="the figures as JSON (with the missing names)")
    parser.add_argument("--markdown", action="store_true", help="the figures as a Markdown table (for the doc)")
    parser.add_argument("--min", type=float, metavar="P", help="exit 1 when a namespace is below P percent")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("api_coverage: PyTorch is not installed; nothing to compare with", file=sys.stderr)
        return 0
    namespaces = [args.namespace] if args.namespace else NAMESPACES
    results = measure(namespaces)
    rows = results + [total(results)] if len(results) > 1 else results
    if args.json:
        print(json.dumps({"torch": torch.__version__, "namespaces": results, "all": total(results)}, indent=1))
    elif args.markdown:
        print("| Namespace | In scope | minitensor has | % | Out of scope |")
        print("|---|---:|---:|---:|---:|")
        for r in rows:
            name = f"`{r['namespace']}`" if r["namespace"] != "all" else "all"
            print(f"| {name} | {r['in_scope']} | {r['have']} | {r['percent']:.1f} | {r['out_of_scope']} |")
    else:
        width = max(len(n) for n in namespaces)
        print(f"{'namespace':<{width}}  in scope  have      %  out of scope   (PyTorch {torch.__version__})")
        for r in rows:
            print(f"{r['namespace']:<{width}}  {r['in_scope']:>8}  {r['have']:>4}  {r['percent']:>5.1f}  "
                  f"{r['out_of_scope']:>12}")
            if args.missing and r.get("missing"):
                print("    missing: " + ", ".join(r["missing"]))
    below = [r for r in results if args.min is not None and r["percent"] < args.min]
    if below:
        print(f"api_coverage: below {args.min:g} %: "
              + ", ".join(f"{r['namespace']} ({r['percent']:g} %)" for r in below), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # minitensor from this checkout when run as `python scripts/api_coverage.py`
    sys.exit(main())

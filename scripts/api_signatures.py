"""Do minitensor's functions take PyTorch's arguments? Signatures compared name by name.

    PYTHONPATH=$PWD python scripts/api_signatures.py [--namespace torch.linalg] [--all] [--json]

For every name minitensor has (as `scripts/api_coverage.py` finds it, through the runner) in the
namespaces below, minitensor's signature is compared with PyTorch's: parameter names, the order of
the positional ones, defaults, keyword-only markers and `*args` forms (`x.view(*shape)`). It prints
per namespace how many names match, which mismatch (with the difference) and how many cannot be
checked (no signature on one side: properties, classes of C++ code, constants). Differences
docs/pytorch_compatibility.md lists with a reason (its "Signature differences kept" table) are
counted apart, and so are those its table "Signature differences not yet fixed" lists (known and
open); the script exits 1 when any other difference is found. Without PyTorch it says so
and exits 0.

Where PyTorch's signatures come from. Its builtins (`torch.add`, `Tensor.sum`) have no
`inspect.signature`; their typed stubs do: `torch/_C/_VariableFunctions.pyi` (the torch.*
functions, one `def` per overload) and the class `TensorBase` in `torch/_C/__init__.pyi` (the
methods). Functions written in Python (`torch.functional`, `torch.autograd`, `torch.func`,
`torch.distributions`, `torch.random`) have real signatures. The rest (`torch.linalg`,
`torch.special`, `torch.fft`, whose stubs PyTorch does not ship) have their signature on the
first line of their docstring (`linalg.norm(A, ord=None, dim=None, keepdim=False, *, out=None,
dtype=None) -> Tensor`), which is parsed. Overloads that take named dimensions (`dim: str`) are
left out: named tensors are out of scope.

The rule: minitensor's one signature must accept every call each of PyTorch's overloads accepts,
the same way, and no more keywords than PyTorch's overloads together.

- the positional parameters of an overload, in order, have minitensor's names at the same places;
  a name that differs is accepted where PyTorch's own overloads disagree at that place
  (`max(input, dim)` and `max(input, other)`) and minitensor takes the other name as a keyword;
  a `*args` of minitensor's takes the place of the rest, when PyTorch's overload has a `*args` there
  too or minitensor also takes the name as a keyword (`zeros(*size)` and `zeros(size=(2, 3))`);
- a keyword-only parameter of PyTorch's is keyword-only in minitensor (unless some overload takes
  it by position), and a parameter PyTorch takes by position is not keyword-only in minitensor;
- a default is PyTorch's default, and what is optional in PyTorch is optional in minitensor;
- minitensor has no parameter that none of PyTorch's overloads has.

`device`, `pin_memory`, `layout` and `memory_format`, which mean nothing to a CPU-only library,
must be accepted where PyTorch accepts them, but their defaults are not compared.
"""
from __future__ import annotations

import argparse
import ast
import fnmatch
import importlib
import inspect
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "pytorch_compatibility.md"
TABLE_HEADING = "### Signature differences kept"
PENDING_HEADING = "### Signature differences not yet fixed"

NAMESPACES = [
    "torch", "torch.Tensor", "torch.autograd", "torch.autograd.functional", "torch.func", "torch.linalg",
    "torch.special", "torch.fft", "torch.distributions", "torch.random",
]
# Arguments about memory and devices: a CPU-only library accepts and ignores them (defaults not compared)
CPU_IRRELEVANT = frozenset({"device", "pin_memory", "layout", "memory_format"})
POS, KW, VAR_POS, VAR_KW = "positional", "keyword-only", "*args", "**kwargs"
UNKNOWN = object()  # a default that is there but not a plain value (`torch.preserve_format`, `...`)


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # POS, KW, VAR_POS, VAR_KW
    default: object = inspect.Parameter.empty  # empty: required

    @property
    def optional(self) -> bool:
        return self.default is not inspect.Parameter.empty or self.kind in (VAR_POS, VAR_KW)


@dataclass
class Result:
    """One name's comparison: issues are (parameter, what differs)."""
    namespace: str
    name: str
    issues: list[tuple[str, str]] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)  # issues the doc keeps, with a reason
    open: list[tuple[str, str]] = field(default_factory=list)  # issues the doc lists as not yet fixed
    uncheckable: str | None = None


# --- reading signatures ---------------------------------------------------------------------------

def _default(node: ast.expr | None) -> object:
    if node is None:
        return inspect.Parameter.empty
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return UNKNOWN
    return UNKNOWN if value is Ellipsis else value


def _annotation(node: ast.arg) -> str:
    return ast.unparse(node.annotation) if node.annotation is not None else ""


def params_of_ast(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[Param], str]:
    """The parameters of a `def` (stub or parsed docstring line), and their annotations' text."""
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params = [Param(p.arg, POS, _default(d)) for p, d in zip(positional, defaults)]
    if a.vararg is not None:
        params.append(Param(a.vararg.arg, VAR_POS))
    params += [Param(p.arg, KW, _default(d)) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg is not None:
        params.append(Param(a.kwarg.arg, VAR_KW))
    annotations = " ".join(_annotation(p) for p in positional + a.kwonlyargs + [a.vararg, a.kwarg] if p is not None)
    return params, annotations


def params_of_signature(sig: inspect.Signature) -> list[Param]:
    kinds = {inspect.Parameter.POSITIONAL_ONLY: POS, inspect.Parameter.POSITIONAL_OR_KEYWORD: POS,
             inspect.Parameter.KEYWORD_ONLY: KW, inspect.Parameter.VAR_POSITIONAL: VAR_POS,
             inspect.Parameter.VAR_KEYWORD: VAR_KW}
    return [Param(p.name, kinds[p.kind], p.default) for p in sig.parameters.values()]


def _named_dims(annotations: str) -> bool:
    """An overload on named dimensions (`dim: str | EllipsisType | None`, `Dimname`): out of scope."""
    return "dimname" in annotations.lower()


def _stub_overloads(path: Path, cls: str | None) -> dict[str, list[list[Param]]]:
    """name -> its overloads' parameters, from a stub file (a class's methods when cls is given)."""
    text = re.sub(r'[rR]?"""[\s\S]*?"""', "...", path.read_text())  # the docstrings: most of the text, not needed
    tree = ast.parse(text)
    body = tree.body
    if cls is not None:
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
    out: dict[str, list[list[Param]]] = {}
    named_only: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params, annotations = params_of_ast(node)
            if _named_dims(annotations):
                named_only.add(node.name)
                continue
            out.setdefault(node.name, []).append(params)
    for name in named_only - set(out):  # every overload was on names: keep them rather than lose the name
        out[name] = []
    return out


def _doc_overloads(obj, name: str) -> list[list[Param]]:
    """Signatures written on a docstring's lines `name(...) -> ...` (linalg, special, fft builtins)."""
    doc = getattr(obj, "__doc__", None) or ""
    out = []
    for line in doc.splitlines()[:12]:
        m = re.match(rf"\s*(?:[\w.]*\.)?{re.escape(name)}\((.*)\)\s*(->.*)?$", line)
        if not m:
            continue
        try:
            args = re.sub(r"\b(?:bool|int|float|Tensor|str)\s+(?=\w)", "", m.group(1))  # `bool pivot=True`
            fn = ast.parse(f"def f({args}): pass").body[0]
        except SyntaxError:
            continue
        assert isinstance(fn, ast.FunctionDef)
        out.append(params_of_ast(fn)[0])
    return out


def _positional_count_checked(obj, overloads: list[list[Param]]) -> list[list[Param]]:
    """A docstring may call positional what the parser takes by keyword only (`linalg.vander(x, N=None)`):
    with one overload, ask the parser how many it takes by position ("takes 1 positional argument")."""
    if len(overloads) != 1:
        return overloads
    try:
        obj(*[object()] * 9)
    except TypeError as e:
        m = re.search(r"takes (\d+) positional argument", str(e))
    else:
        return overloads
    if not m:
        return overloads
    n, out, i = int(m.group(1)), [], 0
    for p in overloads[0]:
        if p.kind == POS:
            out.append(p if i < n else Param(p.name, KW, p.default))
            i += 1
        else:
            out.append(p)
    return [sorted(out, key=lambda p: [POS, VAR_POS, KW, VAR_KW].index(p.kind))]


class TorchSignatures:
    """PyTorch's overloads of a name, from the stubs, the real signature or the docstring."""

    def __init__(self) -> None:
        import torch
        stubs = Path(torch.__file__).parent / "_C"
        self.functions = _stub_overloads(stubs / "_VariableFunctions.pyi", None)
        self.methods = _stub_overloads(stubs / "__init__.pyi", "TensorBase")

    def overloads(self, namespace: str, name: str) -> list[list[Param]] | None:
        """None when PyTorch's signature cannot be read; the method forms without `self`."""
        import torch
        obj = getattr(torch.Tensor if namespace == "torch.Tensor" else importlib.import_module(namespace), name)
        if namespace == "torch.Tensor":
            if name in self.methods:
                return [ps[1:] for ps in self.methods[name]]
            if isinstance(obj, property) or not callable(obj):
                return None
        elif namespace == "torch" and name in self.functions:
            return _without_deprecated([_self_is_input(ps) for ps in self.functions[name]])
        if not callable(obj):
            return None
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            return _positional_count_checked(obj, _doc_overloads(obj, name)) or None
        params = params_of_signature(sig)
        if namespace == "torch.Tensor" and params and params[0].kind == POS:
            params = params[1:]
        if all(p.kind in (VAR_POS, VAR_KW) for p in params):  # a (*args, **kwargs) wrapper: its docstring says more
            return _doc_overloads(obj, name) or [params]
        return [params]


def _self_is_input(params: list[Param]) -> list[Param]:
    """A torch.* function's tensor argument is `input`; the stubs call it `self` in some overloads
    (`bitwise_and(self: Number, other)`), which PyTorch's parser names `input` too."""
    return [Param("input", p.kind, p.default) if p.kind == POS and p.name == "self" else p for p in params]


def _without_deprecated(overloads: list[list[Param]]) -> list[list[Param]]:
    """Leave out PyTorch's deprecated overloads: the same names as another overload's, in another
    order (`add(input, alpha, other)` beside `add(input, other, *, alpha=1)`); PyTorch warns on them."""
    def order(ps: list[Param]) -> list[str]:
        return [p.name for p in ps if p.kind == POS]

    def moved(ps: list[Param], other: list[Param]) -> bool:
        """Some place holds in `other` a name that `ps` takes by position further on (`other` after `alpha`);
        an overload that only takes more by position (`sort(input, dim, descending)` beside
        `sort(input, *, stable, dim, descending)`) moves nothing."""
        mine, theirs = order(ps), order(other)
        return any(a != b and b in mine[i:] for i, (a, b) in enumerate(zip(mine, theirs)))
    kept = []
    for ps in overloads:
        names = {p.name for p in ps if p.kind in (POS, KW)}
        if any(names <= {p.name for p in other if p.kind in (POS, KW)} and moved(ps, other)
               for other in overloads if other is not ps):
            continue
        kept.append(ps)
    return kept


def minitensor_params(obj, method: bool) -> list[Param] | None:
    if isinstance(obj, property) or not callable(obj):
        return None
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params = params_of_signature(sig)
    if method and not isinstance(obj, (staticmethod, classmethod)) and params and params[0].kind == POS:
        params = params[1:]
    return params


# --- the comparison -------------------------------------------------------------------------------

def _same_default(a: object, b: object) -> bool:
    if a is UNKNOWN or b is UNKNOWN:
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):  # torch.Size([]) and minitensor's Size(())
        return tuple(a) == tuple(b)
    try:
        return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                                 and not isinstance(a, bool) and not isinstance(b, bool) and a == b)
    except Exception:
        return False


def compare(overloads: list[list[Param]], mine: list[Param]) -> list[tuple[str, str]]:
    """What differs between minitensor's parameters and PyTorch's overloads (the module docstring's rule)."""
    issues: list[tuple[str, str]] = []
    by_name = {p.name: p for p in mine}
    mine_pos = [p for p in mine if p.kind == POS]
    mine_var = next((p for p in mine if p.kind == VAR_POS), None)
    takes_kwargs = any(p.kind == VAR_KW for p in mine)
    # names PyTorch's overloads have at each position, and the names some overload takes by position
    at: dict[int, set[str]] = {}
    positional_somewhere: set[str] = set()
    every_name: set[str] = set()
    for ps in overloads:
        for i, p in enumerate(q for q in ps if q.kind == POS):
            at.setdefault(i, set()).add(p.name)
            positional_somewhere.add(p.name)
        every_name |= {p.name for p in ps if p.kind in (POS, KW)}
    torch_var = any(p.kind == VAR_POS for ps in overloads for p in ps)

    def keyword(name: str) -> bool:
        p = by_name.get(name)
        return (p is not None and p.kind in (POS, KW)) or takes_kwargs

    for ps in overloads:
        pos = [p for p in ps if p.kind == POS]
        has_var = any(p.kind == VAR_POS for p in ps)
        for i, p in enumerate(pos):
            if i < len(mine_pos):
                q = mine_pos[i]
                if q.name != p.name and not (q.name in at.get(i, ()) and keyword(p.name)):
                    issues.append((p.name, f"position {i} is `{p.name}` in PyTorch, `{q.name}` in minitensor"))
            elif mine_var is not None:
                if not keyword(p.name):
                    issues.append((p.name, f"`{p.name}` only through *{mine_var.name} (PyTorch also takes "
                                           f"`{p.name}=`)"))
            elif p.name in by_name and by_name[p.name].kind == KW:
                issues.append((p.name, f"`{p.name}` is positional in PyTorch, keyword-only in minitensor"))
            elif not keyword(p.name):
                issues.append((p.name, f"`{p.name}` missing"))
        if has_var and mine_var is None and len(mine_pos) <= len(pos):
            var = next(p for p in ps if p.kind == VAR_POS)
            issues.append((var.name, f"PyTorch takes *{var.name}, minitensor does not"))
        for p in ps:
            if p.kind == KW and not keyword(p.name):
                issues.append((p.name, f"keyword `{p.name}` missing"))
            if p.kind == VAR_KW and not takes_kwargs:
                issues.append((p.name, f"PyTorch takes **{p.name}, minitensor does not"))
        # defaults, and optional in PyTorch -> optional in minitensor
        for p in ps:
            q = by_name.get(p.name)
            if q is None or p.kind in (VAR_POS, VAR_KW) or q.kind in (VAR_POS, VAR_KW):
                continue
            if p.optional and not q.optional:
                issues.append((p.name, f"`{p.name}` is optional in PyTorch, required in minitensor"))
            elif (p.optional and q.optional and p.name not in CPU_IRRELEVANT
                  and not _same_default(p.default, q.default)):
                issues.append((p.name, f"default of `{p.name}`: PyTorch {p.default!r}, minitensor {q.default!r}"))
        # minitensor's required parameters are in this overload
        names = {p.name for p in ps}
        for i, q in enumerate(mine):
            if not q.optional and q.name not in names and not (q.kind == POS and i < len(pos)):
                issues.append((q.name, f"`{q.name}` is required in minitensor, absent from an overload of PyTorch's"))
    for q in mine:
        if q.kind == POS and q.name not in positional_somewhere and q.name in every_name:
            issues.append((q.name, f"`{q.name}` is keyword-only in PyTorch, positional in minitensor"))
        elif q.kind in (POS, KW) and q.name not in every_name and not (q.kind == POS and torch_var):
            issues.append((q.name, f"`{q.name}` is minitensor's own (PyTorch has no such parameter)"))
        elif q.kind == VAR_KW and not any(p.kind == VAR_KW for ps in overloads for p in ps):
            issues.append((q.name, f"minitensor takes **{q.name}, PyTorch does not"))
    seen: set[tuple[str, str]] = set()
    return [i for i in issues if not (i in seen or seen.add(i))]  # type: ignore[func-returns-value]


# --- the doc's table of differences kept ----------------------------------------------------------

def kept_differences(text: str | None = None, headings: tuple[str, ...] = ("", "")) -> dict[tuple[str, str], str]:
    """(qualified name, parameter) -> reason, from the doc's table `| names | parameters | reason |`.

    `*` as the parameter keeps every difference of those names; a name may hold `*` (`torch.*_`)."""
    text = DOC.read_text() if text is None else text
    rows = []
    for heading in (TABLE_HEADING, PENDING_HEADING) if headings == ("", "") else headings:
        if f"\n{heading}\n" in text:
            body = text.split(f"\n{heading}\n", 1)[1]
            body = re.split(r"\n#{1,3} ", body, maxsplit=1)[0]
            rows += [line for line in body.splitlines() if line.startswith("|")][2:]
    kept: dict[tuple[str, str], str] = {}
    for line in rows:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[2]:
            raise ValueError(f"a kept signature difference needs 3 cells (names | parameters | reason): {line[:80]!r}")
        names = [n.strip().strip("`") for n in cells[0].split(",")]
        params = [p.strip().strip("`") for p in cells[1].split(",")]
        for n in names:
            if not re.fullmatch(r"torch(\.[\w*]+)+", n):
                raise ValueError(f"not a qualified name in the kept signature differences: {n!r}")
            for p in params:
                kept[(n, p)] = cells[2]
    return kept


# --- the names ------------------------------------------------------------------------------------

def covered_names(namespaces: list[str]) -> dict[str, list[str]]:
    """namespace -> the in-scope names minitensor has (scripts/api_coverage.py's rule)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import api_coverage

    known = [n for n in namespaces if n in api_coverage.NAMESPACES]
    results = api_coverage.measure(known)
    out = {r["namespace"]: sorted(set(api_coverage.public_names(r["namespace"])) - set(r["missing"])
                                  - set(api_coverage.out_of_scope().get(r["namespace"], {})))
           for r in results}
    for n in namespaces:
        out.setdefault(n, [])  # torch.fft: counted only when the runner maps it
        if n not in known:
            try:
                mod = importlib.import_module(n)
                names = [x for x in getattr(mod, "__all__", dir(mod)) if not x.startswith("_")]
                found = api_coverage.minitensor_has({n: names})[n]
                out[n] = sorted(found)
            except ImportError:
                pass
    return out


def run(namespaces: list[str], kept: dict[tuple[str, str], str] | None = None) -> list[Result]:
    from minitensor import run as runner

    kept = kept_differences() if kept is None else kept
    theirs = TorchSignatures()
    names = covered_names(namespaces)
    # PyTorch's side first: inside the runner `import torch` is minitensor
    overloads: dict[tuple[str, str], list[list[Param]] | None] = {}
    why: dict[tuple[str, str], str] = {}
    for namespace in namespaces:
        for name in names.get(namespace, []):
            key = (namespace, name)
            if namespace == "torch.distributions" and not inspect.isclass(_torch_attr(namespace, name)):
                overloads[key], why[key] = None, "not a distribution's constructor"
                continue
            try:
                overloads[key] = theirs.overloads(namespace, name)
                why[key] = "PyTorch's has no readable signature"
            except Exception as e:  # noqa: BLE001 - a name PyTorch raises on: nothing to compare
                overloads[key], why[key] = None, f"PyTorch's raises {type(e).__name__}"
    results = []
    with runner.torch_is_minitensor():
        for namespace in namespaces:
            ns_obj = (importlib.import_module("torch").Tensor if namespace == "torch.Tensor"
                      else _import_or_none(namespace))
            for name in names.get(namespace, []):
                r = Result(namespace, name)
                results.append(r)
                theirs_ = overloads[(namespace, name)]
                if theirs_ is None:
                    r.uncheckable = why[(namespace, name)]
                    continue
                if not theirs_:
                    r.uncheckable = "PyTorch's overloads are all on named dimensions"
                    continue
                mine = minitensor_params(*_minitensor_callable(ns_obj, namespace, name))
                if mine is None:
                    r.uncheckable = "not callable in minitensor (a property, constant or class without a signature)"
                    continue
                qualified = f"{namespace}.{name}"
                for issue in compare(theirs_, mine):
                    reason = _is_kept(kept, qualified, issue[0])
                    if reason == "open":
                        r.open.append(issue)
                    elif reason is not None:
                        r.kept.append(issue)
                    else:
                        r.issues.append(issue)
    return results


def _minitensor_callable(ns_obj, namespace: str, name: str):
    """(the object, whether it is a method whose first parameter is the tensor)."""
    if namespace != "torch.Tensor":
        return getattr(ns_obj, name), False
    static = inspect.getattr_static(ns_obj, name)
    if isinstance(static, staticmethod):
        return static.__func__, False
    if isinstance(static, (property, classmethod)):
        return static, False
    return getattr(ns_obj, name), True


def _is_kept(kept: dict[tuple[str, str], str], qualified: str, param: str) -> str | None:
    """The reason (or "open") the doc gives for this difference, None when it gives none."""
    return next((why for (n, p), why in kept.items() if fnmatch.fnmatchcase(qualified, n) and p in (param, "*")),
                None)


def _import_or_none(namespace: str):
    try:
        return importlib.import_module(namespace)
    except ImportError:
        return None


def _torch_attr(namespace: str, name: str):
    import torch
    return getattr(torch.Tensor if namespace == "torch.Tensor" else importlib.import_module(namespace), name)


# --- printing -------------------------------------------------------------------------------------

def summary(results: list[Result], namespaces: list[str]) -> list[dict]:
    rows = []
    for ns in namespaces:
        rs = [r for r in results if r.namespace == ns]
        rows.append({
            "namespace": ns,
            "matching": sum(1 for r in rs if not r.uncheckable and not r.issues and not r.kept and not r.open),
            "kept": sum(1 for r in rs if not r.uncheckable and not r.issues and not r.open and r.kept),
            "open": sum(1 for r in rs if not r.uncheckable and not r.issues and r.open),
            "mismatching": {r.name: [msg for _, msg in r.issues] for r in rs if r.issues},
            "uncheckable": {r.name: r.uncheckable for r in rs if r.uncheckable},
        })
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--namespace", choices=NAMESPACES, help="only this namespace")
    parser.add_argument("--all", action="store_true", help="also list the uncheckable names and kept differences")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--pending", action="store_true",
                        help="the mismatches as rows of the doc's table of differences not yet fixed")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("api_signatures: PyTorch is not installed; nothing to compare with", file=sys.stderr)
        return 0
    namespaces = [args.namespace] if args.namespace else NAMESPACES
    results = run(namespaces)
    rows = summary(results, namespaces)
    if args.pending:
        groups: dict[tuple[str, ...], list[str]] = {}
        for r in results:
            if r.issues:
                groups.setdefault(tuple(sorted({p for p, _ in r.issues})), []).append(f"{r.namespace}.{r.name}")
        for params, names in sorted(groups.items(), key=lambda kv: kv[1][0]):
            print(f"| {', '.join(f'`{n}`' for n in names)} | {', '.join(f'`{p}`' for p in params)} | open |")
        return 0
    if args.json:
        print(json.dumps({"torch": torch.__version__, "namespaces": rows}, indent=1))
    else:
        print(f"{'namespace':<26} matching  kept  open  mismatching  uncheckable   (PyTorch {torch.__version__})")
        for row in rows:
            print(f"{row['namespace']:<26} {row['matching']:>8}  {row['kept']:>4}  {row['open']:>4}  "
                  f"{len(row['mismatching']):>11}  "
                  f"{len(row['uncheckable']):>11}")
            for name, msgs in row["mismatching"].items():
                print(f"    {name}: " + "; ".join(msgs))
            if args.all:
                for r in results:
                    if r.namespace == row["namespace"] and (r.kept or r.open) and not r.issues:
                        print(f"    (kept/open) {r.name}: " + "; ".join(m for _, m in r.kept + r.open))
                for name, why in row["uncheckable"].items():
                    print(f"    (uncheckable) {name}: {why}")
    return 1 if any(row["mismatching"] for row in rows) else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())

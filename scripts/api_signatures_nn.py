"""Signatures of minitensor's nn, optim and data names against PyTorch's, name by name.

    PYTHONPATH=$PWD python scripts/api_signatures_nn.py [--namespace torch.nn] [--all] [--modules]

Needs PyTorch installed (without it the script says so and exits 0). For every name of the
namespaces below that both libraries have (scripts/api_coverage.py decides which names count), it
compares `inspect.signature`: of a class its `__init__`, of an optimizer also `step` and
`zero_grad`, of a learning-rate scheduler also `step`; otherwise the function itself. Two
signatures match when they have the same parameters in the same order, of the same kinds
(positional-only, positional-or-keyword, `*args`, keyword-only, `**kwargs`) and with equal
defaults. The factory arguments (`device`, `dtype`) are compared by presence only where both
libraries take them: minitensor's are CPU and numpy stand-ins, and their annotations differ.

A name is *uncheckable* when either signature cannot be read (a C builtin) or PyTorch's is only
`(*args, **kwargs)` (its real arguments are parsed inside: `nn.LSTM`, `nn.Buffer`).

`--modules` also builds every `torch.nn` layer with its default arguments (sizes from `BUILD`
where some are required) in both libraries and compares the state-dict keys, the shapes of the
parameters and buffers, and `repr`.

The differences kept on purpose are listed, each with its reason, in docs/pytorch_compatibility.md
under "Signatures of the nn, optim and data names"; `tests/scripts/test_api_signatures_nn.py`
fails on any other.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import importlib.util
import inspect
import io
import math
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "pytorch_compatibility.md"
TABLE_HEADING = "### Signatures of the nn, optim and data names"

NAMESPACES = ["torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.nn.utils.rnn",
              "torch.optim", "torch.optim.lr_scheduler", "torch.utils.data"]
FACTORY = ("device", "dtype")  # compared by presence only (see the docstring)
EMPTY = inspect.Parameter.empty


def _coverage():
    """scripts/api_coverage.py, loaded from its file (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("api_coverage", ROOT / "scripts" / "api_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _minitensor_module(namespace: str):
    from minitensor.run import MODULES
    return importlib.import_module(MODULES[namespace])


# --- what is compared -----------------------------------------------------------------------------

def targets(namespace: str, name: str, torch_obj, mt_obj) -> list[tuple[str, object, object]]:
    """(label, PyTorch's callable, minitensor's) for one name: a class itself (its constructor) and its
    optimizer or scheduler methods, otherwise the object itself."""
    label = f"{namespace}.{name}"
    found = [(label, torch_obj, mt_obj)]
    if inspect.isclass(torch_obj):
        methods = {"torch.optim": ("step", "zero_grad"), "torch.optim.lr_scheduler": ("step",)}.get(namespace, ())
        for method in methods:
            if callable(getattr(torch_obj, method, None)):
                found.append((f"{label}.{method}", getattr(torch_obj, method), getattr(mt_obj, method, None)))
    return found


def _signature(fn, name: str = "") -> tuple[inspect.Signature | None, str]:
    """fn's signature and where it was read: "" from the code, "docstring" from its text (a C builtin or a
    `(*args, **kwargs)` wrapper whose docstring's first line is `name(a, b=1)`), "" and None if neither."""
    if inspect.isclass(fn) and _inherits_module_init(fn):
        return inspect.Signature(), ""  # Module.__init__(*args, **kwargs) takes no argument in fact
    sig = _class_signature(fn) if inspect.isclass(fn) else None
    if sig is None:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):  # a builtin without text signature
            sig = None
    if sig is None or _only_varargs(_params(sig)):
        from_doc = _docstring_signature(fn, name)
        if from_doc is not None:
            return from_doc, "docstring"
    return sig, ""


def _class_signature(cls) -> inspect.Signature | None:
    """The constructor's arguments: `__init__`'s, or `__new__`'s where `__init__` takes only (*args, **kwargs)
    or is C code (`Parameter`); a `@deprecated` class's wrapped `__new__` does not hide its `__init__`."""
    found = [inspect.signature(f) for f in (cls.__init__, cls.__new__) if inspect.isfunction(f)]
    return next((sig for sig in found if not _only_varargs(_params(sig))), found[0] if found else None)


def _inherits_module_init(cls) -> bool:
    """A Module subclass that keeps Module's own __init__ (either library's)."""
    for klass in cls.__mro__:
        if "__init__" in vars(klass):
            return klass.__name__ == "Module" and klass.__module__.split(".")[0] in ("torch", "minitensor")
    return False


def _docstring_signature(fn, name: str = "") -> inspect.Signature | None:
    """The signature PyTorch's docstring states on its first line (`conv2d(input, weight, bias=None, ...)`,
    a recurrent layer's `__init__(input_size, ...)`), parsed as Python; None where it states none."""
    doc = inspect.cleandoc(fn.__doc__ or "")
    names = {getattr(fn, "__name__", ""), "__init__", name}
    m = re.match(r"(\w+)\(", doc)
    if not m or m.group(1) not in names:
        return None
    depth, end = 0, None
    for i, ch in enumerate(doc[m.end() - 1:], m.end() - 1):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            end = i
            break
    if end is None:
        return None
    try:
        tree = ast.parse(f"def f({doc[m.end():end]}): pass")
        args = tree.body[0].args
        positional = args.posonlyargs + args.args
        defaults = [EMPTY] * (len(positional) - len(args.defaults)) + [_constant(d) for d in args.defaults]
        params = [inspect.Parameter(a.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d)
                  for a, d in zip(positional, defaults) if a.arg != "self"]
        params += [inspect.Parameter(a.arg, inspect.Parameter.KEYWORD_ONLY,
                                     default=EMPTY if d is None else _constant(d))
                   for a, d in zip(args.kwonlyargs, args.kw_defaults)]
        return inspect.Signature(params)
    except (SyntaxError, ValueError):  # `constant(...)`: a deprecated alias that states no arguments
        return None


def _params(sig: inspect.Signature) -> list[inspect.Parameter]:
    params = list(sig.parameters.values())
    if params and params[0].name in ("self", "cls") and params[0].kind <= inspect.Parameter.POSITIONAL_OR_KEYWORD:
        params = params[1:]
    return params


def _only_varargs(params: list[inspect.Parameter]) -> bool:
    kinds = {p.kind for p in params}
    return bool(params) and kinds <= {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}


def same_default(a, b) -> bool:
    """Equal defaults: numbers, strings, None, tuples by value (1 == 1.0, NaN == NaN); a function or
    class by name; a dtype by its name; anything else by its repr without module paths."""
    if a is EMPTY or b is EMPTY:
        return a is b
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same_default(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    plain = (bool, int, float, str, type(None))
    if isinstance(a, plain) or isinstance(b, plain):
        numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
        return (type(a) is type(b) or numbers) and a == b
    if _is_default_generator(a) and _is_default_generator(b):
        return True
    if callable(a) and callable(b) and hasattr(a, "__name__") and hasattr(b, "__name__"):
        return a.__name__ == b.__name__
    return _plain_repr(a) == _plain_repr(b)


def _is_default_generator(value) -> bool:
    """The library's global generator (`torch.default_generator`, `minitensor.default_generator`)."""
    import torch

    import minitensor
    return value is torch.default_generator or value is minitensor.default_generator


def _plain_repr(value) -> str:
    text = repr(value)
    return re.sub(r"\b(torch|minitensor|numpy|np)\.", "", text)


def _describe(p: inspect.Parameter) -> str:
    star = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}.get(p.kind, "")
    default = "" if p.default is EMPTY else f"={_plain_repr(p.default)}"
    return f"{star}{p.name}{default}"


def _shape(params: list[inspect.Parameter]) -> str:
    """A signature as `(a, b=1, /, c, *, d=2)` without annotations."""
    out, slash, star = [], False, False
    for p in params:
        if p.kind != inspect.Parameter.POSITIONAL_ONLY and not slash and any(
                q.kind == inspect.Parameter.POSITIONAL_ONLY for q in params):
            out.append("/")
            slash = True
        if p.kind == inspect.Parameter.KEYWORD_ONLY and not star:
            out.append("*")
            star = True
        if p.kind == inspect.Parameter.VAR_POSITIONAL:
            star = True
        out.append(_describe(p))
    if not slash and params and all(q.kind == inspect.Parameter.POSITIONAL_ONLY for q in params):
        out.append("/")
    return "(" + ", ".join(out) + ")"


def compare(torch_fn, mt_fn, name: str = "") -> tuple[str, str]:
    """("match" | "mismatch" | "uncheckable", what differs). From a docstring the keyword-only markers
    are not known (PyTorch's docstrings leave out the `*`), so only names, order and defaults count."""
    if mt_fn is None:
        return "mismatch", "minitensor has no such method"
    (ts, source), (ms, _) = _signature(torch_fn, name), _signature(mt_fn, name)
    if ts is None or ms is None:
        return "uncheckable", f"no signature to read ({'PyTorch' if ts is None else 'minitensor'})"
    tp, mp = _params(ts), _params(ms)
    if _only_varargs(tp) and not _only_varargs(mp) and source != "docstring":
        return "uncheckable", "PyTorch's signature is (*args, **kwargs) and its docstring states none"
    both = {p.name for p in tp} & {p.name for p in mp} & set(FACTORY)
    tp = [p for p in tp if p.name not in both]
    mp = [p for p in mp if p.name not in both]
    diffs = []
    tnames, mnames = [p.name for p in tp], [p.name for p in mp]
    if tnames != mnames:
        missing = [n for n in tnames if n not in mnames]
        extra = [n for n in mnames if n not in tnames]
        if missing:
            diffs.append("lacks " + ", ".join(missing))
        if extra:
            diffs.append("has extra " + ", ".join(extra))
        if not missing and not extra:
            diffs.append("order differs")
    mby = {p.name: p for p in mp}
    for p in tp:
        q = mby.get(p.name)
        if q is None:
            continue
        if p.kind != q.kind and source != "docstring":
            diffs.append(f"{p.name} is {q.kind.description} (PyTorch: {p.kind.description})")
        if not same_default(p.default, q.default):
            diffs.append(f"{p.name} default {_plain_repr(q.default) if q.default is not EMPTY else 'none'} "
                         f"(PyTorch: {_plain_repr(p.default) if p.default is not EMPTY else 'none'})")
    if diffs:
        where = " (from PyTorch's docstring)" if source else ""
        return "mismatch", "; ".join(diffs) + f"   PyTorch{where} {_shape(tp)}  minitensor {_shape(mp)}"
    return "match", ""


def check_signatures(namespaces: list[str] = NAMESPACES) -> dict[str, dict[str, dict[str, str]]]:
    """namespace -> {"match": {label: ""}, "mismatch": {label: diff}, "uncheckable": {label: why}}."""
    cov = _coverage()
    table = cov.out_of_scope()
    results = {}
    for namespace in namespaces:
        tmod, mmod = importlib.import_module(namespace), _minitensor_module(namespace)
        out: dict[str, dict[str, str]] = {"match": {}, "mismatch": {}, "uncheckable": {}}
        for name in cov.public_names(namespace):
            if name in table.get(namespace, {}) or not hasattr(mmod, name):
                continue  # out of scope, or missing (api_coverage.py counts those)
            torch_obj, mt_obj = getattr(tmod, name), getattr(mmod, name)
            for label, tfn, mfn in targets(namespace, name, torch_obj, mt_obj):
                verdict, why = compare(tfn, mfn, label.rsplit(".", 1)[1])
                out[verdict][label] = why
        results[namespace] = out
    return results


# --- modules built with their defaults ------------------------------------------------------------

# The required arguments of the torch.nn layers that have some (tiny sizes); the rest are built with ().
BUILD: dict[str, tuple] = {
    "AdaptiveAvgPool1d": (2,), "AdaptiveAvgPool2d": (2,), "AdaptiveAvgPool3d": (2,),
    "AdaptiveMaxPool1d": (2,), "AdaptiveMaxPool2d": (2,), "AdaptiveMaxPool3d": (2,),
    "AdaptiveLogSoftmaxWithLoss": (4, 6, [2, 4]),
    "AvgPool1d": (2,), "AvgPool2d": (2,), "AvgPool3d": (2,),
    "BatchNorm1d": (3,), "BatchNorm2d": (3,), "BatchNorm3d": (3,),
    "Bilinear": (2, 3, 4), "ChannelShuffle": (2,),
    "CircularPad1d": (1,), "CircularPad2d": (1,), "CircularPad3d": (1,),
    "ConstantPad1d": (1, 0.5), "ConstantPad2d": (1, 0.5), "ConstantPad3d": (1, 0.5),
    "Conv1d": (2, 4, 3), "Conv2d": (2, 4, 3), "Conv3d": (2, 4, 3),
    "ConvTranspose1d": (2, 4, 3), "ConvTranspose2d": (2, 4, 3), "ConvTranspose3d": (2, 4, 3),
    "CrossMapLRN2d": (3,), "Embedding": (5, 3), "EmbeddingBag": (5, 3),
    "FeatureAlphaDropout": (), "Fold": ((4, 4), 2), "FractionalMaxPool2d": (2, (3, 3)),
    "FractionalMaxPool3d": (2, (3, 3, 3)), "GLU": (), "GRU": (3, 4), "GRUCell": (3, 4), "GroupNorm": (2, 4),
    "InstanceNorm1d": (3,), "InstanceNorm2d": (3,), "InstanceNorm3d": (3,),
    "LPPool1d": (2, 2), "LPPool2d": (2, 2), "LPPool3d": (2, 2), "LSTM": (3, 4), "LSTMCell": (3, 4),
    "LayerNorm": (4,), "LazyConv1d": (4, 3), "LazyConv2d": (4, 3), "LazyConv3d": (4, 3),
    "LazyConvTranspose1d": (4, 3), "LazyConvTranspose2d": (4, 3), "LazyConvTranspose3d": (4, 3),
    "LazyLinear": (4,), "Linear": (3, 4), "LinearCrossEntropyLoss": (3, 5), "LocalResponseNorm": (3,),
    "MaxPool1d": (2,), "MaxPool2d": (2,), "MaxPool3d": (2,),
    "MaxUnpool1d": (2,), "MaxUnpool2d": (2,), "MaxUnpool3d": (2,), "MultiheadAttention": (4, 2),
    "PixelShuffle": (2,), "PixelUnshuffle": (2,), "RMSNorm": (4,), "RNN": (3, 4), "RNNCell": (3, 4),
    "RNNBase": ("LSTM", 3, 4), "RNNCellBase": (3, 4, True, 4),
    "ReflectionPad1d": (1,), "ReflectionPad2d": (1,), "ReflectionPad3d": (1,),
    "ReplicationPad1d": (1,), "ReplicationPad2d": (1,), "ReplicationPad3d": (1,),
    "Threshold": (0.1, 2.0), "Transformer": (8, 2, 1, 1, 16), "TransformerDecoderLayer": (8, 2, 16),
    "TransformerEncoderLayer": (8, 2, 16), "Unflatten": (1, (2, 3)), "Unfold": (2,), "Upsample": (None, 2),
    "UpsamplingBilinear2d": (None, 2), "UpsamplingNearest2d": (None, 2),
    "ZeroPad1d": (1,), "ZeroPad2d": (1,), "ZeroPad3d": (1,), "GroupNorm1": (1, 1),
}


def _build(nn, name: str):
    args = BUILD.get(name, ())
    if name in ("TransformerEncoder", "TransformerDecoder"):
        layer = getattr(nn, name + "Layer")(8, 2, 16)
        return getattr(nn, name)(layer, 2, enable_nested_tensor=False) if name == "TransformerEncoder" \
            else getattr(nn, name)(layer, 2)
    return getattr(nn, name)(*args)


def _state(module) -> list[tuple[str, tuple | None]]:
    """(key, shape) of the state dict; a lazy layer's placeholder has no shape yet (None)."""
    return [(k, _shape_of(v)) for k, v in module.state_dict().items()]


def _shape_of(value) -> tuple | None:
    try:
        return tuple(value.shape)
    except (RuntimeError, ValueError):
        return None


def check_modules() -> dict[str, dict[str, str]]:
    """{"match": {name: ""}, "mismatch": {name: diff}, "uncheckable": {name: why}} over torch.nn's layers."""
    import torch.nn as tnn

    import minitensor.nn as mnn
    cov = _coverage()
    skip = cov.out_of_scope().get("torch.nn", {})
    out: dict[str, dict[str, str]] = {"match": {}, "mismatch": {}, "uncheckable": {}}
    for name in cov.public_names("torch.nn"):
        tcls = getattr(tnn, name)
        if name in skip or not hasattr(mnn, name) or not (inspect.isclass(tcls) and issubclass(tcls, tnn.Module)):
            continue
        label = f"torch.nn.{name}"
        try:
            with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                tm = _build(tnn, name)
        except Exception as e:  # an abstract base, or a container that needs its children
            out["uncheckable"][label] = f"PyTorch's cannot be built so: {type(e).__name__}"
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mm = _build(mnn, name)
        except Exception as e:
            out["mismatch"][label] = f"minitensor's cannot be built with PyTorch's arguments: {type(e).__name__}: {e}"
            continue
        diffs = []
        ts, ms = _state(tm), _state(mm)
        if [k for k, _ in ts] != [k for k, _ in ms]:
            diffs.append(f"state-dict keys {[k for k, _ in ms]} (PyTorch: {[k for k, _ in ts]})")
        elif ts != ms:
            diffs.append(f"state-dict shapes {ms} (PyTorch: {ts})")
        tr, mr = _plain_repr(repr(tm)), _plain_repr(repr(mm))
        if tr != mr:
            diffs.append(f"repr {mr!r} (PyTorch: {tr!r})")
        out["mismatch" if diffs else "match"][label] = "; ".join(diffs)
    return out


# --- the documented differences -------------------------------------------------------------------

def documented(text: str | None = None) -> dict[str, str]:
    """label -> reason, from the doc's table `| label | difference | reason |` (labels in backticks)."""
    text = DOC.read_text() if text is None else text
    if f"\n{TABLE_HEADING}\n" not in text:
        return {}
    body = text.split(f"\n{TABLE_HEADING}\n", 1)[1]
    body = re.split(r"\n#{1,3} ", body, maxsplit=1)[0]
    rows = [line for line in body.splitlines() if line.startswith("|")][2:]
    table = {}
    for line in rows:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[2]:
            raise ValueError(f"a signature row needs 3 cells (names | difference | reason): {line[:80]!r}")
        for label in re.findall(r"`([\w.]+)`", cells[0]):
            table[label] = cells[2]
    return table


def _constant(node: ast.expr):
    """A default as a docstring writes it: a literal, or arithmetic on numbers (`lower=1./8`)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        left, right = _constant(node.left), _constant(node.right)
        return {ast.Add: left + right, ast.Sub: left - right, ast.Mult: left * right,
                ast.Div: left / right if right else math.nan}[type(node.op)]
    return ast.literal_eval(node)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--namespace", choices=NAMESPACES, help="only this namespace")
    parser.add_argument("--all", action="store_true", help="also list the matching names")
    parser.add_argument("--modules", action="store_true", help="also compare torch.nn layers built by default")
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("api_signatures_nn: PyTorch is not installed; nothing to compare with", file=sys.stderr)
        return 0
    known = documented()
    results = check_signatures([args.namespace] if args.namespace else NAMESPACES)
    if args.modules:
        results["torch.nn layers (state dict, repr)"] = check_modules()
    undocumented = 0
    for namespace, out in results.items():
        print(f"{namespace}: {len(out['match'])} match, {len(out['mismatch'])} mismatch, "
              f"{len(out['uncheckable'])} uncheckable")
        for verdict in ("mismatch", "uncheckable") + (("match",) if args.all else ()):
            for label, why in out[verdict].items():
                mark = " (documented)" if verdict == "mismatch" and label in known else ""
                undocumented += verdict == "mismatch" and label not in known
                print(f"  {verdict:<11} {label}{mark}  {why}")
    print(f"api_signatures_nn: {undocumented} undocumented mismatch(es)")
    return 1 if undocumented else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # minitensor from this checkout
    sys.exit(main())

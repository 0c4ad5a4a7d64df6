"""Does minitensor refuse what PyTorch refuses, the same way? Bad inputs, name by name.

    PYTHONPATH=$PWD python scripts/api_errors.py [--namespace torch.linalg] [--fix-list] [--all]

Needs PyTorch installed (without it the script says so and exits 0). For every in-scope name that both
libraries have (scripts/api_coverage.py decides which names count) in `torch` (functions), `torch.Tensor`
(methods), `torch.nn.functional`, `torch.nn` (constructors, and forward on a built layer), `torch.linalg`
and `torch.special`, it makes a few calls from a small table of generic bad inputs, derived from PyTorch's
signature of the name:

- the tensor argument 0-d, 5-d, of integers, of booleans, or a string;
- two tensor arguments whose shapes do not broadcast, or whose float dtypes differ (float32 and float64:
  most ops promote, the one-dtype kernels of PyTorch refuse);
- `dim=` out of range on either side;
- a string where a number goes;
- a keyword the function does not have.

The arguments the case does not spoil are filled with plain valid values picked by the parameter's name
(`other` a tensor like the input, `dim` 0, `size` (2, 3), ...). Each call is made once on PyTorch and
once on minitensor, with the same values, and classified:

- `same-error`: both raise, minitensor the same exception class as PyTorch (or a subclass);
- `same-result`: both return, and the results agree (shapes, dtypes, values; random ops by shape and dtype);
- a difference: `error-class` (both raise, other classes), `only-torch-raises`, `only-minitensor-raises`,
  `result` (both return, the results differ), or `mutated` (minitensor raised and changed an input:
  its values, shape, version counter or `.grad`; a failed call must change nothing the user owns).

It prints the counts per namespace and the differences. The differences docs/pytorch_compatibility.md lists
under "Errors" (kept on purpose, each with its reason, or known and not yet fixed) are counted apart; the
script exits 1 on any other. `--fix-list` prints the undocumented differences one a line, for a work list.
"""
from __future__ import annotations

import argparse
import contextlib
import fnmatch
import importlib
import importlib.util
import inspect
import io
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "pytorch_compatibility.md"
KEPT_HEADING = "### Error differences kept"
OPEN_HEADING = "### Error differences not yet fixed"

NAMESPACES = ["torch", "torch.Tensor", "torch.nn.functional", "torch.nn", "torch.linalg", "torch.special"]
MINITENSOR = {"torch": "minitensor", "torch.Tensor": "minitensor", "torch.nn.functional": "minitensor.nn.functional",
              "torch.nn": "minitensor.nn", "torch.linalg": "minitensor.linalg", "torch.special": "minitensor.special"}
DIFFERENCES = ("error-class", "only-torch-raises", "only-minitensor-raises", "result", "mutated")

# Names not called: they change process-wide state (the default dtype, the seed, printing, threads), touch
# files, compile, or are not functions of data (context managers, classes of the type system)
SKIP = re.compile(r"^(set_|use_|manual_seed$|seed$|initial_seed$|save$|load$|compile$|autocast$|no_grad$|"
                  r"enable_grad$|inference_mode$|set_grad_enabled$|is_grad_enabled$|get_rng_state$|"
                  r"set_rng_state$|register_|share_memory_$|pin_memory$|cuda$|cpu$|to$|type$|"
                  r"Generator$|Size$|Tensor$|dtype$|device$|finfo$|iinfo$|typename$|is_tensor$|"
                  r"is_storage$|storage|untyped_storage|vmap$|cond$|library|sym_|_|backward$|"
                  r"apply_$|map_$|map2_$|numpy$|tolist$|item$|data_ptr$|element_size$|__)")
# Ops whose values are drawn at random (or uninitialized memory): their results agree by shape and dtype only
RANDOM = re.compile(r"(?i)rand|dropout|bernoulli|multinomial|^normal_?$|poisson|exponential_|geometric_|cauchy_|"
                    r"log_normal_|uniform_|random_|empty|gumbel|rrelu|fractional")

# --- the values ----------------------------------------------------------------------------------

X23 = np.array([[0.25, 0.5, 0.75], [1.0, 1.5, 2.0]], dtype=np.float32)
VALUES = {
    "x23": X23,
    "d23": X23.astype(np.float64),
    "x45": np.linspace(0.1, 0.9, 20, dtype=np.float32).reshape(4, 5),
    "x0": np.array(0.5, dtype=np.float32),
    "x5": np.linspace(0.1, 0.9, 4, dtype=np.float32).reshape(1, 2, 1, 2, 1),
    "i23": np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64),
    "b23": np.array([[True, False, True], [False, True, True]]),
    "i2": np.array([0, 1], dtype=np.int64),
}


@dataclass(frozen=True)
class T:
    """A tensor argument, materialized for each library from VALUES[key]."""
    key: str


# Parameters filled, by name, with a plain valid value when a case does not spoil them
FILL = {
    "other": T("x23"), "tensor": T("x23"), "tensor1": T("x23"), "tensor2": T("x23"), "target": T("x23"),
    "y": T("x23"), "x1": T("x23"), "x2": T("x23"), "end": T("x23"), "exponent": T("x23"), "weight": T("x23"),
    "input2": T("x23"), "mask": T("b23"), "condition": T("b23"), "index": T("i2"), "indices": T("i2"),
    "dim": 0, "dim0": 0, "dim1": 1, "dims": (0,), "size": (2, 3), "shape": (2, 3), "sizes": (2, 3),
    "normalized_shape": (3,), "repeats": 2, "chunks": 2, "split_size": 1, "split_size_or_sections": 1,
    "sections": 2, "k": 1, "n": 2, "p": 2.0, "value": 1.0, "fill_value": 1.0, "scalar": 2.0, "alpha": 1.0,
    "min": 0.0, "max": 1.0, "lambd": 0.5, "threshold": 0.5, "start": 0, "length": 1, "step": 1, "q": 0.5,
    "num_classes": 3, "pad": (1, 1), "kernel_size": 2, "shifts": 1, "decimals": 0, "diagonal": 0,
    "offset": 0, "beta": 1.0, "eps": 1e-5, "negative_slope": 0.01, "upscale_factor": 2,
    "downscale_factor": 2, "groups": 1, "num_groups": 1, "ord": 2, "tensors": (T("x23"), T("x23")),
    "equation": "ij->ji", "operands": (T("x23"),), "src": T("x23"), "source": T("x23"),
}
TENSOR_FIRST = {"input", "self", "A", "x", "tensor", "a", "LU", "B", "x1", "elements", "t", "y", "tensors",
                "boundaries", "sorted_sequence"}


@dataclass
class Case:
    name: str  # the case's label: "0-d", "int", "dim=5", ...
    args: tuple
    kwargs: dict
    self_key: str | None = None  # for a Tensor method: the tensor it is called on


# --- PyTorch's signatures ------------------------------------------------------------------------

def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def parameters(namespace: str, name: str) -> list[tuple[str, str, object]] | None:
    """(name, kind, default) of the name's parameters; kind is POS, KW, *args or **kwargs. None when unreadable.

    They are read from minitensor's signature, which is PyTorch's: scripts/api_signatures.py and
    scripts/api_signatures_nn.py check that name by name (their tests fail on any difference they do not
    list), and reading it costs nothing where PyTorch's builtins would need their stubs parsed."""
    import minitensor
    if namespace == "torch.Tensor":
        obj = inspect.getattr_static(minitensor.Tensor, name)
        if isinstance(obj, (staticmethod, classmethod, property)):
            return None
    else:
        obj = getattr(importlib.import_module(MINITENSOR[namespace]), name)
    try:
        sig = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if (namespace == "torch.Tensor" or inspect.isclass(obj)) and params \
            and params[0].kind <= params[0].POSITIONAL_OR_KEYWORD:
        params = params[1:]  # self
    return [(p.name, _kind(p), p.default) for p in params]


def _kind(p: inspect.Parameter) -> str:
    return {p.POSITIONAL_ONLY: "positional", p.POSITIONAL_OR_KEYWORD: "positional", p.KEYWORD_ONLY: "keyword-only",
            p.VAR_POSITIONAL: "*args", p.VAR_KEYWORD: "**kwargs"}[p.kind]


# --- the cases -----------------------------------------------------------------------------------

def cases(namespace: str, name: str, params: list[tuple[str, str, object]]) -> list[Case]:
    """The bad calls of one name, derived from its parameters (see the module's docstring)."""
    method = namespace == "torch.Tensor"
    positional = [p for p in params if p[1] == "positional"]
    required = [p for p in positional if p[2] is inspect.Parameter.empty]
    names = {p[0] for p in params}
    if method:
        first, rest = "self", required
    elif required and required[0][0] in TENSOR_FIRST:
        first, rest = required[0][0], required[1:]
    else:
        first, rest = None, required
    if any(p[0] not in FILL for p in rest):
        return []  # an argument with no plain valid value: no call is sure to spoil only what the case means
    fill = [FILL[p[0]] for p in rest]
    out: list[Case] = []

    def call(label: str, primary, args=None, **kwargs):
        args = list(fill if args is None else args)
        if method:
            out.append(Case(label, tuple(args), kwargs, self_key=primary.key if isinstance(primary, T) else None))
        elif first is None:
            out.append(Case(label, tuple(args), kwargs))
        else:
            out.append(Case(label, (primary, *args), kwargs))

    if first is not None:
        call("0-d", T("x0"))
        call("5-d", T("x5"))
        call("int", T("i23"))
        call("bool", T("b23"))
        if not method:
            call("str-input", "a")
        tensor_args = [i for i, p in enumerate(rest) if isinstance(FILL[p[0]], T) and FILL[p[0]].key == "x23"]
        if tensor_args:
            spoiled = list(fill)
            spoiled[tensor_args[0]] = T("x45")
            call("no-broadcast", T("x23"), spoiled)
            spoiled = list(fill)
            spoiled[tensor_args[0]] = T("d23")
            call("mixed-float", T("x23"), spoiled)
    if "dim" in names and first is not None:
        dim_pos = next((i for i, p in enumerate(rest) if p[0] == "dim"), None)
        for label, value in (("dim=5", 5), ("dim=-4", -4)):
            if dim_pos is None:
                call(label, T("x23"), **{"dim": value})
            else:
                spoiled = list(fill)
                spoiled[dim_pos] = value
                call(label, T("x23"), spoiled)
    number = next((p for p in params if p[0] != "dim" and p[1] in ("positional", "keyword-only")
                   and isinstance(p[2], (int, float)) and not isinstance(p[2], bool)), None)
    if number is not None:
        call(f"str-{number[0]}", T("x23"), **{number[0]: "a"})
    if "**kwargs" not in {p[1] for p in params}:
        call("bad-keyword", T("x23"), **{"not_a_parameter": 1})
    return out


def module_cases(name: str, params: list[tuple[str, str, object]]) -> list[Case]:
    """A layer's constructor with a spoiled argument; its forward (args marked "forward") on bad tensors."""
    out = [Case("init-bad-keyword", (), {"not_a_parameter": 1})]
    positional = [p for p in params if p[1] == "positional" and p[2] is inspect.Parameter.empty]
    if positional:
        out.append(Case("init-str", ("a",) + tuple(2 for _ in positional[1:]), {}))
    for label, key in (("forward-0-d", "x0"), ("forward-5-d", "x5"), ("forward-int", "i23")):
        out.append(Case(label, ("forward", T(key)), {}))
    return out


# --- calling -------------------------------------------------------------------------------------

def _materialize(lib, value):
    if isinstance(value, T):
        return lib.tensor(VALUES[value.key].copy())
    if isinstance(value, tuple):
        return tuple(_materialize(lib, v) for v in value)
    return value


def _tensors(value, lib) -> list:
    if isinstance(value, lib.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v, lib)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v, lib)]
    return []


def _snapshot(t) -> tuple:
    grad = t.grad
    return (np.array(t.detach().numpy(), copy=True), tuple(t.shape), t._version,
            None if grad is None else np.array(grad.detach().numpy(), copy=True))


def _same_snapshot(a: tuple, b: tuple) -> bool:
    def eq(u, v):
        if u is None or v is None:
            return u is v
        return u.shape == v.shape and u.dtype == v.dtype and np.array_equal(u, v, equal_nan=u.dtype.kind in "fc")
    return eq(a[0], b[0]) and a[1] == b[1] and a[2] == b[2] and eq(a[3], b[3])


def build_layer(lib_nn, name: str):
    api_nn = sys.modules["api_signatures_nn"]
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        return api_nn._build(lib_nn, name)


def _callable(lib, namespace: str, name: str, case: Case):
    """(what the case calls, the tensors it owns besides the arguments: a method's tensor, a layer's state)."""
    if namespace == "torch.nn":
        nn = importlib.import_module("torch.nn" if lib.__name__ == "torch" else "minitensor.nn")
        if case.args and case.args[0] == "forward":
            layer = build_layer(nn, name)
            state = list(layer.parameters()) + list(layer.buffers())
            return layer, [t for t in state if not hasattr(t, "cls_to_become")]  # (a lazy placeholder has no data)
        return getattr(nn, name), []
    if namespace == "torch.Tensor":
        target = lib.tensor(VALUES[case.self_key].copy())
        return getattr(target, name), [target]
    mod = lib if namespace == "torch" else importlib.import_module(
        namespace if lib.__name__ == "torch" else MINITENSOR[namespace])
    return getattr(mod, name), []


def run_case(lib, namespace: str, name: str, case: Case, snapshot: bool = False, called: list | None = None):
    """(result or None, exception or None, the inputs' snapshots before the call, the inputs) on one library;
    the snapshots only when asked (minitensor's side). `called`, when given, receives what was called (a
    layer, for its state)."""
    try:
        fn, owned = _callable(lib, namespace, name, case)
    except Exception as e:  # noqa: BLE001 - building the layer failed: reported as the call's error
        return None, e, [], []
    if called is not None:
        called.append(fn)
    given = case.args[1:] if case.args and case.args[0] == "forward" else case.args
    args = tuple(_materialize(lib, a) for a in given)
    kwargs = {k: _materialize(lib, v) for k, v in case.kwargs.items()}
    owned = owned + _tensors(args, lib) + _tensors(kwargs, lib)
    before = [_snapshot(t) for t in owned] if snapshot else []
    try:
        return fn(*args, **kwargs), None, before, owned
    except Exception as e:  # noqa: BLE001 - the point: which error each library raises
        return None, e, before, owned


def rerun_with_torch_state(name: str, case: Case, torch_layer, mt):
    """minitensor's layer called again, holding PyTorch's layer's parameters and buffers: each library draws
    its own random initial weights, so a layer's results are comparable only on the same ones (a lazy layer's
    exist only after its first call, hence after it, not before)."""
    layer = build_layer(importlib.import_module("minitensor.nn"), name)
    args = tuple(_materialize(mt, a) for a in case.args[1:])
    layer(*args)  # (materialises a lazy layer's placeholders; PyTorch's state then replaces them)
    layer.load_state_dict({k: mt.tensor(v.detach().numpy().copy()) for k, v in torch_layer.state_dict().items()})
    return layer(*(_materialize(mt, a) for a in case.args[1:]))


def _flat(value, lib) -> list:
    if isinstance(value, lib.Tensor):
        return [value]
    if isinstance(value, (tuple, list)) and not isinstance(value, str):
        return [v for item in value for v in _flat(item, lib)]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return [value]
    if isinstance(value, (lib.dtype, np.dtype)) or type(value).__name__.endswith("DType"):
        return ["dtype " + str(value).split(".")[-1]]  # torch.float32 and numpy's float32 are one dtype
    return [type(value).__name__]  # modules, generators, ...: compared by nothing but being there


def same_results(a, b, torch, mt, random: bool) -> str | None:
    """None when PyTorch's result `a` and minitensor's `b` agree, else what differs."""
    fa, fb = _flat(a, torch), _flat(b, mt)
    if len(fa) != len(fb):
        return f"{len(fb)} outputs (PyTorch: {len(fa)})"
    for u, v in zip(fa, fb):
        if isinstance(u, torch.Tensor):
            if not isinstance(v, mt.Tensor):
                return f"a {type(v).__name__} (PyTorch: a tensor)"
            if tuple(u.shape) != tuple(v.shape):
                return f"shape {tuple(v.shape)} (PyTorch: {tuple(u.shape)})"
            du, dv = str(u.dtype).split(".")[-1], str(v.dtype).split(".")[-1]
            if du != dv:
                return f"dtype {dv} (PyTorch: {du})"
            if random or u.is_complex() or u.layout != torch.strided:
                continue
            floating = u.is_floating_point()
            x = (u.detach().double() if floating else u.detach()).numpy()
            y = (v.detach().double() if floating else v.detach()).numpy()
            if x.dtype.kind in "fc":
                if not np.allclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True):
                    return f"values {y.ravel()[:4]} (PyTorch: {x.ravel()[:4]})"
            elif not np.array_equal(x, y):
                return f"values {y.ravel()[:4]} (PyTorch: {x.ravel()[:4]})"
        elif isinstance(u, float) and isinstance(v, float) and not random:
            if not np.isclose(u, v, rtol=1e-4, equal_nan=True):
                return f"{v} (PyTorch: {u})"
        elif isinstance(u, (bool, int, str)) and not random and u != v:
            return f"{v!r} (PyTorch: {u!r})"
    return None


def _same_class(te: BaseException, me: BaseException) -> bool:
    """minitensor's error is PyTorch's class or a subclass; a class of PyTorch's own (`LinAlgError`) is
    matched by name, else by its nearest built-in base."""
    tcls = type(te)
    if tcls.__module__ == "builtins":
        return isinstance(me, tcls)
    if any(k.__name__.strip("_") == tcls.__name__.strip("_") for k in type(me).__mro__):
        return True
    base = next(k for k in tcls.__mro__ if k.__module__ == "builtins")
    return isinstance(me, base)


@dataclass
class Row:
    namespace: str
    name: str
    case: str
    kind: str  # same-error, same-result, or one of DIFFERENCES
    detail: str = ""
    documented: str = ""  # "kept", "open" or ""

    @property
    def label(self) -> str:
        return f"{self.namespace}.{self.name}"


def _err(e: BaseException) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {text[:110]}"


def classify(namespace: str, name: str, case: Case, torch, mt) -> Row:
    layers: list = []
    a, te, _, _ = run_case(torch, namespace, name, case, called=layers)
    b, me, before, owned = run_case(mt, namespace, name, case, snapshot=True)
    row = Row(namespace, name, case.name, "")
    if me is not None and before and not all(_same_snapshot(x, _snapshot(t)) for x, t in zip(before, owned)):
        row.kind, row.detail = "mutated", f"minitensor raised {_err(me)} after changing an input"
    elif te is not None and me is not None:
        if _same_class(te, me):
            row.kind = "same-error"
        else:
            row.kind, row.detail = "error-class", f"minitensor {_err(me)}   PyTorch {_err(te)}"
    elif te is not None:
        row.kind, row.detail = "only-torch-raises", f"PyTorch {_err(te)}"
    elif me is not None:
        row.kind, row.detail = "only-minitensor-raises", f"minitensor {_err(me)}"
    else:
        diff = same_results(a, b, torch, mt, bool(RANDOM.search(name)))
        if diff is not None and namespace == "torch.nn" and case.args and case.args[0] == "forward":
            diff = same_results(a, rerun_with_torch_state(name, case, layers[0], mt), torch, mt,
                                bool(RANDOM.search(name)))
        row.kind, row.detail = ("same-result", "") if diff is None else ("result", diff)
    return row


# --- the names -----------------------------------------------------------------------------------

def names_in_scope(namespaces: list[str]) -> dict[str, list[str]]:
    """namespace -> the in-scope names both libraries have, callable and not skipped."""
    import torch

    import minitensor
    cov = _load("api_coverage")
    table = cov.out_of_scope()
    out = {}
    for namespace in namespaces:
        mmod = minitensor.Tensor if namespace == "torch.Tensor" else importlib.import_module(MINITENSOR[namespace])
        tobj = torch.Tensor if namespace == "torch.Tensor" else importlib.import_module(namespace)
        keep = []
        for name in cov.public_names(namespace):
            if name in table.get(namespace, {}) or SKIP.match(name) or not hasattr(mmod, name):
                continue
            tval = inspect.getattr_static(tobj, name, None)
            if isinstance(tval, property) or not callable(getattr(tobj, name, None)):
                continue
            if namespace == "torch.nn" and not (inspect.isclass(getattr(tobj, name))
                                                and issubclass(getattr(tobj, name), torch.nn.Module)):
                continue
            if namespace == "torch" and inspect.isclass(getattr(tobj, name)):
                continue  # dtypes' and devices' classes, storages, Generator: not functions of data
            if namespace == "torch" and getattr(mmod, name) is getattr(minitensor.Tensor, name, None):
                continue  # `torch.abs_` is the method `Tensor.abs_` in both libraries: swept there
            keep.append(name)
        out[namespace] = keep
    return out


def documented(text: str | None = None) -> dict[tuple[str, str], str]:
    """(name pattern, case pattern) -> "kept" or "open", from the doc's two "Errors" tables."""
    text = DOC.read_text() if text is None else text
    out: dict[tuple[str, str], str] = {}
    for heading, status in ((KEPT_HEADING, "kept"), (OPEN_HEADING, "open")):
        if f"\n{heading}\n" not in text:
            continue
        body = re.split(r"\n#{1,3} ", text.split(f"\n{heading}\n", 1)[1], maxsplit=1)[0]
        for line in [ln for ln in body.splitlines() if ln.startswith("|")][2:]:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 3 or not cells[2]:
                raise ValueError(f"an Errors row needs 3 cells (names | cases | reason): {line[:80]!r}")
            for n in cells[0].split(","):
                for c in cells[1].split(","):
                    out[(n.strip().strip("`"), c.strip().strip("`"))] = status
    return out


def _documented_as(doc: dict[tuple[str, str], str], row: Row) -> str:
    exact = doc.get((row.label, row.case))  # most rows name the function and the case outright
    if exact is not None:
        return exact
    return next((status for (n, c), status in doc.items() if ("*" in n or "*" in c or "?" in n)
                 and fnmatch.fnmatchcase(row.label, n) and fnmatch.fnmatchcase(row.case, c)), "")


def sweep(namespaces: list[str] = NAMESPACES) -> list[Row]:
    """Every case of every name, classified; differences the doc lists carry their status."""
    import torch

    import minitensor as mt
    _load("api_signatures_nn")  # (its layers' constructor arguments, BUILD)
    names = names_in_scope(namespaces)
    doc = documented()
    rows = []
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        for namespace in namespaces:
            rows += _sweep_namespace(namespace, names[namespace], doc, torch, mt)
    return rows


def _sweep_namespace(namespace: str, names: list[str], doc, torch, mt) -> list[Row]:
    rows = []
    for name in names:
        params = parameters(namespace, name)
        if params is None:
            continue
        table = module_cases(name, params) if namespace == "torch.nn" else cases(namespace, name, params)
        for case in table:
            row = classify(namespace, name, case, torch, mt)
            if row.kind in DIFFERENCES:
                row.documented = _documented_as(doc, row)
            rows.append(row)
    return rows


def _summary(row: Row) -> str:
    """A difference in a few words: the two exception classes, or what the results differ by."""
    m = re.match(r"minitensor (\w+): .*   PyTorch (\w+):", row.detail)
    if m:
        return f"minitensor raises {m.group(1)}, PyTorch {m.group(2)}"
    m = re.match(r"(minitensor|PyTorch) (\w+):", row.detail)
    if m:
        return f"only {m.group(1)} raises ({m.group(2)})"
    if row.kind == "mutated":
        return "minitensor changes an input before it raises"
    what = row.detail.split(" ")[0]
    return f"results differ ({what if what in ('values', 'dtype', 'shape', 'a') else 'values'})"


# A difference kept on purpose wherever it is found: PyTorch's Python-level functions (most of F) read an
# attribute of whatever they are given, so a string meets an AttributeError; minitensor names the op
KEPT_RULE = ("minitensor raises TypeError, PyTorch AttributeError",
             "PyTorch's Python code reads an attribute of whatever it is given (an AttributeError about `str`); "
             "minitensor checks the argument and raises a TypeError naming the op and the type it got")


def doc_rows(rows: list[Row], kept: bool = False) -> list[str]:
    """The undocumented differences as rows of the doc's "not yet fixed" table (`names | cases | reason`):
    one row per name and reason, names with the same cases and reason merged. With `kept`, the rows of the
    "kept" table that KEPT_RULE gives instead."""
    by_name: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        if r.kind in DIFFERENCES and not r.documented and (_summary(r) == KEPT_RULE[0]) == kept:
            by_name.setdefault((r.label, _summary(r)), []).append(r.case)
    merged: dict[tuple[tuple[str, ...], str], list[str]] = {}
    for (label, reason), case_list in by_name.items():
        merged.setdefault((tuple(case_list), reason), []).append(label)
    return [f"| {', '.join(f'`{n}`' for n in names)} | {', '.join(f'`{c}`' for c in case_list)} | "
            f"{KEPT_RULE[1] if kept else reason} |"
            for (case_list, reason), names in sorted(merged.items(), key=lambda kv: kv[1][0])]


def counts(rows: list[Row], namespaces: list[str]) -> list[dict]:
    out = []
    for namespace in namespaces + ["all"]:
        rs = [r for r in rows if namespace in ("all", r.namespace)]
        out.append({"namespace": namespace, "names": len({(r.namespace, r.name) for r in rs}),
                    "calls": len(rs), "same-error": sum(r.kind == "same-error" for r in rs),
                    "same-result": sum(r.kind == "same-result" for r in rs),
                    "kept": sum(r.documented == "kept" for r in rs),
                    "open": sum(r.documented == "open" for r in rs),
                    "differ": sum(r.kind in DIFFERENCES and not r.documented for r in rs)})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--namespace", choices=NAMESPACES, help="only this namespace")
    parser.add_argument("--fix-list", action="store_true", help="the undocumented differences, one a line")
    parser.add_argument("--all", action="store_true", help="also list the documented differences")
    parser.add_argument("--doc", action="store_true", help="the undocumented differences as rows of the doc's table")
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("api_errors: PyTorch is not installed; nothing to compare with", file=sys.stderr)
        return 0
    namespaces = [args.namespace] if args.namespace else NAMESPACES
    rows = sweep(namespaces)
    bad = [r for r in rows if r.kind in DIFFERENCES and (args.all or not r.documented)]
    if args.doc:
        print("kept (KEPT_RULE):\n" + "\n".join(doc_rows(rows, kept=True)))
        print("\nnot yet fixed:\n" + "\n".join(doc_rows(rows)))
        return 0
    if args.fix_list:
        for r in bad:
            print(f"{r.label}\t{r.case}\t{r.kind}\t{r.detail}")
        return 1 if any(not r.documented for r in bad) else 0
    print(f"{'namespace':24} {'names':>6} {'calls':>6} {'same-err':>9} {'same-res':>9} {'kept':>5} {'open':>5} "
          f"{'differ':>7}")
    for c in counts(rows, namespaces):
        print(f"{c['namespace']:24} {c['names']:>6} {c['calls']:>6} {c['same-error']:>9} {c['same-result']:>9} "
              f"{c['kept']:>5} {c['open']:>5} {c['differ']:>7}")
    if bad:
        print("\ndifferences" + (" (documented ones marked)" if args.all else "") + ":")
        for r in bad:
            mark = f" [{r.documented}]" if r.documented else ""
            print(f"  {r.label} [{r.case}] {r.kind}{mark}: {r.detail}")
    return 1 if any(not r.documented for r in bad) else 0


if __name__ == "__main__":
    sys.exit(main())

"""minitensor/tensor.pyi, what type checkers and editors read for `Tensor`, against the runtime class.

The ops attach most of Tensor's methods at import time, which a checker cannot see, so the stub
declares them. It must never drift silently: every public name on one side is on the other, each
method's parameters have the same names, kinds and defaults, and where the op's function is
annotated the stub carries the same annotations (the stub's `self` is the function's `input`).
"""
import ast
import importlib
import inspect
import os
import types

import pytest

import minitensor
from minitensor import Tensor

tensor_module = importlib.import_module("minitensor.tensor")  # (the attribute minitensor.tensor is the factory)

STUB = os.path.join(os.path.dirname(tensor_module.__file__), "tensor.pyi")

# dunders of every class, not Tensor's API
_PLUMBING = {"__doc__", "__module__", "__slots__", "__weakref__", "__dict__", "__annotations__",
             # (__orig_bases__: a subclass of tuple[int, ...]; copyreg caches the slot names on the class once a tensor
             # is copied)
             "__slotnames__", "__orig_bases__"}
# how the stub spells some names (builtins shadowed by Tensor's methods int/float/bool, `Self` for
# "the tensor itself", and the op modules' local alias of minitensor.types.Index)
_SPELLINGS = {"_int": "int", "_float": "float", "_bool": "bool", "Self": "Tensor", "IndexKey": "Index"}


def _read_stub(text):
    """{class name or '': {member: [ast nodes]}} (module-level names under '')."""
    tree = ast.parse(text)
    out = {"": {}}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = out.setdefault(node.name, {})
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AnnAssign)):
                    name = item.name if isinstance(item, ast.FunctionDef) else item.target.id
                    members.setdefault(name, []).append(item)
            out[""][node.name] = [node]
        elif isinstance(node, ast.FunctionDef):
            out[""].setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                out[""].setdefault(t.id, []).append(node)
    return out


def _decorators(fn):
    return {ast.unparse(d) for d in fn.decorator_list}


def _normal(text):
    """An annotation in one spelling: parsed and unparsed, with the stub's aliases replaced."""
    tree = ast.parse(text, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _SPELLINGS:
            node.id = _SPELLINGS[node.id]
    return ast.unparse(tree)


def _stub_params(fn):
    """[(name, kind, default source or None, annotation or None)] of a stub def, in order."""
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        kind = "POSITIONAL_ONLY" if i < len(a.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        out.append((arg.arg, kind, default, arg.annotation))
    if a.vararg:
        out.append((a.vararg.arg, "VAR_POSITIONAL", None, a.vararg.annotation))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, "KEYWORD_ONLY", default, arg.annotation))
    if a.kwarg:
        out.append((a.kwarg.arg, "VAR_KEYWORD", None, a.kwarg.annotation))
    return out


def _runtime_function(value):
    """The function whose signature a runtime method has. The in-place methods and the 0-d wrapper
    of scatter take (*args, **kwargs) and hand them on: their signature is the function they call."""
    fn = value.fget if isinstance(value, property) else value.__func__ if isinstance(value, staticmethod) else value
    params = list(inspect.signature(fn).parameters.values())
    passes_on = [p.kind for p in params[1:]] == [inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD]
    if passes_on and isinstance(fn, types.FunctionType):
        inner = inspect.getclosurevars(fn).nonlocals
        for name in ("compute", "scatter_op"):
            if name in inner:
                return inner[name]
    return fn


def _compare_function(name, stub_defs, runtime):
    problems = []
    fn = _runtime_function(runtime)
    try:
        sig = inspect.signature(fn)
    except ValueError:  # a slot wrapper such as object.__hash__
        return problems
    is_static = isinstance(runtime, staticmethod)
    rt = list(sig.parameters.values())
    rt_rest = rt if is_static else rt[1:]  # the stub's `self` is the function's `input` (or `t`, `self`)
    overloads = [d for d in stub_defs if "overload" in _decorators(d)]
    setters = [d for d in stub_defs if any(x.endswith(".setter") for x in _decorators(d))]
    defs = [d for d in stub_defs if d not in overloads and d not in setters]
    if overloads:
        # each overload names only parameters the runtime has, of the same kind (or positional-only)
        names = {p.name: p for p in rt_rest}
        seen = set()
        for d in overloads:
            for pname, kind, _, _ in _stub_params(d)[0 if is_static else 1:]:
                if kind == "POSITIONAL_ONLY":
                    continue
                seen.add(pname)
                if pname not in names or names[pname].kind.name != kind:
                    problems.append(f"{name}: an overload's parameter {pname} ({kind}) is not the runtime's")
        missing = {p.name for p in rt_rest if p.kind.name not in ("VAR_POSITIONAL", "VAR_KEYWORD")} - seen
        if missing - {"dim", "other", "as_tuple"}:  # (max/min's `dim` may be the other tensor, positionally)
            problems.append(f"{name}: runtime parameters {sorted(missing)} are in no overload")
        return problems
    if len(defs) != 1:
        return [f"{name}: {len(defs)} definitions in the stub and no @overload"]
    stub = _stub_params(defs[0])[0 if is_static else 1:]
    if [(n, k) for n, k, _, _ in stub] != [(p.name, p.kind.name) for p in rt_rest]:
        return [f"{name}: stub parameters {[(n, k) for n, k, _, _ in stub]} != runtime "
                f"{[(p.name, p.kind.name) for p in rt_rest]}"]
    annotated = any(p.annotation is not p.empty for p in rt) or sig.return_annotation is not sig.empty
    for (pname, _, default, ann), p in zip(stub, rt_rest):
        if (default is None) != (p.default is p.empty):
            problems.append(f"{name}: parameter {pname} has a default on one side only")
        elif default is not None and ast.literal_eval(default) != p.default:
            problems.append(f"{name}: default of {pname} is {ast.unparse(default)} in the "
                            f"stub, {p.default!r} at runtime")
        if annotated and ann is not None and _normal(ast.unparse(ann)) != _normal(str(p.annotation)):
            problems.append(f"{name}: {pname} is `{ast.unparse(ann)}` in the stub, `{p.annotation}` in the op")
    if annotated and defs[0].returns is not None and sig.return_annotation is not sig.empty:
        if _normal(ast.unparse(defs[0].returns)) != _normal(str(sig.return_annotation)):
            problems.append(f"{name}: returns `{ast.unparse(defs[0].returns)}` in the stub, "
                            f"`{sig.return_annotation}` in the op")
    return problems


def stub_problems(stub_text, cls=Tensor):
    """Every difference between the stub's `Tensor` and the runtime class, as sentences."""
    stub = _read_stub(stub_text)[cls.__name__]
    runtime = {k: v for k, v in vars(cls).items() if k not in _PLUMBING}
    problems = []
    for name in sorted(set(runtime) - set(stub)):
        if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
            problems.append(f"{name}: on the runtime class, missing from the stub")
    for name in sorted(set(stub) - set(runtime)):
        problems.append(f"{name}: in the stub, not on the runtime class")
    for name in sorted(set(stub) & set(runtime)):
        value, defs = runtime[name], stub[name]
        functions = [d for d in defs if isinstance(d, ast.FunctionDef)]
        if isinstance(value, property):
            if not functions or "property" not in _decorators(functions[0]):
                problems.append(f"{name}: a property at runtime, not in the stub")
            elif (value.fset is not None) != any(x.endswith(".setter") for d in functions for x in _decorators(d)):
                problems.append(f"{name}: settable on one side only")
            else:
                problems += _compare_function(name, functions[:1], value)
        elif callable(value) and not isinstance(value, type):
            if not functions or "property" in _decorators(functions[0]):
                problems.append(f"{name}: a method at runtime, not in the stub")
            elif isinstance(value, staticmethod) != ("staticmethod" in _decorators(functions[0])):
                problems.append(f"{name}: a staticmethod on one side only")
            else:
                problems += _compare_function(name, functions, value)
        elif functions:  # a slot (grad, grad_fn) or a class constant is an annotated attribute in the stub
            problems.append(f"{name}: an attribute at runtime, a method in the stub")
    return problems


def _stub_text():
    with open(STUB, encoding="utf-8") as f:
        return f.read()


def test_the_stub_declares_the_runtime_tensor_exactly():
    assert stub_problems(_stub_text()) == []


def test_every_name_the_stub_module_declares_exists_at_runtime_and_every_public_one_is_declared():
    declared = set(_read_stub(_stub_text())[""]) - {"_int", "_float", "_bool", "_F"}
    runtime = {k for k, v in vars(tensor_module).items() if not isinstance(v, types.ModuleType)}
    assert declared - runtime == set()
    public = {k for k in runtime if not k.startswith("_") and getattr(vars(tensor_module)[k], "__module__", None)
              == tensor_module.__name__}
    assert public - declared == set()


@pytest.mark.parametrize("cls", [minitensor.Size, minitensor.device])
def test_the_stub_declares_size_and_device_exactly(cls):
    # (device's `type` is an attribute of each instance: the stub may declare it, the class has no slot)
    assert [p for p in stub_problems(_stub_text(), cls) if not p.startswith("type: in the stub")] == []
    assert minitensor.device("cpu").type == "cpu"


@pytest.mark.parametrize("edit, expected", [
    # a renamed parameter, a changed default, a method the runtime lacks, one it has that the stub
    # lost, a different annotation: each is reported
    (("def transpose(self, dim0: _int, dim1: _int)", "def transpose(self, d0: _int, d1: _int)"),
     "transpose: stub parameters"),
    (("def tril(self, diagonal: _int = 0)", "def tril(self, diagonal: _int = 1)"), "default of diagonal"),
    (("def t(self) -> Tensor: ...", "def t(self) -> Tensor: ...\n    def frobnicate(self) -> Tensor: ..."),
     "frobnicate: in the stub"),
    (("    def square(self) -> Tensor: ...\n", ""), "square: on the runtime class"),
    (("def cumsum(self, dim: _int,", "def cumsum(self, dim: str,"), "cumsum: dim is `str` in the stub"),
    (("def softmax(self, dim: _int | None = None", "def softmax(self, dim: _int | None = -1"), "default of dim"),
    (("def add_(self, other: TensorOrNumber, *, alpha: Number = 1)",
      "def add_(self, other: TensorOrNumber, *, beta: Number = 1)"),
     "add_: stub parameters"),
    (("stable: _bool = False) -> sort_result", "stable: _bool = False) -> Tensor"),
     "sort: returns `Tensor` in the stub"),
    (("def max(self, dim: _int, keepdim", "def max(self, dimension: _int, keepdim"),
     "max: an overload's parameter dimension"),
    (("    @property\n    def is_leaf", "    def is_leaf"), "is_leaf: a property at runtime"),
])
def test_a_drifted_stub_is_reported(edit, expected):
    old, new = edit
    text = _stub_text()
    assert old in text
    problems = stub_problems(text.replace(old, new, 1))
    assert any(expected in p for p in problems), problems

"""Write what is generated from the op table (minitensor/ops/table.py): the type stub
`minitensor/tensor.pyi` and, in `minitensor/__init__.py`, the op imports and `__all__`.

    python scripts/gen_api.py          # write them
    python scripts/gen_api.py --check  # exit 1, naming the file, if either is not what it would write

Why a stub at all: the table attaches most of Tensor's methods at import time, which a type
checker cannot see, so `tensor.pyi` declares them. It is written from the code: the declarations
of `tensor.py` itself (its annotated definitions), then one declaration per method of the table,
copied from the source of the op's function (its annotations and `@overload`s; its first
parameter becomes `self`, an in-place method returns `Self`).
"""
from __future__ import annotations

import argparse
import ast
import copy
import functools
import importlib
import inspect
import os
import re
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

STUB = os.path.join(ROOT, "minitensor", "tensor.pyi")
INIT = os.path.join(ROOT, "minitensor", "__init__.py")
WIDTH = 120

# ---- formatting a definition --------------------------------------------------------------------


def _default(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return '"' + node.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return ast.unparse(node)


def _param(arg: ast.arg, default: ast.expr | None, rename: dict[str, str]) -> str:
    text = arg.arg
    if arg.annotation is not None:
        text += ": " + _annotation(arg.annotation, rename)
        if default is not None:
            text += " = " + _default(default)
    elif default is not None:
        text += "=" + _default(default)
    return text


USED: set[str] = set()  # every name the annotations written so far use (for the stub's imports)


def _annotation(node: ast.expr, rename: dict[str, str]) -> str:
    text = ast.unparse(node)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value  # a quoted annotation: written unquoted
    USED.update(re.findall(r"(?<![\w.])[A-Za-z_]\w*", text))
    for old, new in rename.items():
        text = re.sub(rf"(?<![\w.]){old}(?![\w])", new, text)
    return text


def params(args: ast.arguments, rename: dict[str, str], first: str | None = None) -> list[str]:
    """The parameters of `args` as source text (the first renamed to `first` when given)."""
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out = [_param(a, d, rename) for a, d in zip(positional, defaults)]
    if first is not None and out:
        out[0] = first  # (self: no annotation, as a method's)
    if args.posonlyargs:
        out.insert(len(args.posonlyargs), "/")
    if args.vararg is not None:
        out.append("*" + _param(args.vararg, None, rename))
    elif args.kwonlyargs:
        out.append("*")
    out += [_param(a, d, rename) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg is not None:
        out.append("**" + _param(args.kwarg, None, rename))
    return out


def format_def(indent: str, name: str, parts: list[str], returns: str | None, tail: str = "") -> list[str]:
    """`def name(parts) -> returns:` + tail, wrapped at WIDTH under the opening parenthesis."""
    ret = f" -> {returns}" if returns is not None else ""
    one = f"{indent}def {name}({', '.join(parts)}){ret}:{tail}"
    if len(one) <= WIDTH or not parts:
        return [one]
    lead = f"{indent}def {name}("
    lines, line = [], lead
    for i, part in enumerate(parts):
        piece = part + (", " if i < len(parts) - 1 else f"){ret}:{tail}")
        if len(line) + len(piece.rstrip()) > WIDTH and line.strip() and line != lead:
            lines.append(line.rstrip())
            line = " " * len(lead)
        line += piece
    lines.append(line)
    return lines


def declaration(fn: ast.FunctionDef, indent: str, rename: dict[str, str], name: str | None = None,
                first: str | None = None, returns: str | None = None, decorators: bool = True) -> list[str]:
    """The stub lines of a function definition: its kept decorators, then `def ...: ...`."""
    out = []
    if decorators:
        for d in fn.decorator_list:
            text = ast.unparse(d)
            if text in ("overload", "staticmethod", "classmethod", "property") or text.endswith(".setter"):
                out.append(indent + "@" + text)
    if returns is None and fn.returns is not None:
        returns = _annotation(fn.returns, rename)
    return out + format_def(indent, name or fn.name, params(fn.args, rename, first), returns, " ...")


# ---- the stub -----------------------------------------------------------------------------------

# inside `class Tensor` the methods int, float and bool hide the builtins: the stub names them so
IN_CLASS = {"int": "_int", "float": "_float", "bool": "_bool"}

HEADER = '''\
# What a type checker and an editor know about `minitensor/tensor.py`. GENERATED by
# scripts/gen_api.py from tensor.py and the op table (minitensor/ops/table.py): do not edit; run
# `python scripts/gen_api.py` after changing either. Runtime code never reads this file.
import builtins
from typing import Any, Callable, ClassVar, Iterator, Literal, Sequence, TypeVar, overload

from numpy.typing import NDArray
from typing_extensions import Self

from .autograd.function import Function
{imports}
# `Tensor` has methods called int, float and bool: inside the class those names are the methods
_int = builtins.int
_float = builtins.float
_bool = builtins.bool
'''


def _own_section(tree: ast.Module) -> tuple[list[str], list[str]]:
    """tensor.py's declarations: (module-level lines, Tensor's own lines)."""
    module_lines: list[str] = []
    tensor_lines: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            module_lines += declaration(node, "", {})
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):  # an annotated module variable
            module_lines.append(f"{node.target.id}: {_annotation(node.annotation, {})}")
        elif isinstance(node, ast.ClassDef):
            is_tensor = node.name == "Tensor"
            rename = IN_CLASS if is_tensor else {}
            body: list[str] = []
            defs = {item.name: item for item in node.body if isinstance(item, ast.FunctionDef)}
            overloaded = {item.name for item in node.body if isinstance(item, ast.FunctionDef)
                          and any(ast.unparse(d) == "overload" for d in item.decorator_list)}
            for item in node.body:
                if (isinstance(item, ast.FunctionDef) and item.name in overloaded
                        and not any(ast.unparse(d) == "overload" for d in item.decorator_list)):
                    continue  # a stub declares the overloads only, no implementation
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    body.append(f"    {item.target.id}: {_annotation(item.annotation, rename)}")
                elif isinstance(item, ast.FunctionDef):
                    body += declaration(item, "    ", rename)
                elif (isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name)
                      and isinstance(item.value, ast.Name) and item.value.id in defs):
                    body += declaration(defs[item.value.id], "    ", rename, name=item.targets[0].id)  # an alias
                elif (isinstance(item, ast.Assign) and isinstance(item.targets[0], ast.Name)
                      and item.targets[0].id == "__hash__"):
                    body.append(f"    def __hash__(self) -> {rename.get('int', 'int')}: ...")
            bases = ", ".join(ast.unparse(b) for b in node.bases)
            head = [f"class {node.name}({bases}):" if bases else f"class {node.name}:"]
            if is_tensor:
                tensor_lines = head + body
            else:
                module_lines += [""] + head + (body or ["    ..."]) + [""]
    return module_lines, tensor_lines


@functools.lru_cache(maxsize=None)
def _parsed(path: str) -> tuple[ast.Module, dict]:
    """The syntax tree of one source file, and its function definitions by (name, line) with their
    parent node: parsed and walked once per file, since hundreds of op functions share a few files."""
    tree = ast.parse(open(path).read())
    defs: dict = {}
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            if isinstance(child, ast.FunctionDef):
                first = child.decorator_list[0].lineno if child.decorator_list else child.lineno
                defs[(child.name, first)] = defs[(child.name, child.lineno)] = (child, parent)
    return tree, defs


def _source_def(fn) -> tuple[list[ast.FunctionDef], ast.Module, str]:
    """The definition(s) of function `fn` in its source: its `@overload`s if it has any, else itself."""
    fn = inspect.unwrap(fn)
    code = fn.__code__
    path = code.co_filename
    tree, defs = _parsed(path)
    if (code.co_name, code.co_firstlineno) not in defs:
        raise SystemExit(f"gen_api: no definition of {fn.__qualname__} found in {path}")
    found, parent = defs[(code.co_name, code.co_firstlineno)]
    siblings = [n for n in ast.iter_child_nodes(parent) if isinstance(n, ast.FunctionDef) and n.name == found.name]
    overloads = [n for n in siblings if any(ast.unparse(d) == "overload" for d in n.decorator_list)]
    return overloads or [found], tree, path


AUGMENTED = {"__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__"}


def _method_lines(name: str, fn, inplace: bool = False) -> list[str]:
    # PyTorch's convention: a trailing underscore means "in place", and an in-place method returns the tensor
    inplace = inplace or (name.endswith("_") and not name.startswith("__")) or name in AUGMENTED
    if isinstance(fn, property):
        (node,), _, _ = _source_def(fn.fget)
        return ["    @property"] + declaration(node, "    ", IN_CLASS, name=name, first="self", decorators=False)
    nodes, tree, _ = _source_def(fn)
    rename = dict(IN_CLASS)
    for node in tree.body:  # a name the op's module imports under another name: the stub uses the original
        if isinstance(node, ast.ImportFrom):
            rename.update({alias.asname: alias.name for alias in node.names if alias.asname})
    lines = []
    for node in nodes:
        lines += declaration(node, "    ", rename, name=name, first="self", returns="Self" if inplace else None)
    if name in ("__eq__", "__ne__"):  # Tensor's == returns a tensor, not a bool: an override checkers flag
        lines[-1] += "  # type: ignore[override]"
    return lines


def _imports(defined: set[str]) -> str:
    """The imports the annotations need, from where minitensor defines each name."""
    header_names = {"Any", "Callable", "ClassVar", "Iterator", "Literal", "Sequence", "TypeVar", "overload",
                    "NDArray", "Self", "Function", "builtins", "_int", "_float", "_bool", "None", "int", "float",
                    "bool", "str", "object", "tuple", "list", "dict", "type", "slice", "bytes"}
    return _imports_of(USED - header_names - defined)


def _imports_of(used: set[str]) -> str:
    import pkgutil

    import minitensor.ops
    ops = sorted(f"minitensor.ops.{m.name}" for m in pkgutil.iter_modules(minitensor.ops.__path__))
    sources = ["minitensor.types", "minitensor.random", *ops]  # (where each op's result classes live)
    wanted: dict[str, list[str]] = {}
    for name in sorted(used):
        for source in sources:
            module = importlib.import_module(source)
            if name in vars(module) and (getattr(vars(module)[name], "__module__", source) == source
                                          or source == "minitensor.types"):
                wanted.setdefault(source, []).append(name)
                break
    out = []
    for source, names in wanted.items():
        out.append(f"from .{source.split('.', 1)[1]} import {', '.join(names)}")
    return "\n".join(out) + "\n"


def stub_text() -> str:
    from minitensor.ops import table

    tree = ast.parse(open(os.path.join(ROOT, "minitensor", "tensor.py")).read())
    module_lines, tensor_lines = _own_section(tree)
    body = list(tensor_lines)
    body += ["", "    # ---- the methods of the op table (minitensor/ops/table.py), in its order " + "-" * 30]
    for row in table.OPS:
        if not row.method:
            continue
        for name in row.names():
            body += _method_lines(name, row.fn)
    from minitensor import _nn_aliases  # the nn functions that are Tensor methods too (attached by the package)
    body += ["", "    # ---- nn functions that are methods too (_nn_aliases.py's TENSOR_METHODS) " + "-" * 30]
    for name, fn in _nn_aliases.TENSOR_METHODS.items():
        body += _method_lines(name, fn)
    inplace_rows = [row for row in table.OPS if row.inplace]
    body += ["", "    # ---- in place, derived by the op table: each changes the tensor and returns it " + "-" * 25]
    for row in inplace_rows:
        for name in row.names():
            body += _method_lines(name + "_", row.fn, inplace=True)
    defined = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    text = HEADER.format(imports=_imports(defined)) + "\n".join(module_lines) + "\n\n" + "\n".join(body) + "\n"
    return re.sub(r"\n{3,}", "\n\n", text)


# ---- minitensor/__init__.py: the op imports and __all__ -----------------------------------------

BEGIN = "# ---- the ops, from minitensor/ops/table.py: GENERATED by scripts/gen_api.py, do not edit ----"
END = "# ---- end of the generated op imports ----"
ALL_BEGIN = "# ---- __all__: GENERATED by scripts/gen_api.py from the public names bound above, do not edit ----"


def _attribute_name(fn, module) -> str:
    for key, value in vars(module).items():
        if value is fn and not key.startswith("__"):
            if key == getattr(fn, "__name__", None):
                return key
    for key, value in vars(module).items():
        if value is fn:
            return key
    raise SystemExit(f"gen_api: {fn!r} is not a name of {module.__name__}: define it at the module's top level")


def import_block() -> str:
    from minitensor.ops import table

    by_module: dict[str, list[str]] = {}
    out_forms: list[tuple[str, object]] = []  # (name, function) of the rows that take `out=` (table.OUT_FORMS)
    for row in table.OPS:
        if not row.function:
            continue
        module = importlib.import_module(row.fn.__module__)
        own = _attribute_name(row.fn, module)
        names = by_module.setdefault(module.__name__, [])
        for name in row.names():
            if name in table.OUT_FORMS:
                out_forms.append((name, row.fn))
            else:
                names.append(own if name == own else f"{own} as {name}")
    lines = [BEGIN]
    for module_name, names in by_module.items():
        if not names:
            continue
        rel = "." + module_name.split(".", 1)[1]
        lines.append(f"from {rel} import (  # noqa: F401")
        lines += textwrap.wrap(", ".join(names) + ",", WIDTH - 4, initial_indent="    ", subsequent_indent="    ",
                               break_on_hyphens=False)
        lines.append(")")
    if out_forms:
        lines += _out_block(out_forms)
    lines += _namespace_inplace_block(sorted(table.NAMESPACE_INPLACE))
    lines.append(END)
    return "\n".join(lines)


# in minitensor/__init__.py the names int, float and bool are dtypes: annotations name the builtins
IN_INIT = {"int": "_builtins.int", "float": "_builtins.float", "bool": "_builtins.bool"}


def _out_block(out_forms: list[tuple[str, object]]) -> list[str]:
    """The functions taking `out=`: a declaration of each for type checkers (the op's own signature
    plus `out: Tensor | None = None`), and at run time the wrappers of ops/table.py's `with_out`."""
    before = set(USED)
    USED.clear()
    decls: list[str] = []
    for name, fn in out_forms:
        nodes, tree, _ = _source_def(fn)
        rename = dict(IN_INIT)
        for node in tree.body:  # a name the op's module imports under another name: its original
            if isinstance(node, ast.ImportFrom):
                rename.update({alias.asname: alias.name for alias in node.names if alias.asname})
        for node in nodes:
            node = copy.deepcopy(node)
            if "out" not in [a.arg for a in node.args.args + node.args.kwonlyargs]:
                one = node.returns is None or ast.unparse(node.returns) in ("Tensor", "'Tensor'")
                kind = "Tensor | None" if one else "Tensor | tuple[Tensor, ...] | None"  # max(x, dim, out=(v, i))
                node.args.kwonlyargs.append(ast.arg("out", ast.parse(kind, mode="eval").body))
                node.args.kw_defaults.append(ast.Constant(None))
            decls += declaration(node, "    ", rename, name=name)
        if len(nodes) > 1:  # overloads outside a stub need an implementation, for the checker's sake
            decls.append(f"    def {name}(*args: Any, **kwargs: Any) -> Any: ...")
            USED.add("Any")
    if any(line.strip() == "@overload" for line in decls):
        USED.add("overload")
    typing_names = sorted(USED & {"Any", "Callable", "Iterator", "Literal", "Sequence", "overload"})
    own = {"Tensor", "Size", "device", "_builtins", "None", "str", "object", "tuple", "list", "dict",
           "type", "slice", "bytes"} | set(typing_names)
    imports = _imports_for(USED - own)
    USED.clear()
    USED.update(before)
    names = [name for name, _ in out_forms]
    assign = ["    ("] + textwrap.wrap(", ".join(names) + ",", WIDTH - 8, initial_indent="        ",
                                      subsequent_indent="        ", break_on_hyphens=False)
    assign.append("    ) = _out_functions(")
    quoted = textwrap.wrap(", ".join(f'"{n}"' for n in names) + ",", WIDTH - 8, initial_indent="        ",
                           subsequent_indent="        ", break_on_hyphens=False)
    return (["# the functions PyTorch gives `out=` (OUT_FORMS in minitensor/ops/table.py): the op's function",
             "# wrapped by the table's `with_out`; a type checker reads their declarations",
             "if _TYPE_CHECKING:",
             *([f"    from typing import {', '.join(typing_names)}"] if typing_names else [])]
            + ["    " + line for line in imports] + [""] + decls
            + ["else:", "    from .ops.table import out_functions as _out_functions", ""] + assign + quoted + ["    )"])


def _namespace_inplace_block(names: list[str]) -> list[str]:
    """`abs_ = Tensor.abs_` ...: PyTorch's in-place functions (NAMESPACE_INPLACE in ops/table.py) are
    the Tensor's in-place methods, so a type checker reads them from the stub."""
    head = ["# the in-place functions of PyTorch's namespace (NAMESPACE_INPLACE in minitensor/ops/table.py):",
            "# `minitensor.abs_(t)` is `t.abs_()`"]
    return head + [f"{name} = Tensor.{name}" for name in names]


def _imports_for(names: set[str]) -> list[str]:
    return [line for line in _imports_of(names).splitlines() if line]


def _public_names(source: str) -> list[str]:
    names = set()
    body = list(ast.parse(source).body)
    for node in list(body):  # `if _TYPE_CHECKING: ... else: <run time>`: the names bound at run time
        if isinstance(node, ast.If):
            body += node.orelse
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Name):
                        names.add(t.id)
    return sorted((n for n in names if not n.startswith("_")), key=lambda n: (n.lower(), n))


def init_text() -> str:
    text = open(INIT).read()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    text = text[:start] + import_block() + text[end:]
    head = text[:text.index(ALL_BEGIN)]
    body = ", ".join(f'"{n}"' for n in _public_names(head))
    wrapped = textwrap.wrap(body, WIDTH - 4, initial_indent="    ", subsequent_indent="    ", break_on_hyphens=False)
    return head + ALL_BEGIN + "\n__all__ = [\n" + "\n".join(wrapped) + ",\n]\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the files are up to date")
    args = parser.parse_args()
    # the __init__ block first: the stub is made from the package, which imports it
    outputs = [(INIT, init_text)]
    stale = []
    for path, make in outputs + [(STUB, stub_text)]:
        new = make()
        old = open(path).read()
        if new != old:
            stale.append(os.path.relpath(path, ROOT))
            if not args.check:
                with open(path, "w") as f:
                    f.write(new)
    if args.check and stale:
        print(f"gen_api: {', '.join(stale)} not up to date with the op table: run `python scripts/gen_api.py`")
        return 1
    print("gen_api: " + ("up to date" if not stale else "wrote " + ", ".join(stale)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

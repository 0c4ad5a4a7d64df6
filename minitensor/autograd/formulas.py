"""The formulas in an op's docstring, read: what `explain` prints for each node and `help(op)` shows."""
from __future__ import annotations

import inspect
from typing import Any, Callable, TypeVar

from .function import Function

# ---- the formulas in a docstring ----------------------------------------------------------------
# A Function's docstring states its math: the forward formula, then "VJP:" and the gradient of each
# input. That text is the one source of truth: `explain` prints it for each node, and `with_formulas`
# copies it into the docstring of the public function that applies the Function, so `help(softmax)`
# shows it. There every formula section reads
#     forward: <the forward formula>
#     VJP:     <the gradient of each input, g being the gradient that reaches the output>
# and a public function composed of other ops writes those two lines itself.

# a decorated function keeps its own type (signature) for a type checker
_F = TypeVar("_F", bound=Callable[..., Any])


def split_formulas(doc: str | None) -> tuple[str, str | None]:
    """(forward, vjp): the text of docstring `doc` before and after its 'VJP:' (vjp None without one)."""
    doc = inspect.cleandoc(doc or "")
    if "VJP:" not in doc:
        return doc, None
    before, _, after = doc.partition("VJP:")
    return before.strip().rstrip(";").strip(), after.strip()


def formula_section(op: type[Function]) -> str:
    """The 'forward:' and 'VJP:' lines of Function subclass `op`, from its docstring, under a heading
    naming its node."""
    forward, vjp = split_formulas(op.__doc__)
    if vjp is None or not forward:
        missing = "'VJP:' formula" if vjp is None else "forward formula before its 'VJP:'"
        raise TypeError(f"{op.__name__}'s docstring states no {missing}, so there is nothing to show")
    pad = " " * len("forward: ")
    first, *rest = forward.splitlines()
    lines = [f"Formulas of its node {op.__name__}Backward (g = d loss / d out):", "forward: " + first.strip()]
    lines += [pad + line for line in rest]
    first, *rest = vjp.splitlines()
    lines.append("VJP:     " + first.strip())
    # a continuation line was aligned under the text after 'VJP: ' (5 characters): keep it aligned
    lines += [pad + line[5:] if line[:5].isspace() else pad + line.strip() for line in rest]
    return "\n".join(lines)


def with_formulas(*ops: type[Function]) -> Callable[[_F], _F]:
    """Decorator for the public function of an op: appends to its docstring, once, when it is defined,
    the forward and VJP formulas stated in the docstrings of the Function subclasses `ops` it applies.

        @with_formulas(Softmax)
        def softmax(input, dim=None): ...     # help(softmax) shows Softmax's formulas
    """
    sections = "\n\n".join(formula_section(op) for op in ops)

    def attach(fn: _F) -> _F:
        own = inspect.cleandoc(fn.__doc__ or "")
        fn.__doc__ = own + "\n\n" + sections if own else sections
        return fn

    return attach

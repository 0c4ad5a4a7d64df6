"""help() shows the math: every differentiable public op states its forward and VJP formulas.

The convention (minitensor/autograd/function.py): a line starting with "forward:" and one starting
with "VJP:" in the docstring of the public function or method. An op backed by a Function gets
them copied from that Function's docstring by `with_formulas`; a composed one writes them itself.
A new differentiable op without them fails here, unless it is listed below as having no gradient.
"""
import inspect
import pydoc
import types

import pytest

import attention
import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import Function
from minitensor.autograd.formulas import formula_section, split_formulas, with_formulas

# Public functions and methods of the op modules that no gradient flows through, and why. Anything
# else there is differentiable and must carry its formulas.
NO_GRADIENT = {
    # bool results (comparisons, logic, tests)
    **dict.fromkeys(["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
                     "not_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "isclose",
                     "isfinite", "isinf", "isnan", "all", "any", "bool"], "a bool result"),
    # integer results or bit operations
    **dict.fromkeys(["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "argmax", "argmin", "argsort",
                     "nonzero", "count_nonzero", "multinomial", "long", "int", "short", "char", "byte", "one_hot"],
                    "an integer result"),
    # Python values, not tensors
    **dict.fromkeys(["allclose", "equal"], "a Python bool"),
    "type": "the type's name, or `to(dtype)` (whose formulas `to` shows)",
    # masks, made from sizes or integer lengths
    **dict.fromkeys(["causal_mask", "padding_mask"], "a mask"),
    # issue 29: counts, bins, indices and storage changes
    **dict.fromkeys(["argwhere", "bincount", "histc", "histogram", "bucketize", "searchsorted", "tril_indices",
                     "triu_indices", "unique", "unique_consecutive", "unravel_index"], "integer or count results"),
    **dict.fromkeys(["resize_", "resize_as_"], "refused for a tensor that requires grad, as in PyTorch"),
    "new": "a new tensor of constants",
    # issue 29's ops without a gradient: bool and integer results, and ops PyTorch defines no gradient for
    **dict.fromkeys(["signbit", "isposinf", "isneginf", "isreal", "isin"], "a bool result"),
    **dict.fromkeys(["gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift", "gcd_", "lcm_", "bitwise_left_shift_",
                     "bitwise_right_shift_"], "an integer result"),
    "frexp": "a mantissa and an integer exponent, no gradient in PyTorch",
    **dict.fromkeys(["nextafter", "heaviside"], "no gradient in PyTorch either"),
    # h-torchns: the in-place twins of those
    **dict.fromkeys(["nextafter_", "heaviside_"], "no gradient in PyTorch either"),
    # issue 29 (h-names29): PyTorch defines no derivative for geqrf; counts; a tensor read from a file
    "geqrf": "no gradient in PyTorch either (its backward raises)",
    "histogramdd": "integer or count results",
    "from_file": "a new tensor of the file's values",
    # pictures, not tensors
    **dict.fromkeys(["show_heatmaps", "unicode_heatmap", "attention_viewer_html"], "a picture"),
}


def _is_public_op(fn):
    return (isinstance(fn, types.FunctionType)
            and fn.__module__.startswith(("minitensor.ops", "minitensor.nn.functional")))


def _public_ops():
    """(where, name, function) for every public op function, Tensor method and nn.functional function."""
    found = []
    for name in dir(mt):
        fn = getattr(mt, name)
        if not name.startswith("_") and _is_public_op(fn):
            found.append(("minitensor", name, fn))
    for name, fn in vars(mt.Tensor).items():
        if not name.startswith("_") and _is_public_op(fn):
            found.append(("Tensor", name, fn))
    for name in F.__all__:
        found.append(("nn.functional", name, getattr(F, name)))
    for name in attention.__all__:
        fn = getattr(attention, name)
        if isinstance(fn, types.FunctionType):
            found.append(("attention", name, fn))
    return found


def _has_formulas(doc):
    lines = [line.strip() for line in (doc or "").splitlines()]
    return any(line.startswith("forward:") for line in lines) and any(line.startswith("VJP:") for line in lines)


def _all_functions():
    seen, stack = [], list(Function.__subclasses__())
    while stack:
        cls = stack.pop()
        seen.append(cls)
        stack.extend(cls.__subclasses__())
    return [c for c in seen if c.__module__.startswith(("minitensor.", "attention."))]


def test_the_walk_sees_the_api():
    names = {(where, name) for where, name, _ in _public_ops()}
    # the walk must reach each place, or the test below would pass on nothing
    assert {("minitensor", "softmax"), ("Tensor", "softmax"), ("Tensor", "add_"), ("nn.functional", "layer_norm"),
            ("attention", "scaled_dot_product_attention")} <= names
    assert len(names) > 250


def test_every_differentiable_public_op_states_its_forward_and_vjp_formulas():
    missing = sorted({f"{where}.{name}" for where, name, fn in _public_ops()
                      if name not in NO_GRADIENT and not _has_formulas(fn.__doc__)})
    assert not missing, ("these differentiable public ops show no 'forward:' and 'VJP:' lines in help(); decorate "
                         "them with minitensor.autograd.formulas.with_formulas(TheirFunction) or write the two "
                         f"lines: {missing}")


def test_the_no_gradient_list_names_only_public_ops():
    public = {name for _, name, _ in _public_ops()}
    assert set(NO_GRADIENT) <= public, set(NO_GRADIENT) - public


@pytest.mark.parametrize("name", ["argmax", "eq", "isnan", "long", "multinomial"])
def test_what_the_list_calls_gradient_free_really_is(name):
    x = mt.tensor([[0.2, 0.5], [0.9, 0.1]], requires_grad=True)
    out = {"argmax": lambda: x.argmax(dim=1), "eq": lambda: x.eq(0.5), "isnan": lambda: x.isnan(),
           "long": lambda: x.long(), "multinomial": lambda: x.multinomial(1)}[name]()
    assert out.grad_fn is None and not out.requires_grad


def test_every_function_subclass_states_a_vjp():
    for cls in _all_functions():
        assert split_formulas(cls.__doc__)[1], f"{cls.__module__}.{cls.__name__} states no 'VJP:' formula"


def test_help_shows_softmax_formulas_from_its_function():
    text = pydoc.render_doc(mt.softmax, renderer=pydoc.plaintext)
    assert "forward: out_i = e^{x_i} / \\sum_j e^{x_j}" in text
    assert "VJP:     gx = out * (g - \\sum_j g_j out_j)" in text
    assert "SoftmaxBackward" in text
    # the method is the same function
    assert mt.Tensor.softmax.__doc__ == mt.softmax.__doc__


def test_the_function_docstring_is_the_one_source():
    class Cube(Function):
        r"""out = x^3
        VJP: gx = 3 x^2 g
             (zero at x = 0)"""

        @staticmethod
        def forward(ctx, x):
            return x.numpy() ** 3

        @staticmethod
        def backward(ctx, g):
            return 3 * ctx.inputs[0] ** 2 * g

    @with_formulas(Cube)
    def cube(x):
        """x cubed."""
        return Cube.apply(x)

    assert cube.__doc__ == ("x cubed.\n\nFormulas of its node CubeBackward (g = d loss / d out):\n"
                            "forward: out = x^3\nVJP:     gx = 3 x^2 g\n         (zero at x = 0)")
    assert formula_section(Cube) in cube.__doc__
    assert _has_formulas(cube.__doc__)


def test_a_function_without_a_vjp_formula_is_refused_at_definition():
    class Mystery(Function):
        """does something"""

    with pytest.raises(TypeError, match="Mystery's docstring states no 'VJP:' formula"):
        with_formulas(Mystery)

    class Backwards(Function):
        """VJP: gx = g"""

    with pytest.raises(TypeError, match="Backwards's docstring states no forward formula before its 'VJP:'"):
        with_formulas(Backwards)


def test_in_place_methods_show_the_formulas_of_their_out_of_place_op():
    assert "AddBackward" in mt.Tensor.add_.__doc__ and "In place" in mt.Tensor.add_.__doc__
    assert inspect.getdoc(mt.Tensor.masked_fill_).count("forward:") >= 1

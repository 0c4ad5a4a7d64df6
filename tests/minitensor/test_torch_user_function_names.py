"""A user's autograd.Function's node prints as PyTorch's: `grad_fn=<LinearFunctionBackward>` (no overload
number, which only PyTorch's own ops carry) and `<torch.autograd.function.LinearFunctionBackward object at ...>`,
also when the class shares a name with one of minitensor's ops."""
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow


def user_functions(lib):
    class LinearFunction(lib.autograd.Function):  # PyTorch 2's style: forward without ctx, then setup_context
        @staticmethod
        def forward(input, weight):
            return input.mm(weight.t())

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            input, weight = ctx.saved_tensors
            return g.mm(weight), g.t().mm(input)

    class Add(lib.autograd.Function):  # the name of one of minitensor's own nodes
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g

    return LinearFunction, Add


@pytest.mark.parametrize("which", [0, 1])
def test_user_function_nodes_print_as_pytorchs(which, as_torch):
    reprs = []
    for lib in (mt, torch):
        fn = user_functions(lib)[which]
        x = lib.ones(2, 2, requires_grad=True)
        out = fn.apply(x, lib.ones(2, 2))
        reprs.append((repr(out), repr(out.grad_fn).split(" object")[0]))
        out.sum().backward()
    assert reprs[0] == reprs[1]
    assert reprs[0][1] == "<torch.autograd.function." + ("LinearFunctionBackward", "AddBackward")[which]


def test_each_output_of_a_function_with_several_prints_as_its_node(as_torch):
    """PyTorch's outputs share the Function's one node; minitensor's each have a node leading to it, which
    prints as that node does (it showed `OutputOfBackward0`)."""
    def sinh_with_parts(lib):
        class Sinh(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                expx, expnegx = lib.exp(x), lib.exp(-x)
                return (expx - expnegx) / 2, expx, expnegx

            @staticmethod
            def backward(ctx, g, g_exp, g_negexp):
                return g
        return Sinh

    seen = []
    for lib in (mt, torch):
        outs = sinh_with_parts(lib).apply(lib.ones(2, requires_grad=True))
        seen.append([repr(o) for o in outs] + [repr(o.grad_fn).split(" object")[0] for o in outs]
                    + [len({repr(o.grad_fn) for o in outs})])
    assert seen[0] == seen[1] and seen[0][3] == "<torch.autograd.function.SinhBackward"

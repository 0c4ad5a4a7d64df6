r"""The speed layer: code that exists only to make a training step faster.

Nothing here is part of the math a learner reads. Each piece computes exactly what a plainer
piece of the teaching path computes, says which one, is proven equal to it by a test, and stays
only because it measured at least 2 % of a training step of the default model (CPU instructions
per step under valgrind, docs/performance.md). The ops call into it in one marked line each.

| piece | replaces | proven equal by | gain on a training step |
|---|---|---|---|
| `vjps`: numpy first-order backwards of Linear, LayerNorm, CrossEntropy, GELU | the op's own backward in Tensor ops (which also runs when `create_graph=True`) | tests/minitensor/fast/test_vjps.py | see docs/performance.md |
"""
from .vjps import gelu_vjp, layer_norm_vjp, linear_vjp  # noqa: F401
from .adam import adam_step_flat  # noqa: F401
from .rows import add_rows  # noqa: F401

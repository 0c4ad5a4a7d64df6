r"""The speed layer: code that exists only to make a training step faster.

Nothing here is part of the math a learner reads. Each piece computes what a plainer piece of the
teaching path computes, says which, is proven equal to it by a test, and stays only because it
measured at least 2 % of a training step of the default model, or of a learner's step on tiny
tensors (benchmarks/bench_tiny.py): CPU instructions per step under valgrind with the piece switched
off (the default model's baseline 109.7M, noise +-0.12%; docs/performance.md).

It plugs in from above: no module below it imports it. The layers below have empty slots, and
`plug_in()` fills them: `Function.fast_forward` and `Function.fast_backward` on an op (the engine
runs `fast_backward(ctx, g)` instead of the op's backward only when nothing records the backward;
`Function.apply` and `Replay` run `fast_forward` instead of its forward), `Adam.fast_update_group`,
and `ops/inplace.py`'s `fast_in_place` (asked only when nothing records). `minitensor/__init__.py`
calls `plug_in_unless_plain()` once, at the end of the import, so users' code gets the speed unchanged.
With MINITENSOR_PLAIN=1 in the environment it doesn't plug in, and minitensor runs the plain path
only: every op's own forward and backward, Adam's loop (the same math; LayerNorm's and short-row
softmax's sums in another order, so their last bits may differ).
`plug_out()` and `plug_in()` switch within a process (the tests compare both paths). Besides the
slots, `Function.apply` has one marked line for `Replay`'s recording, and the trainer uses `Replay`
unless told `--no-replay`.

| piece | replaces | registered as | proven equal by | gain |
|---|---|---|---|---|
| `vjps.layer_norm_vjp` | LayerNorm's backward in Tensor ops | `LayerNorm.fast_backward` | tests/minitensor/fast/test_vjps.py | 10.3% |
| `vjps.gelu_vjp` (with the forward's Phi(x) kept, its tanh factor computed in one buffer) | GELU's backward in Tensor ops | `Gelu.fast_backward`, `Gelu.fast_forward` | tests/minitensor/fast/test_vjps.py | 7.5% |
| `vjps.ones_vector` (row sums as `rows @ ones`) | `.sum` over the normalised dims in LayerNorm's forward, row sums in the twins | `LayerNorm.fast_forward` (and inside the twins) | tests/minitensor/fast/test_vjps.py | 6.7% |
| `vjps.linear_vjp` | Linear's backward in Tensor ops | `Linear.fast_backward` | tests/minitensor/fast/test_vjps.py | 5.3% |
| `elementary.*_backward` (add, sub, mul, div, pow, neg, sum, mean, reshape, permute, expand, matmul, cross-entropy) | those ops' backwards in Tensor ops (matmul's: ten ops) | each op's `fast_backward` | tests/minitensor/test_ops.py (`test_speed_layer_twins_...`: every row of those ops, bit for bit) | learner's step (bench_tiny): 22.6% of its instructions (5.88M -> 4.55M) |
| `kernels.tanh_backward`, `kernels.softmax_backward` | Tanh's and Softmax's backwards in Tensor ops (three each) | `Tanh.fast_backward`, `Softmax.fast_backward` | tests/minitensor/fast/test_kernels.py | part of a user's GPT's 1.1% (with the dropout mask in its dtype; docs/performance.md) |
| `kernels.softmax_forward` (and the backward's row sums) | numpy's max and sum along a short last axis (<= 64) | `Softmax.fast_forward` | tests/minitensor/fast/test_kernels.py (within rounding: the sums' order) | a user's GPT: 2.6% of its instructions (137.66M -> 134.09M) |
| `inplace.arithmetic_in_place` | an in-place add/sub/mul computed by the out-of-place op and copied in, when nothing records it (`p.data += -lr * p.grad`) | `ops.inplace.fast_in_place` (a module's slot) | tests/minitensor/fast/test_inplace.py | learner's step: 5.4% of its instructions (4.53M -> 4.28M) |
| `rows.add_rows` | `np.add.at` in an embedding's backward | `IndexAdd.fast_forward` | tests/minitensor/fast/test_rows.py | 4.1% |
| `adam.adam_step_flat` | Adam's per-parameter loop | `Adam.fast_update_group` | tests/minitensor/optim/test_adam_flat.py | 2.25% |
| `compile.compile_replaying` (`Recording`, a `Replay`) | a compiled module's or function's eager forward, keyed on shapes, dtypes, modes and parameters | the slot `minitensor.compile` hands the model to | tests/minitensor/fast/test_compile.py | instructions per step 0.956x on bench_client's GPT, 0.941x on a small MLP (docs/performance.md) |
| `replay.Replay` | a step's eager forward (the model's Python, each op's wrapper and `Function.apply`) and the engine's freeing of the graph | used by the trainer (`--no-replay`: not) | tests/minitensor/fast/test_replay.py, tests/attention/test_trainer.py | 4.4% (time: 8-13%) |
| `allocator.tune_malloc` | glibc's default malloc thresholds | `minitensor.tune_malloc()`, or MINITENSOR_TUNE_MALLOC=1 | tests/minitensor/fast/test_allocator.py | 1,094 -> 3 page faults per step |

tests/minitensor/fast/test_layering.py checks that nothing below imports this package and that
the plain path (MINITENSOR_PLAIN=1) gives a model the same gradients as the speed layer.

Not kept for measuring slower (2026-11-28, ninth session): tanh and GELU computed in pieces on a pool
of threads (the same bits): with OpenBLAS's own threads on the second core, a user's GPT step at two
threads took 1.025-1.030x its time without it.
Not kept for measuring under 2% (2026-11-28, seventh session): attention's fused softmax with the
short-row reductions (-1.6% of the default model's instructions); `np.add.at` for a small embedding
gradient (6.4% more instructions on the learner's step, its time gain within noise).
Removed for measuring under 2% (2026-11-28, sixth session): numpy twins of Index's and Where's backwards
(a user's GPT: 0.56% of its instructions, 138.69M -> 137.92M, with two core early outs).
Removed for measuring under 2% (2026-11-28): the replayed step's own kernels and backward walk
(`fuse.py`: 0.83% at first; with the elementary twins above, 108.24M with it and 108.89M without, 0.6%).
Removed for measuring under 2% (2026-11-24): cross-entropy's numpy backward, a transposed-copy
row max, zero-stride broadcast views, a flattened matmul, direct ufunc-reduce calls, Module
attribute descriptors, attention's check and causal-mask caches, the kernel path of
`Function.apply`, the reference-count trick of `.grad`, numpy's private error-state variable.
Cross-entropy's forward lost its `rows @ ones` row sums (2026-11-28) when this layer came to plug
in from above: the step counted 109.13M instructions with them and 108.93M without (and with every
twin registered), equal within noise.
"""  # noqa: E501 (the table's rows: a markdown table row can't be wrapped)
import os

from . import adam, elementary, inplace, kernels, rows, vjps
from .adam import adam_step_flat  # noqa: F401
from .replay import Replay as Replay  # noqa: F401  (re-exported: the trainer uses it)
from .rows import add_rows  # noqa: F401
from .vjps import gelu_vjp, layer_norm_vjp, linear_vjp  # noqa: F401

PLAIN_SWITCH = "MINITENSOR_PLAIN"


def _slots():
    """(owner, slot, twin) for every slot the speed layer fills."""
    from ..nn.functional import CrossEntropy, LayerNorm, Linear
    from ..ops import inplace as in_place_ops
    from ..ops.arithmetic import Add, Div, Mul, Pow, Sub
    from ..ops.indexing import IndexAdd
    from ..ops.linalg import Matmul
    from ..ops.reduce import Mean, Sum
    from ..ops.shape import Expand, Permute, Reshape
    from ..ops.softmax import Softmax
    from ..ops.unary import Gelu, Neg, Tanh
    from ..optim.adam import Adam
    return [(Linear, "fast_backward", vjps.linear_backward),
            (LayerNorm, "fast_forward", vjps.layer_norm_forward),
            (LayerNorm, "fast_backward", vjps.layer_norm_backward),
            (Gelu, "fast_forward", vjps.gelu_forward), (Gelu, "fast_backward", vjps.gelu_backward),
            (IndexAdd, "fast_forward", rows.index_add_forward),
            (Adam, "fast_update_group", adam.adam_step_flat),
            # issue 33 (h-client33): a user's composed GELU (tanh) and attention (softmax)
            (Tanh, "fast_backward", kernels.tanh_backward), (Softmax, "fast_backward", kernels.softmax_backward),
            (Softmax, "fast_forward", kernels.softmax_forward)] + [
            # issue 33: the elementary ops of a learner's step (benchmarks/bench_tiny.py)
            (op, "fast_backward", twin) for op, twin in [
                (Add, elementary.add_backward), (Sub, elementary.sub_backward), (Mul, elementary.mul_backward),
                (Div, elementary.div_backward), (Pow, elementary.pow_backward), (Neg, elementary.neg_backward),
                (Sum, elementary.sum_backward), (Mean, elementary.mean_backward),
                (Reshape, elementary.reshape_backward), (Permute, elementary.permute_backward),
                (Expand, elementary.expand_backward), (Matmul, elementary.matmul_backward),
                (CrossEntropy, elementary.cross_entropy_backward)]] + [
            # issue 33: a hand-written update (`p.data += -lr * p.grad`) into the parameter's memory
            (in_place_ops, "fast_in_place", inplace.arithmetic_in_place)]


def plug_in() -> None:
    """Register every twin onto its op (and Adam's one-pass update): the speed layer is on."""
    for owner, slot, twin in _slots():
        setattr(owner, slot, staticmethod(twin) if isinstance(owner, type) else twin)  # (a class's slot, or a module's)


def plug_out() -> None:
    """Empty every slot: the plain path only, as with MINITENSOR_PLAIN=1."""
    for owner, slot, _ in _slots():
        setattr(owner, slot, None)


def is_plugged_in() -> bool:
    return all(getattr(owner, slot) is not None for owner, slot, _ in _slots())


def plug_in_unless_plain() -> bool:
    """At minitensor's import: `plug_in()` unless the environment has MINITENSOR_PLAIN=1."""
    if os.environ.get(PLAIN_SWITCH) == "1":
        return False
    plug_in()
    return True

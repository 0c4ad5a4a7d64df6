r"""The speed layer: code that exists only to make a training step faster.

Nothing here is part of the math a learner reads. Each piece computes what a plainer piece of the
teaching path computes, says which, is proven equal to it by a test, and stays only because it
measured at least 2 % of a training step of the default model: CPU instructions per step under
valgrind with the piece switched off (baseline 109.7M, noise +-0.12%; docs/performance.md). The
ops call into it in one marked line each; `Function.apply` has one marked line for `Replay`'s
recording, and the trainer uses `Replay` unless told `--no-replay`.

| piece | replaces | proven equal by | gain |
|---|---|---|---|
| `vjps.layer_norm_vjp` | LayerNorm's backward in Tensor ops | tests/minitensor/fast/test_vjps.py | 10.3% |
| `vjps.gelu_vjp` | GELU's backward in Tensor ops | tests/minitensor/fast/test_vjps.py | 7.5% |
| `vjps.ones_vector` (row sums as `rows @ ones`) | `.sum(axis=-1)` in LayerNorm, Linear, cross-entropy | the ops' gradchecks and test_vjps.py | 6.7% |
| `vjps.linear_vjp` | Linear's backward in Tensor ops | tests/minitensor/fast/test_vjps.py | 5.3% |
| `rows.add_rows` | `np.add.at` in an embedding's backward | tests/minitensor/fast/test_rows.py | 4.1% |
| `adam.adam_step_flat` | Adam's per-parameter loop | tests/minitensor/optim/test_adam_flat.py | 2.25% |
| `replay.Replay` | a step's eager forward (the model's Python, each op's wrapper and `Function.apply`) and the engine's freeing of the graph | tests/minitensor/fast/test_replay.py, tests/attention/test_trainer.py | 4.4% (time: 8-13%) |
| `allocator.tune_malloc` | glibc's default malloc thresholds | tests/minitensor/fast/test_allocator.py | 1,094 -> 3 page faults per step |

Removed for measuring under 2% (2026-11-24): cross-entropy's numpy backward, a transposed-copy
row max, zero-stride broadcast views, a flattened matmul, direct ufunc-reduce calls, Module
attribute descriptors, attention's check and causal-mask caches, the kernel path of
`Function.apply`, the reference-count trick of `.grad`, numpy's private error-state variable.
"""
from .vjps import gelu_vjp, layer_norm_vjp, linear_vjp  # noqa: F401
from .adam import adam_step_flat  # noqa: F401
from .rows import add_rows  # noqa: F401
from .replay import Replay as Replay  # noqa: F401  (re-exported: the trainer uses it)

r"""Replay a training step's forward pass from a recording (the speed layer).

Every eager step re-runs the Python of the model and of each op's wrapper: argument checks, dtype
promotion, a new Tensor and a new node per op; the engine then frees the graph it has just
built. For a step that does the same ops on same-shaped data every time, `Replay`
records the ops once and then calls each op's `forward` straight on the new data, in the recorded
order, into the same nodes; the engine then runs the backward exactly as after an eager forward
and keeps the graph for the next replay. On the trainer's default model a replayed step takes
about 10 % less time than an eager one (docs/performance.md).

    step = Replay(lambda x, y: F.cross_entropy(model(mt.from_numpy(x)), mt.from_numpy(y)))
    loss = step(x, y)     # as `loss = fn(x, y); loss.backward()`, returning loss.detach()

What is replayed, and what is not:
  - call 1 runs `fn` eagerly and records each op `Function.apply` runs: its class, its node, its
    arguments and its output tensor. Its backward is the eager one.
  - call 2 checks the recording: it replays the forward on the new data, runs `fn` eagerly again
    on the same data (the global random generator rewound, so dropout draws the same numbers),
    and compares the two, op by op, bit for bit. A difference raises an error naming the op, and
    nothing has changed (the generator is rewound again). Otherwise the eager backward runs.
  - from call 3 on, only the replay: `forward` of each recorded op, then `engine.run_backward`
    with the graph retained (its nodes are the next replay's).
  - an argument of another shape or dtype records afresh (calls 1 and 2 again).
The check finds a step that computes from its inputs outside minitensor's ops (`.item()`,
`.numpy()` copies, `mt.tensor(...)` of data), whose recorded values a replay would keep, and one
that branches on its data where the check's batch takes the other branch. What it can't find,
and a replayed step must not do: read Python state that changes between calls
(`module.training`, a replaced parameter, a new `generator=`), or branch on data the check did
not see. Only the ops run again: the rest of the step's Python (forward hooks, prints, counters)
runs at the recording and at the check. The arguments are copied into buffers of the
recording, which `fn` receives: tensors it makes of them must share their memory
(`mt.from_numpy`, `mt.as_tensor`), as does the trainer.

tests/minitensor/fast/test_replay.py proves a replayed training equal to the eager one bit for
bit (parameters after several steps, with dropout); docs/performance.md has the measured gain.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from .. import random as _random
from ..autograd import grad_mode
from ..autograd.api import root_gradients
from ..autograd.engine import run_backward
from ..autograd.function import Function, call_forward
from ..tensor import Tensor


class Replay:
    """`fn(*arrays) -> scalar loss` as a callable that records it once and then replays its forward
    (see the module's docstring). `names`: {name: tensor} (e.g. `dict(model.named_parameters())`) to
    name the parameters in `program()`."""

    def __init__(self, fn: Callable[..., Tensor], names: dict[str, Tensor] | None = None) -> None:
        self.fn = fn
        self.names = {id(t): name for name, t in (names or {}).items()}
        self.key: tuple[Any, ...] | None = None  # the arguments' shapes and dtypes of the recording
        self.buffers: list[np.ndarray] = []  # the arrays fn received; each call copies its arguments in
        self.tape: list[tuple[Any, Any, tuple[Any, ...], Tensor, bool]] = []  # (op, ctx, args, output, is a node)
        self.loss_at = -1  # the tape's entry whose output is the loss
        self.order: list[Any] = []  # the nodes in the order the recording's backward ran them
        self.checked = False

    def __call__(self, *arrays: Any) -> Tensor:
        arrays = tuple(a._array if isinstance(a, Tensor) else np.asarray(a) for a in arrays)
        modes = grad_mode.modes
        if not modes.grad_enabled or modes.anomaly_enabled or modes.saved_hooks is not None:
            raise RuntimeError("Replay: call it with grad mode on, anomaly detection off and no saved_tensors_hooks "
                               "(it runs backward, and its nodes keep their tensors)")
        key = tuple((a.shape, a.dtype) for a in arrays)
        if key != self.key:
            return self._record(key, arrays)
        for buffer, a in zip(self.buffers, arrays):
            np.copyto(buffer, a)
        if not self.checked:
            return self._check()
        loss = self._forward()
        run_backward(root_gradients((loss,), (None,)), True, False)  # graph retained: the next replay reuses it
        return loss.detach()

    # ---- call 1: record -------------------------------------------------------------------------
    def _record(self, key, arrays):
        self.key, self.checked = None, False
        self.buffers = [a.copy() for a in arrays]
        loss, self.tape = self._run_eagerly()
        self.loss_at = next((i for i, entry in enumerate(self.tape) if entry[3] is loss), -1)
        if self.loss_at < 0:
            raise RuntimeError("Replay: fn must return the output of an op (not a tensor it was given)")
        order: list[Any] = []
        run_backward(root_gradients((loss,), (None,)), False, False, visit=lambda node, g, grads: order.append(node))
        self.order, self.key = order, key
        return loss.detach()

    def _run_eagerly(self):
        """fn on the buffers, every op it runs recorded: (loss, tape)."""
        modes = grad_mode.modes
        if modes.recorder is not None:
            raise RuntimeError("Replay: a replayed function called another one while recording")
        modes.recorder = ops = []
        try:
            loss = self.fn(*self.buffers)
        finally:
            modes.recorder = None
        if not isinstance(loss, Tensor) or loss.numel() != 1 or loss.grad_fn is None:
            raise RuntimeError("Replay: fn must return a one-element loss tensor computed from parameters "
                               f"that require grad, got {loss!r:.80}")
        tape = [(op, ctx, args, out, out.grad_fn is ctx) for op, ctx, args, out in ops]
        return loss, tape

    # ---- call 2: check the replay against the eager run -----------------------------------------
    def _check(self):
        state = _random.get_rng_state()
        self._forward()
        replayed = [(entry[0], entry[3]._array.copy()) for entry in self.tape]
        _random.set_rng_state(state)  # the eager run draws the numbers the replay drew
        loss, tape = self._run_eagerly()
        problem = _first_difference(replayed, [(entry[0], entry[3]._array) for entry in tape])
        if problem:
            _random.set_rng_state(state)
            self.key = None  # record afresh at the next call
            raise RuntimeError(f"Replay: {problem}. The step computes something from its inputs outside "
                               "minitensor's ops, or takes another path on other data: run it eagerly")
        run_backward(root_gradients((loss,), (None,)), False, False)
        self.checked = True
        return loss.detach()

    # ---- call 3 on: replay ----------------------------------------------------------------------
    def _forward(self):
        """Each recorded op's forward on the current data, into its output tensor and its node, by
        `Function.apply`'s own forward step; returns the loss tensor."""
        for op, ctx, args, out, is_node in self.tape:
            ctx.inputs, ctx.saved, ctx.versions = args, (), ()
            out._array = run_forward(op, ctx, args)
            if is_node and op.saves_values:
                ctx.saved_output = out  # (the engine freed it after the last backward)
        return self.tape[self.loss_at][3]

    # ---- for a learner: the step as straight-line code ------------------------------------------
    def program(self) -> str:
        """The recorded step as a listing: each forward op with its arguments and its output's
        shape, then each VJP the backward runs, in the engine's order."""
        if self.key is None:
            return "(nothing recorded yet: call the Replay once)"
        params = list(inspect.signature(self.fn).parameters)
        outputs = {id(entry[3]): f"t{i}" for i, entry in enumerate(self.tape)}
        nodes = {id(ctx): (f"t{i}", args) for i, (_, ctx, args, _, is_node) in enumerate(self.tape) if is_node}

        def name(a):
            if isinstance(a, Tensor):
                if id(a) in outputs:
                    return outputs[id(a)]
                if id(a) in self.names:
                    return self.names[id(a)]
                a = a._array
            if isinstance(a, np.ndarray):
                for i, buffer in enumerate(self.buffers):
                    if np.shares_memory(a, buffer):
                        return params[i] if i < len(params) else f"arg{i}"
                return f"<array {a.shape}>"
            if isinstance(a, tuple):  # an index key
                return "(" + ", ".join(name(k) for k in a) + ("," if len(a) == 1 else "") + ")"
            text = repr(a)
            return text if len(text) <= 30 else f"<{type(a).__name__}>"

        calls = [f"  t{i} = {op.__name__}({', '.join(name(a) for a in args)})"
                 for i, (op, _, args, _, _) in enumerate(self.tape)]
        width = max(len(call) for call in calls)
        lines = ["forward:"] + [f"{call:<{width}}  # {tuple(out._array.shape)} {out._array.dtype}"
                                for call, (_, _, _, out, _) in zip(calls, self.tape)]
        lines.append(f"backward (g_t = d t{self.loss_at} / d t, from g_t{self.loss_at} = 1):")
        for node in self.order:  # (a node made before fn was called, outside the recording, shows as '?')
            made, args = nodes.get(id(node), ("?", None))
            grads = ", ".join("g_" + (name(args[i]) if args else "?") for i, _, _, _ in node.edges)
            lines.append(f"  {grads} += {node.name()}(g_{made})")
        return "\n".join(lines)


def _first_difference(replayed, eager):
    """Where two runs of a step, as [(op class, output array)], first differ (bit for bit), or None."""
    for i, ((op, mine), (op_now, theirs)) in enumerate(zip(replayed, eager)):
        if op is not op_now or mine.shape != theirs.shape or not np.array_equal(mine, theirs, equal_nan=True):
            return f"op {i} ({op.__name__}) of the replayed forward differs from the eager run's ({op_now.__name__})"
    if len(replayed) != len(eager):
        return f"the eager run made {len(eager)} ops, the recording {len(replayed)}"
    return None


def run_forward(op: type[Function], ctx: Function, args: tuple[Any, ...]) -> np.ndarray:
    """`call_forward`, the forward step Replay shares with `Function.apply`: what forward returned, as
    the ndarray the output holds."""
    raw = call_forward(op, ctx, args)
    if type(raw) is np.ndarray:
        return raw
    if isinstance(raw, Tensor):
        return raw._array
    if isinstance(raw, tuple):
        raise TypeError(f"{op.__name__}.forward returned a tuple; Replay records ops of one output only")
    return np.asarray(raw)

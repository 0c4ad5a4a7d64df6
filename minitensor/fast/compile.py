r"""`minitensor.compile`: a module or a function that records its ops once and replays them (the speed layer).

`Replay` (replay.py) replays the trainer's whole step, `fn(arrays) -> loss`, backward included.
`compile` generalises it to what a user hands `torch.compile`: a module, whose call returns its
outputs (the user then computes a loss eagerly and calls `backward()`: the gradients reach the
parameters through the replayed ops' nodes), or a function of tensors.

    model = mt.compile(model)          # or `torch.compile(model)` under `python -m minitensor.run`
    logits = model(x)                  # call 1 records, call 2 checks, later calls replay
    F.cross_entropy(logits, y).backward()
    print(model.program())             # the recorded ops and the VJPs the backward runs

Each call is looked up by its key: the inputs' shapes, dtypes and `requires_grad` (tensors, in any
tuple, list or dict), the other arguments' values, grad mode and inference mode, the default dtype,
and the state of every module involved (the compiled module, modules among the arguments, and
modules the function names in its globals or closure): each one's `training`, its parameters,
buffers and children (by identity), each parameter's shape, dtype and `requires_grad`. A key not
seen before records afresh, as PyTorch recompiles, up to `RECOMPILE_LIMIT` recordings (PyTorch's
`recompile_limit`, 8); past it, a call of a new key runs eagerly (each recording holds one call's
activations) while the recorded keys keep replaying. Per key, as in `Replay`: call 1 runs eagerly and records
each op; call 2 replays and runs eagerly on the same data (the random generator rewound, so dropout
draws alike) and compares every op's output bit for bit; later calls replay. If call 2 had the
recording's very inputs, the data was not yet varied: the next call with other inputs checks again.

It runs eagerly from then on, as PyTorch runs a graph break eagerly (no error; `fullgraph=True`
raises instead), when the check finds a difference (a value read out of the graph with `.item()`
or `.numpy()`, a branch on the data, a tensor made from data outside the ops), or when the
recording finds that the call ran a backward or changed in place a tensor it did not make (an
optimizer's step, BatchNorm's running statistics): only ops are replayed, so a whole training
step, `loss.backward()` and `optimizer.step()` inside, runs eagerly; compile the model instead
(`reason` says why). A call runs eagerly, without recording, under anomaly detection, inside
saved-tensor hooks (a replayed node keeps its tensors, not what pack returned), inside
another recording, with hooks on the modules, and while the outputs of the previous replay are
still alive and not yet backpropagated (they may be: the nodes are shared between replays).

The inputs are copied into tensors of the recording, which the ops read (so `x.view(...)` and
`mt.from_numpy(x.numpy())` made inside see each call's data); the edges of the nodes that read an
input that requires grad are pointed at the caller's tensor at each call. Outputs are new tensors
each call (their arrays are the replay's), so a kept output keeps its values.

tests/minitensor/fast/test_compile.py trains compiled and eagerly, bit for bit equal (the
library's own models, a tutorial GPT run through minitensor.run's mapping), and each fallback;
docs/performance.md has the measured gain.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import weakref
from typing import Any, Callable

import numpy as np

from .. import _dtype, random as _random
from ..autograd import grad_mode
from ..autograd.engine import _count_consumers
from ..autograd.profiler import record_function
from ..nn import _module_hooks as _hooks
from ..nn.module import Module
from ..tensor import Tensor
from .replay import Replay, _first_difference

RECOMPILE_LIMIT = 8  # recordings per compiled callable, as torch._dynamo.config.recompile_limit
_PLAIN = (type(None), bool, int, float, complex, str, bytes)


# ---- the arguments and results as a flat list and a hashable skeleton ---------------------------
def _flatten(obj, leaves):
    """Append obj's leaves (anything but a tuple, list or dict) to `leaves`; return its skeleton."""
    if type(obj) in (tuple, list):
        return (type(obj), tuple(_flatten(o, leaves) for o in obj))
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple
        return (type(obj), tuple(_flatten(o, leaves) for o in obj))
    if type(obj) is dict:
        return (dict, tuple(obj), tuple(_flatten(o, leaves) for o in obj.values()))
    leaves.append(obj)
    return None


def _unflatten(skeleton, leaves):
    return _build(skeleton, iter(leaves))


def _build(s, it):  # (no closure: a recursive one would keep the outputs alive in a reference cycle)
    if s is None:
        return next(it)
    if s[0] is dict:
        return dict(zip(s[1], [_build(c, it) for c in s[2]]))
    items = [_build(c, it) for c in s[1]]
    return s[0](items) if s[0] in (tuple, list) else s[0](*items)


def _leaf_key(obj):
    if isinstance(obj, Tensor):
        a = obj._array
        return (a.shape, a.dtype, obj._rg, obj.grad_fn is not None)
    if type(obj) in _PLAIN or isinstance(obj, (_dtype.DType, np.dtype)):
        return (type(obj), obj)
    return (type(obj), id(obj))  # anything else by identity (a module's state is keyed apart)


# ---- the state of the modules a call involves ----------------------------------------------------
def _module_state(modules, outside=None):
    """What of the modules a recording depends on, as a tuple of plain values; None when a module has
    call hooks (their Python would not run at a replay). `outside`: a module whose own hooks run
    outside the compiled call (`Module.compile`)."""
    state: list[Any] = []
    for m in modules:
        d = m.__dict__
        if m is not outside and (d["_forward_hooks"] or d["_forward_pre_hooks"] or d["_backward_hooks"]
                                 or d["_backward_pre_hooks"]):
            return None
        state.append(d["training"])
        state.extend(None if p is None else (id(p), p._rg, p._array.shape, p._array.dtype)
                     for p in d["_parameters"].values())
        state.extend(None if b is None else (id(b), b._array.shape, b._array.dtype) for b in d["_buffers"].values())
        state.extend(id(c) for c in d["_modules"].values())
    return tuple(state)


def _modules_named_by(fn):
    """The modules a function reaches by name: its `self`, its globals and closure cells (and those of
    the functions it defines), the way PyTorch guards on what a function reads."""
    found: list[Module] = []
    if inspect.ismethod(fn):
        found.append(fn.__self__)
        fn = fn.__func__
    code, env = getattr(fn, "__code__", None), getattr(fn, "__globals__", {})
    cells = [c.cell_contents for c in getattr(fn, "__closure__", None) or () if _filled(c)]
    names: set[str] = set()
    stack = [code] if code is not None else []
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if inspect.iscode(k))
    found += [env[n] for n in sorted(names) if isinstance(env.get(n), Module)]
    found += [c for c in cells if isinstance(c, Module)]
    return list({id(m): m for m in found if isinstance(m, Module)}.values())


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


# ---- one recorded call ----------------------------------------------------------------------------
class _Tape(list[Any]):
    """The recorder `Function.apply` appends to. It also notes, for each tensor an op reads that the
    call did not make, its version and whether it had a gradient, and whether an op ran in backward."""

    def __init__(self):
        super().__init__()
        self.made: set[int] = set()
        self.seen: dict[int, tuple[Tensor, int, bool]] = {}
        self.in_backward = False

    def append(self, item):
        _, _, args, out = item
        self.in_backward = self.in_backward or grad_mode.modes.in_backward
        for a in args:
            for t in (a if isinstance(a, (tuple, list)) else (a,)):
                if isinstance(t, Tensor) and id(t) not in self.made and id(t) not in self.seen:
                    self.seen[id(t)] = (t, t._version, t._grad is None)
        self.made.add(id(out))
        super().append(item)


class Recording(Replay):
    """One key's recording: Replay's tape, forward and program, with the inputs as tensors of its own,
    the outputs in the structure the call returned, and the edges that lead to the caller's inputs."""

    def __init__(self, named: Callable[..., Any], names: dict[str, Tensor], inputs: list[Tensor]) -> None:
        super().__init__(named, names)  # (`named`: whose signature names the inputs in program())
        self.inputs = [_own_copy(x) for x in inputs]
        self.buffers = [b._array for b in self.inputs]
        self.seen: list[np.ndarray] | None = None  # the recording's inputs, until a check saw other data
        self.outputs: list[tuple[str, Any]] = []  # per output leaf: ('tape', i), ('input', j) or ('value', v)
        self.skeleton: Any = None
        self.wiring: list[tuple[Any, list[tuple[int, int]]]] = []  # (node, [(edge, input)]) to rewire per call
        self.handed: list[weakref.ref[Tensor]] = []  # the outputs of the call that used the nodes last

    def in_use(self) -> bool:
        """Whether the outputs last handed out may still be backpropagated through the recorded nodes:
        still alive, and no backward has freed the nodes since."""
        if not any(r() is not None for r in self.handed):
            return False
        return not any(is_node and ctx.inputs is not args for _, ctx, args, _, is_node in self.tape)

    def replay(self, tensors: list[Tensor]) -> Any:
        self._forward()
        _rewire(self.wiring, tensors)
        return self.hand_out(tensors)

    def hand_out(self, tensors):
        """The outputs as new tensors on the replayed arrays (nodes and all), in the call's structure."""
        fresh: dict[int, Tensor] = {}
        leaves = []
        for kind, v in self.outputs:
            if kind == "tape":
                t = fresh.get(v)
                if t is None:
                    t = fresh[v] = self._output(self.tape[v], tensors)
                leaves.append(t)
            else:
                leaves.append(tensors[v] if kind == "input" else v)
        self.handed = [weakref.ref(t) for t in fresh.values()]
        return _unflatten(self.skeleton, leaves)

    def _output(self, entry, tensors):
        _, ctx, _, out, is_node = entry
        arr = out._array
        if any(np.may_share_memory(arr, b) for b in self.buffers):
            arr = arr.copy()  # a view of an input: the next call's copy would overwrite it
        t = Tensor._make(arr)
        if is_node:
            t.grad_fn, t._rg = ctx, True
            ctx._out, ctx.output_version, ctx.retain, ctx.hooks = weakref.ref(t), t._version, False, None
            if ctx.saves_values:
                ctx.saved_output = t.detach()  # (as Function.apply: an in-place change of t is caught)
        return t

    def program(self) -> str:
        text = super().program()
        head = f"backward (g_t = d t{self.loss_at} / d t, from g_t{self.loss_at} = 1):"
        outs = ", ".join(f"t{v}" for kind, v in self.outputs if kind == "tape")
        return text.replace(head, f"backward (g_t = d loss / d t, from the gradients of the outputs {outs}):")


def _own_copy(x):
    b = Tensor._make(x._array.copy())
    b._rg = x._rg  # (so the ops record edges to it; they are pointed at the caller's tensor)
    return b


def _wiring(tape, inputs):
    where = {id(b): j for j, b in enumerate(inputs) if b._rg}
    if not where:
        return []
    wiring = []
    for _, ctx, _, _, is_node in tape:
        if is_node:
            spots = [(k, where[id(target)]) for k, (_, target, _, _) in enumerate(ctx.edges) if id(target) in where]
            if spots:
                wiring.append((ctx, spots))
    return wiring


def _rewire(wiring, tensors):
    for ctx, spots in wiring:
        edges = list(ctx.edges)
        for k, j in spots:
            i, _, shape, dtype = edges[k]
            x = tensors[j]
            edges[k] = (i, x.grad_fn if x.grad_fn is not None else x, shape, dtype)
        ctx.edges = tuple(edges)


def _backward_order(tape, outputs):
    """The nodes in the order the engine's walk from the outputs runs them (for program())."""
    roots = list({id(tape[v][1]): tape[v][1] for kind, v in outputs if kind == "tape" and tape[v][4]}.values())
    consumers = _count_consumers(roots)
    ready, order = [n for n in roots if consumers[n] == 0], []
    while ready:
        node = ready.pop()
        order.append(node)
        for _, child, _, _ in node.edges:
            if not isinstance(child, Tensor):
                consumers[child] -= 1
                if consumers[child] == 0:
                    ready.append(child)
    return order


# ---- the compiled callable ---------------------------------------------------------------------
_frames = itertools.count()  # numbers the compiled callables of the process in the order they first record


class Compiled:
    """The replaying callable behind `compile`: `fn` runs eagerly at a recording and whenever the call
    can't be replayed. `module`: the module whose call this is (its state is part of the key);
    `named`: the function whose signature names the inputs in `program()`."""

    def __init__(self, fn: Callable[..., Any], settings: dict[str, Any], module: Module | None = None,
                 named: Callable[..., Any] | None = None, outside: Module | None = None) -> None:
        self.fn, self.named, self.outside, self.settings = fn, named or fn, outside, settings
        self.fullgraph = settings.get("fullgraph", False)
        self.limit = settings.get("recompile_limit") or RECOMPILE_LIMIT
        self.roots = [module] if module is not None else _modules_named_by(fn)
        self.modules: list[Module] = []
        self.recordings: dict[Any, Recording] = {}
        self.latest: Recording | None = None
        self.reason: str | None = None  # why it runs eagerly from now on (None: it replays)
        self.frame: int | None = None  # its number among the process's compiled callables, at its first recording

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        modes = grad_mode.modes
        if (self.reason is not None or modes.recorder is not None or modes.anomaly_enabled or modes.in_backward
                or modes.saved_hooks is not None):
            return self.fn(*args, **kwargs)
        leaves: list[Any] = []
        skeleton = _flatten((args, kwargs), leaves)
        key = self._key(skeleton, leaves, refresh=False)
        rec = self.recordings.get(key)
        if rec is None:
            key = self._key(skeleton, leaves, refresh=True)  # (a module may have gained a child)
            if key is None:
                return self.fn(*args, **kwargs)
            rec = self.recordings.get(key)
            if rec is None:
                if len(self.recordings) >= self.limit:
                    return self.fn(*args, **kwargs)  # (the recordings made keep replaying their keys)
                return self._record(key, skeleton, leaves)
        tensors = [x for x in leaves if isinstance(x, Tensor)]
        if rec.in_use():
            return self.fn(*args, **kwargs)
        if not rec.checked or (rec.seen is not None and not _same_arrays(rec.seen, tensors)):
            return self._check(rec, skeleton, leaves, tensors)
        for b, x in zip(rec.buffers, tensors):
            np.copyto(b, x._array)
        self.latest = rec
        if modes.profiler is None:
            return rec.replay(tensors)
        # inside a profile the replay is one range, named as PyTorch names a compiled call (its ops are no events):
        # the compiled callable's number in this process, then the recording's (PyTorch's frame and compile ids)
        with record_function(f"Torch-Compiled Region: {self.frame}/{list(self.recordings).index(key)}"):
            return rec.replay(tensors)

    def _key(self, skeleton, leaves, refresh):
        if refresh:
            roots = self.roots + [x for x in leaves if isinstance(x, Module)]
            self.modules = list({id(m): m for r in roots for m in r.modules()}.values())
        state = _module_state(self.modules, self.outside)
        if state is None or (refresh and _hooks.any_global_call_hooks()):
            return None
        modes = grad_mode.modes
        return (skeleton, tuple(map(_leaf_key, leaves)), modes.grad_enabled, modes.inference, modes.grad_in_inference,
                _dtype.get_default_dtype(), state)

    # ---- call 1: record ---------------------------------------------------------------------------
    def _record(self, key, skeleton, leaves):
        if self.frame is None:
            self.frame = next(_frames)
        tensors = [x for x in leaves if isinstance(x, Tensor)]
        names = {n: p for r in self.roots for n, p in r.named_parameters()}
        rec = Recording(self.named, names, tensors)
        out, tape, problem = self._run_eagerly(rec, skeleton, leaves)
        rec.tape = [(op, ctx, a, o, o.grad_fn is ctx) for op, ctx, a, o in tape]
        rec.wiring = _wiring(rec.tape, rec.inputs)
        _rewire(rec.wiring, tensors)
        problem = problem or self._describe_outputs(rec, out)
        if problem:
            return self._fail(problem, out, rec, tensors)
        rec.seen = [x._array.copy() for x in tensors]
        rec.order = _backward_order(rec.tape, rec.outputs)
        rec.key, self.recordings[key], self.latest = key, rec, rec
        return rec.hand_out(tensors)

    def _run_eagerly(self, rec, skeleton, leaves):
        """fn on the recording's inputs, recorded: (outputs, tape, why it can't be replayed or None)."""
        modes = grad_mode.modes
        it = iter(rec.inputs)
        args, kwargs = _unflatten(skeleton, [next(it) if isinstance(x, Tensor) else x for x in leaves])
        buffers = [(b, b._version) for m in self.modules for b in m._buffers.values() if b is not None]
        modes.recorder = tape = _Tape()
        try:
            out = self.fn(*args, **kwargs)
        finally:
            modes.recorder = None
        problem = None
        if tape.in_backward or any(op and ctx.inputs is not a for op, ctx, a, o in tape if o.grad_fn is ctx) or any(
                had_none and t._grad is not None for t, _, had_none in tape.seen.values()):
            problem = "it runs a backward pass (only ops are replayed: compile the model, not the training step)"
        elif any(t._version != v for t, v, _ in tape.seen.values()) or any(b._version != v for b, v in buffers):
            problem = ("it changes in place a tensor it did not make (an optimizer's step, a running statistic, an "
                       "in-place op on an input or a parameter)")
        return out, list(tape), problem

    def _describe_outputs(self, rec, out):
        leaves: list[Any] = []
        rec.skeleton = _flatten(out, leaves)
        made = {id(o): i for i, (_, _, _, o, _) in enumerate(rec.tape)}
        mine = {id(b): j for j, b in enumerate(rec.inputs)}
        rec.outputs = []
        for x in leaves:
            if isinstance(x, Tensor):
                if id(x) in made:
                    rec.outputs.append(("tape", made[id(x)]))
                elif id(x) in mine:
                    rec.outputs.append(("input", mine[id(x)]))
                else:
                    return "it returns a tensor not made by one of its ops"
            else:
                rec.outputs.append(("value", x))
        return None

    def _fail(self, problem, out, rec, tensors):
        """Run eagerly from now on; this call's outputs (those of an eager run) are returned as they are,
        but for the recording's own input tensors, which are the caller's."""
        self.reason, self.recordings, self.latest = problem, {}, None
        if self.fullgraph:
            raise RuntimeError(f"compile(fullgraph=True): this call can't be replayed: {problem}")
        return _as_callers(out, rec.inputs, tensors)

    # ---- call 2: check ------------------------------------------------------------------------------
    def _check(self, rec, skeleton, leaves, tensors):
        for b, x in zip(rec.buffers, tensors):
            np.copyto(b, x._array)
        state = _random.get_rng_state()
        rec._forward()
        replayed = [(op, o._array.copy()) for op, _, _, o, _ in rec.tape]
        _random.set_rng_state(state)  # the eager run draws the numbers the replay drew
        eager = Recording(self.named, {}, [])
        eager.inputs, eager.buffers = rec.inputs, rec.buffers
        out, tape, problem = self._run_eagerly(eager, skeleton, leaves)
        eager.tape = [(op, ctx, a, o, o.grad_fn is ctx) for op, ctx, a, o in tape]
        _rewire(_wiring(eager.tape, eager.inputs), tensors)
        problem = problem or self._describe_outputs(eager, out)
        if not problem:
            differs = (_first_difference(replayed, [(op, o._array) for op, _, _, o, _ in eager.tape])
                       or _other_outputs(rec, eager))
            problem = differs and (f"its replay differs from an eager run: {differs} (it reads a value out of the "
                                   "graph, branches on the data, or copies data outside the ops)")
        if problem:
            return self._fail(problem, out, eager, tensors)
        rec.checked, rec.handed = True, []
        if rec.seen is not None and not _same_arrays(rec.seen, tensors):
            rec.seen = None  # checked on other data than the recording's: no more comparisons
        return _as_callers(out, eager.inputs, tensors)

    # ---- for a learner ------------------------------------------------------------------------------
    def program(self) -> str:
        if self.reason is not None:
            return f"(runs eagerly: {self.reason})"
        if self.latest is None:
            return "(nothing recorded yet: call it once)"
        return self.latest.program()


def _same_arrays(arrays, tensors):
    return all(np.array_equal(a, x._array) for a, x in zip(arrays, tensors))


def _other_outputs(rec, eager):
    """Whether the eager run returned what the recording does: the same structure, the same ops' outputs,
    equal values elsewhere."""
    if rec.skeleton != eager.skeleton or len(rec.outputs) != len(eager.outputs):
        return "its outputs are not those of the recording"
    for (kind, v), (kind_now, v_now) in zip(rec.outputs, eager.outputs):
        if kind != kind_now or (kind != "value" and v != v_now) or (kind == "value" and not _same_value(v, v_now)):
            return f"an output differs from the recording's ({v_now!r:.40})"
    return None


def _same_value(a, b):
    try:
        return type(a) is type(b) and bool(np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b)
    except Exception:  # (a value whose == is not a bool: not provably the same)
        return False


def _as_callers(out, inputs, tensors):
    """An eager run's outputs for the caller: the recording's input tensors replaced by the caller's, and
    an output that is a view of one of them given its own memory (the next call's copy would overwrite it)."""
    mine = {id(b): x for b, x in zip(inputs, tensors)}
    leaves: list[Any] = []
    skeleton = _flatten(out, leaves)
    for i, x in enumerate(leaves):
        if isinstance(x, Tensor):
            if id(x) in mine:
                leaves[i] = mine[id(x)]
            elif any(np.may_share_memory(x._array, b._array) for b in inputs):
                x._array = x._array.copy()
    return _unflatten(skeleton, leaves)


# ---- what users hold: a compiled module, a compiled function ----------------------------------------
class OptimizedModule(Module):
    """A compiled module, as PyTorch's `OptimizedModule`: the original is its child `_orig_mod` (so its
    parameters, `state_dict()` keys and repr carry the `_orig_mod.` prefix, as PyTorch's do), `train()` and
    `eval()` reach it, and any other attribute is the original's. Its call replays (see the module's
    docstring); `program()` prints the latest recording."""

    def __init__(self, mod: Module, settings: dict[str, Any]) -> None:
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", Compiled(mod, settings, module=mod, named=mod.forward))

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name.startswith("__") or "_modules" not in self.__dict__ or "_orig_mod" not in self._modules:
                raise
            return getattr(self._modules["_orig_mod"], name)

    def program(self) -> str:
        """The latest recording's ops and the VJPs its backward runs (Replay.program), or why it runs eagerly."""
        return self._compiled.program()

    @property
    def reason(self) -> str | None:
        """Why the module runs eagerly from now on, or None while it replays."""
        return self._compiled.reason

    def __deepcopy__(self, memo: dict[int, Any]) -> OptimizedModule:
        import copy
        return OptimizedModule(copy.deepcopy(self._orig_mod, memo), self._compiled.settings)

    def __reduce__(self):
        return (OptimizedModule, (self._orig_mod, self._compiled.settings))


def compile_replaying(model: Any, settings: dict[str, Any], in_place: bool = False) -> Any:
    """`_runtime.compile`'s slot: a module wrapped in an OptimizedModule, a function in a function of its
    name that replays; `in_place` (Module.compile): the module's own `forward` replaced by a replaying one."""
    if in_place:
        forward = model.__dict__.get("forward")
        forward = forward.__wrapped__ if hasattr(forward, "__replays__") else model.forward
        object.__setattr__(model, "forward", _function(Compiled(forward, settings, module=model, outside=model),
                                                       forward))
        return None
    if isinstance(model, Module):
        return OptimizedModule(model, settings)
    return _function(Compiled(model, settings), model)


def _function(compiled, fn):
    @functools.wraps(fn)
    def replaying(*args: Any, **kwargs: Any) -> Any:
        return compiled(*args, **kwargs)
    replaying.__replays__ = compiled  # type: ignore[attr-defined,unused-ignore]
    replaying.program = compiled.program  # type: ignore[attr-defined,unused-ignore]
    return replaying

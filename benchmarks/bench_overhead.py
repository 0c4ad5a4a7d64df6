"""Per-op overhead: minitensor against the bare numpy call, on tiny arrays.

    python benchmarks/bench_overhead.py            # 15 repeats of 2000 calls per op
    python benchmarks/bench_overhead.py --quick    # 3 repeats of 1000 calls

On arrays of 3 or 4 elements (3x3 for matmul, transpose, x[0] and softmax) the arithmetic costs
next to nothing, so the time of an op is its Python overhead. Each op runs on inputs with
requires_grad=True, so it records a graph node as it does in training, and is timed against the
same numpy expression on the `._array` arrays (relu as np.maximum(a, 0), softmax as the stable
numpy softmax, ...), interleaved so both see the same machine load.

How to read it: the first table's "overhead" column is what minitensor adds per op call, in µs
(median of the repeats), and the median over all ops is the summary. The second table is the same
for forward + backward (`op(x).backward(g)` against numpy's forward and its hand-written VJP),
for information. When PyTorch is installed, the same op on torch tensors (requires_grad=True)
is timed in the same rounds, and its overhead over numpy is shown beside ours; for `x + y` the
summary also prints each library's whole time per op (minitensor's and PyTorch's own), since
PyTorch's kernels are not numpy's. Timings vary with the machine's load; the differences are the result.

Beside `add`, a bare recorded node is timed too (`BareTensor`): `x + y` on objects that only
make an output holding the array and a node holding the two inputs, with nothing checked and
no version counter. An autograd written in Python that makes a node object per op, as
minitensor does, pays at least this on this interpreter and machine; the rest of minitensor's
overhead is everything else (type and dtype checks, type promotion, grad mode, in-place detection).

There is no target: a per-op target of 1 µs was kept for a while and retired, because what it
bought on a training step (22-120 binary ops a step, 5 µs each, against steps of 4-20 ms) was
under 2 % and it cost readability. docs/performance.md has the accounting.
"""
import os
import statistics
import sys

_USER_ENV = dict(os.environ)
# Tiny arrays are fastest on one BLAS thread (set before numpy loads; a value you set wins).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

import minitensor as mt  # noqa: E402
from benchmarks._timing import import_torch, interleaved, report_setup, run_options, table  # noqa: E402


def _softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _index_vjp(g, a):
    ga = np.zeros_like(a)
    ga[0] = g
    return (ga,)


# name, input kind ("vec": 4 elements, "mat": 3x3), inputs, minitensor op, numpy op, numpy VJP(g, out, *inputs)
OPS = [
    ("add", "vec", 2, lambda x, y: x + y, lambda a, b: a + b, lambda g, o, a, b: (g, g)),
    ("sub", "vec", 2, lambda x, y: x - y, lambda a, b: a - b, lambda g, o, a, b: (g, -g)),
    ("mul", "vec", 2, lambda x, y: x * y, lambda a, b: a * b, lambda g, o, a, b: (g * b, g * a)),
    ("mul scalar", "vec", 1, lambda x: x * 2.0, lambda a: a * 2.0, lambda g, o, a: (g * 2.0,)),
    ("div", "vec", 2, lambda x, y: x / y, lambda a, b: a / b, lambda g, o, a, b: (g / b, -(g / b) * o)),
    ("neg", "vec", 1, lambda x: -x, lambda a: -a, lambda g, o, a: (-g,)),
    ("exp", "vec", 1, lambda x: x.exp(), np.exp, lambda g, o, a: (g * o,)),
    ("log", "vec", 1, lambda x: x.log(), np.log, lambda g, o, a: (g / a,)),
    ("tanh", "vec", 1, lambda x: x.tanh(), np.tanh, lambda g, o, a: (g * (1 - o * o),)),
    ("relu", "vec", 1, lambda x: x.relu(), lambda a: np.maximum(a, 0), lambda g, o, a: (g * (a > 0),)),
    ("sigmoid", "vec", 1, lambda x: x.sigmoid(), lambda a: 1 / (1 + np.exp(-a)), lambda g, o, a: (g * o * (1 - o),)),
    ("sum", "vec", 1, lambda x: x.sum(), lambda a: a.sum(), lambda g, o, a: (np.broadcast_to(g, a.shape),)),
    ("mean", "vec", 1, lambda x: x.mean(), lambda a: a.mean(),
     lambda g, o, a: (np.broadcast_to(g / a.size, a.shape),)),
    ("matmul", "mat", 2, lambda x, y: x @ y, lambda a, b: a @ b, lambda g, o, a, b: (g @ b.T, a.T @ g)),
    ("reshape", "vec", 1, lambda x: x.reshape(2, 2), lambda a: a.reshape(2, 2), lambda g, o, a: (g.reshape(a.shape),)),
    ("transpose", "mat", 1, lambda x: x.transpose(0, 1), lambda a: a.T, lambda g, o, a: (g.T,)),
    ("x[0]", "mat", 1, lambda x: x[0], lambda a: a[0], lambda g, o, a: _index_vjp(g, a)),
    ("softmax(-1)", "mat", 1, lambda x: x.softmax(-1), _softmax,
     lambda g, o, a: (o * (g - (g * o).sum(-1, keepdims=True)),)),
]


_PREFIX = {"numpy": "np", "minitensor": "mt", "torch": "torch"}  # the Case methods of each side
_new = object.__new__


class _BareNode:
    __slots__ = ("inputs",)


class BareTensor:
    """The least a Python autograd records for `x + y`: an output object holding the result and
    its node, the node holding the inputs (what backward needs to find them). Nothing is checked
    (types, dtypes, grad mode, requires_grad) and nothing else is kept (versions, hooks, .grad)."""

    __slots__ = ("_array", "grad_fn")

    def __init__(self, data):
        self._array, self.grad_fn = data, None

    def __add__(self, other):
        out = _new(BareTensor)
        out._array = self._array + other._array
        node = _new(_BareNode)
        node.inputs = (self, other)
        out.grad_fn = node
        return out


class Case:
    """One op's inputs (as Tensors and as their `._array` arrays), output gradient and four steps."""

    def __init__(self, op, rng, torch=None):
        self.name, kind, n_in, self.mt_op, self.np_op, self.np_vjp = op
        shape = (4,) if kind == "vec" else (3, 3)
        # positive inputs keep log and div finite; float32 like a model's tensors
        self.tensors = [mt.tensor(rng.random(shape, dtype=np.float32) + 0.5, requires_grad=True)
                        for _ in range(n_in)]
        self.arrays = [t._array for t in self.tensors]
        self.g = np.asarray(rng.standard_normal(np.shape(self.np_op(*self.arrays))), dtype=np.float32)
        self.g_tensor = mt.tensor(self.g)
        if self.name == "add":
            self.bare_tensors = [BareTensor(a) for a in self.arrays]
        if torch is not None:  # the op's code is PyTorch's API, so the same lambda runs on torch tensors
            self.torch_tensors = [torch.tensor(a, requires_grad=True) for a in self.arrays]
            self.g_torch = torch.tensor(self.g)

    def mt_forward(self):
        self.mt_op(*self.tensors)

    def np_forward(self):
        self.np_op(*self.arrays)

    def mt_forward_backward(self):
        self.mt_op(*self.tensors).backward(self.g_tensor)
        for t in self.tensors:
            t.grad = None  # as zero_grad(set_to_none=True) in training, and no accumulation cost

    def bare_forward(self):
        self.mt_op(*self.bare_tensors)

    def torch_forward(self):
        self.mt_op(*self.torch_tensors)

    def torch_forward_backward(self):
        self.mt_op(*self.torch_tensors).backward(self.g_torch)
        for t in self.torch_tensors:
            t.grad = None

    def np_forward_backward(self):
        a = self.arrays
        self.np_vjp(self.g, self.np_op(*a), *a)

    def check(self):
        """Both sides compute the same thing, forward and backward, or the timing means nothing."""
        out = self.mt_op(*self.tensors)
        out.backward(self.g_tensor)
        a = self.arrays
        want = [self.np_op(*a), *self.np_vjp(self.g, self.np_op(*a), *a)]
        got = [out._array] + [t.grad._array for t in self.tensors]
        for t in self.tensors:
            t.grad = None
        if hasattr(self, "torch_tensors"):
            out = self.mt_op(*self.torch_tensors)
            out.backward(self.g_torch)
            got += [out.detach().numpy()] + [t.grad.numpy() for t in self.torch_tensors]
            want = want * 2
            for t in self.torch_tensors:
                t.grad = None
        if hasattr(self, "bare_tensors"):
            got.append(self.mt_op(*self.bare_tensors)._array)
            want.append(want[0])
        for w, g in zip(want, got):
            if not np.allclose(w, g, rtol=1e-5, atol=1e-6):
                raise SystemExit(f"bench_overhead: {self.name}: a framework and numpy disagree: {g} vs {w}")


def main(argv=None):
    repeats, number = run_options(argv, __doc__, full=(15, 2000), quick=(3, 1000), smoke=(1, 2))

    report_setup(mt)
    torch = import_torch(_USER_ENV)
    print(f"{repeats} interleaved repeats of {number} calls per op; medians, in µs per call\n")
    rng = np.random.default_rng(0)
    cases = [Case(op, rng, torch) for op in OPS]
    sides = ("numpy", "minitensor") + (("torch",) if torch is not None else ())
    for case in cases:
        case.check()

    def timed(step):
        steps = {}
        for case in cases:  # each op's numpy, minitensor (and torch) blocks back to back
            for side in sides:
                steps[case.name, side] = getattr(case, f"{_PREFIX[side]}_{step}")
            if step == "forward" and hasattr(case, "bare_tensors"):
                steps[case.name, "bare"] = case.bare_forward
        t = interleaved(steps, repeats, number)
        if step == "forward":
            bare["add"] = (t["add", "bare"] - t["add", "numpy"]) * 1e6
        return {c.name: [t[c.name, side] * 1e6 for side in sides] for c in cases}

    results, torch_results, bare, add_times = {}, {}, {}, {}
    for title, step in (("forward", "forward"), ("forward + backward", "forward_backward")):
        times = timed(step)
        add_times[title] = times["add"]
        overhead = {name: ts[1] - ts[0] for name, ts in times.items()}
        headers = ["op", "numpy µs", "minitensor µs", "overhead µs"]
        rows = [[name, ts[0], ts[1], overhead[name]] for name, ts in times.items()]
        if torch is not None:
            torch_results[title] = {name: ts[2] - ts[0] for name, ts in times.items()}
            headers += ["torch µs", "torch overhead µs"]
            rows = [row + [times[row[0]][2], torch_results[title][row[0]]] for row in rows]
        print(f"== {title}: minitensor (requires_grad=True) against numpy on the ._array arrays ==")
        table(headers, rows)
        results[title] = overhead
        print(f"median {title} overhead over {len(overhead)} ops: {statistics.median(overhead.values()):.3f} µs"
              + (f" (PyTorch: {statistics.median(torch_results[title].values()):.3f} µs)" if torch else "") + "\n")

    fwd = results["forward"]
    worst = max(fwd, key=fwd.get)
    print("== summary (information; no target, see the docstring) ==")
    print(f"info  median forward overhead per op: {statistics.median(fwd.values()):.3f} µs")
    print(f"info  a bare recorded node (see the docstring) adds {bare['add']:.3f} µs to numpy's add in this run; "
          f"minitensor's add adds {fwd['add']:.3f} µs")
    print(f"info  worst forward overhead: {worst} {fwd[worst]:.3f} µs; "
          f"median forward + backward overhead: {statistics.median(results['forward + backward'].values()):.3f} µs")
    for title, ts in add_times.items():  # the whole time of one op, each library's own, not over numpy
        print(f"info  x + y per op, {title}: minitensor {ts[1]:.3f} µs"
              + (f", PyTorch {ts[2]:.3f} µs (ratio {ts[1] / ts[2]:.2f})" if torch is not None else ""))
    if torch is not None:  # the machine's speed drifts 2x: a ratio from the same run says more than µs
        for title in ("forward", "forward + backward"):
            ratio = statistics.median(results[title].values()) / statistics.median(torch_results[title].values())
            print(f"info  median {title} overhead / PyTorch's in the same run: {ratio:.2f}")


if __name__ == "__main__":
    main()

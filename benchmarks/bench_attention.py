"""Causal attention forward + backward: minitensor against a hand-written numpy floor.

    python benchmarks/bench_attention.py              # T = 16, 64, 256; 15 interleaved repeats
    python benchmarks/bench_attention.py --quick      # 3 repeats (well under a minute)
    python benchmarks/bench_attention.py --layers     # also the composed-vs-fused cases of docs/attention.md

Q, K, V of shape (8, 4, T, 32) float32, causal. minitensor runs
`out, _ = attention.scaled_dot_product_attention(q, k, v, is_causal=True, fused=True, need_weights=False)`
and `out.backward(g)`: the output and the gradients of Q, K and V, what the floor and PyTorch's
`scaled_dot_product_attention` compute (on the fused path, which a fast caller asks for: one
node). For information it also runs the fused call that returns the weights too, as a tensor of
the graph with a node of their own ("+ weights"), and the composed path (`fused=False`, the
default, one node per step). The floor is the same
math written directly in numpy, forward and backward, in place and in float32: what any
framework on numpy pays for the arithmetic alone. Its results are checked against minitensor's
before anything is timed. PyTorch's fused `scaled_dot_product_attention` runs too when it is
installed, on 1 thread and on its default count, for information.

How to read it: every contender is timed in the same run, interleaved (A B A B ...), and the
median of the repeats is reported. The ratios "x floor" are what matters (the machine's speed
drifts, so milliseconds from different runs don't compare): each is the median over the rounds
of the contender's time over the floor's in the same round, and below the table the quartiles
of minitensor's per-round ratios show how much they spread. The target is the output-only call
("minitensor") at most 1.2x the floor from T = 64 on. At T = 16 one call is about 0.1 ms of
arithmetic, so the ratio there measures per-call overhead; it is printed for information (a
training step's share of it is measured by bench_train.py, which is what counts).
"""
import argparse
import math
import os
import sys

_USER_ENV = dict(os.environ)  # before the pins below: PyTorch gets its own default thread count back
# Each matrix here is small: one BLAS thread is fastest (set before numpy loads; a value you set wins).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

import attention  # noqa: E402
import attention.fast  # noqa: E402,F401  (the fused attention's numpy backwards: a speed user)
import minitensor as mt  # noqa: E402
from benchmarks._timing import import_torch, interleaved, report_setup, round_ratios, table, verdict  # noqa: E402

B, H, D = 8, 4, 32
TARGET = 1.2  # minitensor / numpy floor, from T = 64 on
TARGET_FROM_T = 64  # at T = 16 a call is ~0.1 ms of arithmetic: the ratio is per-call overhead, shown for information
SETTLE = 0.3  # seconds of rest before the floor's block when PyTorch runs (see main)
# calls per timed block: a block of a few tens of ms at each T on this machine
NUMBER = {16: 40, 64: 10, 256: 2}


# The floor calls numpy as minitensor's fused node does (einsum for the row sums, public calls only),
# so the comparison is of what each adds, not of how numpy is called.


def numpy_floor(q, k, v, g, bias, scale):
    """Causal attention forward and backward in plain numpy: returns O, dQ, dK, dV.

    `bias` is the (T, T) causal mask as 0 / -inf, made once. The scale c enters twice (S = c Q K^T,
    and dQ, dK = c dS K, c dS^T Q); it goes onto the smaller operand, as minitensor's fused node
    does: Q (T x d) when T > d, which also makes dK = dS^T (c Q) with no extra pass, else S and dS
    (T x T)."""
    on_q = q.shape[-2] > q.shape[-1]
    qs = q * scale if on_q else q
    s = qs @ k.swapaxes(-1, -2)                           # S = c Q K^T              (B, H, T, T)
    if not on_q:
        s *= scale
    s += bias                                              # -inf above the diagonal
    s -= s.max(axis=-1, keepdims=True)                     # softmax, in place: P = exp(S - max) / rowsum
    p = np.exp(s, out=s)
    p /= np.einsum("...j->...", p)[..., None]                # einsum: far faster than .sum(-1) on short rows
    o = p @ v                                              # O = P V                  (B, H, T, d)
    dv = p.swapaxes(-1, -2) @ g                            # dV = P^T dO
    dp = g @ v.swapaxes(-1, -2)                            # dP = dO V^T
    dp -= np.einsum("...j,...j->...", dp, p)[..., None]      # dS = P * (dP - rowsum(dP * P))
    ds = np.multiply(dp, p, out=dp)
    if not on_q:
        ds *= scale
    dq = ds @ k                                            # dQ = c dS K
    if on_q:
        dq *= scale
    dk = ds.swapaxes(-1, -2) @ qs                          # dK = c dS^T Q
    return o, dq, dk, dv


class Case:
    """One T: the inputs in each library and a step for every contender."""

    def __init__(self, T, torch):
        rng = np.random.default_rng(T)
        q, k, v, g = (rng.standard_normal((B, H, T, D), dtype=np.float32) for _ in range(4))
        self.T, self.scale = T, 1.0 / math.sqrt(D)  # a Python float: float32 stays float32
        self.arrays = q, k, v, g
        self.bias = np.triu(np.full((T, T), -np.inf, dtype=np.float32), 1)
        self.qkv = [mt.tensor(a, requires_grad=True) for a in (q, k, v)]
        self.g = mt.tensor(g)
        if torch is not None:
            self.torch_qkv = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
            self.torch_g = torch.tensor(g)
            self.torch_sdpa = torch.nn.functional.scaled_dot_product_attention

    def floor(self):
        return numpy_floor(*self.arrays, self.bias, self.scale)

    def minitensor(self, fused=True, need_weights=False, results=None):
        """Forward, backward, then the gradients dropped as zero_grad(set_to_none=True) does (no
        accumulation in the timing); `results`, a list, receives O, dQ, dK and dV first."""
        out, _ = attention.scaled_dot_product_attention(*self.qkv, is_causal=True, fused=fused,
                                                        need_weights=need_weights)
        out.backward(self.g)
        if results is not None:
            results += [out._array] + [t.grad._array for t in self.qkv]
        for t in self.qkv:
            t.grad = None

    def with_weights(self, results=None):
        self.minitensor(need_weights=True, results=results)

    def composed(self, results=None):
        self.minitensor(fused=False, results=results)

    def torch(self):
        out = self.torch_sdpa(*self.torch_qkv, is_causal=True)
        out.backward(self.torch_g)
        for t in self.torch_qkv:
            t.grad = None

    def check(self):
        """Stop unless the floor computes what minitensor computes (on both of its paths)."""
        want = self.floor()
        if any(a.dtype != np.float32 for a in want):  # a float64 floor would be a slow floor
            raise SystemExit(f"bench_attention: the numpy floor left float32: {[a.dtype for a in want]}")
        for path, step in (("output-only", self.minitensor), ("+ weights", self.with_weights),
                           ("composed", self.composed)):
            got = []
            step(results=got)
            if len(got) != len(want):
                raise SystemExit(f"bench_attention: the {path} path gave {len(got)} results, not {len(want)}")
            for name, w, x in zip(("O", "dQ", "dK", "dV"), want, got):
                if not np.allclose(x, w, rtol=1e-4, atol=1e-5):
                    raise SystemExit(f"bench_attention: T={self.T}: the numpy floor's {name} differs from "
                                     f"minitensor's ({path} path) by up to {np.abs(x - w).max():.3g}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats, half-size blocks (well under a minute)")
    parser.add_argument("--repeats", type=int, help="interleaved repeats (default 15, --quick 3)")
    parser.add_argument("--number", type=int, help="calls per timed block (default: by T, a few tens of ms of work)")
    parser.add_argument("--T", type=int, nargs="+", default=[16, 64, 256], help="sequence lengths")
    parser.add_argument("--layers", action="store_true", help="also time composed vs fused layers (docs/attention.md)")
    parser.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)  # the test suite's tiny run
    args = parser.parse_args(argv)
    if args.smoke:
        args.T, args.repeats, args.number = args.T[:1], args.repeats or 1, args.number or 1
    repeats = args.repeats or (3 if args.quick else 15)

    report_setup(mt)
    torch = import_torch(_USER_ENV)
    threads = torch.get_num_threads() if torch is not None else None
    print(f"Q, K, V: ({B}, {H}, T, {D}) float32, causal, forward + backward; \"minitensor\": fused=True, "
          "need_weights=False; \"+ weights\": fused=True; \"composed\": fused=False (the default)")
    if torch is not None:
        print(f"PyTorch {torch.__version__}: 1 thread and its default of {threads}")
    print(f"{repeats} interleaved repeats; medians in ms\n")

    cases = [Case(T, torch) for T in args.T]
    for case in cases:
        case.check()

    rows, ratios, spreads = [], {}, []
    for case in cases:
        steps = {"floor": case.floor, "minitensor": case.minitensor, "+ weights": case.with_weights,
                 "composed": case.composed}
        number = args.number or max(1, NUMBER.get(case.T, 1) // (2 if args.quick else 1))
        before = {}
        if torch is not None:
            steps["torch 1t"], before["torch 1t"] = case.torch, lambda: torch.set_num_threads(1)
            steps["torch Nt"], before["torch Nt"] = case.torch, lambda: torch.set_num_threads(threads)
        # PyTorch's worker threads keep spinning a while after its multi-threaded block, and the
        # floor's block comes next in each round: without a rest they slowed the floor (0.29
        # instead of 0.21 ms at T=16, in some runs), which flattered every "x floor".
        settle = {"floor": SETTLE} if torch is not None else 0.0
        rounds = {}
        t = interleaved(steps, repeats, number, before=before, settle=settle, rounds=rounds)
        ratio, low, high = round_ratios(rounds, "minitensor", "floor")
        ratios[case.T] = ratio
        spreads.append(f"T={case.T}: minitensor / floor per round {ratio:.3f} (quartiles {low:.3f}-{high:.3f}); "
                       f"ratio of the medians {t['minitensor'] / t['floor']:.3f}")
        row = [str(case.T), t["floor"] * 1e3]
        for name in ("minitensor", "+ weights", "composed", "torch 1t", "torch Nt"):
            row += [t[name] * 1e3, round_ratios(rounds, name, "floor")[0]] if name in t else ["-", "-"]
        rows.append(row)
    if torch is not None:
        torch.set_num_threads(threads)
    table(["T", "floor ms", "minitensor ms", "x floor", "+ weights ms", "x floor", "composed ms", "x floor",
           "torch 1t ms", "x floor", f"torch {threads or 'N'}t ms", "x floor"], rows)
    print("\n".join(["", *spreads, ""]))

    if args.layers:
        composed_vs_fused(repeats, 1 if args.smoke else 5)

    print("== targets ==")
    for T, ratio in ratios.items():
        if T >= TARGET_FROM_T:
            verdict(f"minitensor / numpy floor at T={T}", ratio, TARGET, "x")
        else:
            print(f"info  minitensor / numpy floor at T={T}: {ratio:.3f}x (no target: "
                  "per-call overhead, not arithmetic)")


# ---- composed vs fused, as measured in docs/attention.md ----------------------------------------

def composed_vs_fused(repeats, number):
    print("== composed vs fused (ratio = composed / fused; above 1 means fused is faster) ==")
    rows = []
    for B_, H_, T, d in ((64, 3, 12, 16), (16, 4, 64, 16)):
        for dtype in (mt.float32, mt.float64):
            for mask_kind in ("none", "causal", "padding"):
                if (T > 12 or dtype == mt.float64) and mask_kind == "padding":
                    continue
                t = interleaved(function_steps(B_, H_, T, d, dtype, mask_kind), repeats, number)
                rows.append([f"sdpa B={B_} H={H_} T={T} d={d} {dtype} mask={mask_kind}",
                             t[False] * 1e3, t[True] * 1e3, t[False] / t[True]])
    for kind in ("MultiHeadAttention", "TransformerBlock"):
        for B_, T, d_model, H_ in ((64, 12, 48, 3), (16, 64, 64, 4)):
            t = interleaved(layer_steps(kind, B_, T, d_model, H_), repeats, number)
            rows.append([f"{kind} B={B_} T={T} d_model={d_model} H={H_} float32",
                         t[False] * 1e3, t[True] * 1e3, t[False] / t[True]])
    table(["case", "composed ms", "fused ms", "ratio"], rows)


def function_steps(B_, H_, T, d, dtype, mask_kind):
    mt.manual_seed(0)
    q, k, v = (mt.randn(B_, H_, T, d, dtype=dtype, requires_grad=True) for _ in range(3))
    g = mt.randn(B_, H_, T, d, dtype=dtype)
    mask = {"none": None, "causal": attention.causal_mask(T),
            "padding": attention.padding_mask([T - i % 3 for i in range(B_)], T)}[mask_kind]

    def step(fused):
        def run():
            out, _ = attention.scaled_dot_product_attention(q, k, v, mask=mask, fused=fused)
            out.backward(g)
        return run

    return {False: step(False), True: step(True)}


def layer_steps(kind, B_, T, d_model, H_):
    layers = {}
    for fused in (False, True):
        mt.manual_seed(0)  # the same weights for both
        if kind == "MultiHeadAttention":
            layers[fused] = attention.MultiHeadAttention(d_model, H_, fused=fused)
        else:
            layers[fused] = attention.TransformerBlock(d_model, H_, causal=True, fused=fused)
    x = mt.randn(B_, T, d_model, requires_grad=True)
    g = mt.randn(B_, T, d_model)
    mask = attention.causal_mask(T)

    def step(fused):
        layer = layers[fused]

        def run():
            out = layer(x, mask=mask) if kind == "MultiHeadAttention" else layer(x)
            out = out[0] if isinstance(out, tuple) else out
            out.backward(g)
        return run

    return {False: step(False), True: step(True)}


if __name__ == "__main__":
    main()

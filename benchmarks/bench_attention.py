"""Composed vs fused scaled-dot-product attention: forward + backward time, and the ratio.

    python benchmarks/bench_attention.py            # the default cases (about a minute)
    python benchmarks/bench_attention.py --quick    # fewer repeats

Each case times `out, w = f(...); out.backward(g)` (the best of several interleaved runs, after a warm-up)
for the function alone, for a MultiHeadAttention layer and for a TransformerBlock. A ratio above 1
means the fused path is faster. Timings, not tests: they depend on the machine and its load.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import minitensor as mt  # noqa: E402

import attention  # noqa: E402


def _best_times(steps, repeats, number):
    """The fastest of `repeats` runs of each step, the steps interleaved so both see the same
    machine load (the minimum is the least disturbed estimate on a busy machine)."""
    for step in steps:
        step()  # warm-up
    best = [float("inf")] * len(steps)
    for _ in range(repeats):
        for i, step in enumerate(steps):
            t0 = time.perf_counter()
            for _ in range(number):
                step()
            best[i] = min(best[i], (time.perf_counter() - t0) / number)
    return best


def bench_function(B, H, T, d, dtype, mask_kind, repeats, number):
    mt.manual_seed(0)
    q, k, v = (mt.randn(B, H, T, d, dtype=dtype, requires_grad=True) for _ in range(3))
    g = mt.randn(B, H, T, d, dtype=dtype)
    mask = {"none": None, "causal": attention.causal_mask(T),
            "padding": attention.padding_mask([T - i % 3 for i in range(B)], T)}[mask_kind]

    def step(fused):
        def run():
            out, _ = attention.scaled_dot_product_attention(q, k, v, mask=mask, fused=fused)
            out.backward(g)
        return run

    return _best_times([step(False), step(True)], repeats, number)


def bench_layer(kind, B, T, d_model, H, dtype, repeats, number):
    mt.manual_seed(0)
    if kind == "MultiHeadAttention":
        layer = attention.MultiHeadAttention(d_model, H)
    else:
        layer = attention.TransformerBlock(d_model, H, causal=True)
    layer.to(dtype)
    x = mt.randn(B, T, d_model, dtype=dtype, requires_grad=True)
    g = mt.randn(B, T, d_model, dtype=dtype)
    mask = attention.causal_mask(T)

    def step(fused):
        def run():
            with attention.set_fused_enabled(fused):
                out = layer(x, mask=mask) if kind == "MultiHeadAttention" else layer(x)
            out = out[0] if isinstance(out, tuple) else out
            out.backward(g)
        return run

    return _best_times([step(False), step(True)], repeats, number)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args(argv)
    repeats, number = (3, 5) if args.quick else (15, 5)

    print(f"{'case':58s} {'composed':>10s} {'fused':>10s} {'ratio':>6s}")

    def report(name, composed, fused):
        print(f"{name:58s} {composed * 1e3:8.3f}ms {fused * 1e3:8.3f}ms {composed / fused:6.2f}", flush=True)

    for B, H, T, d in ((64, 3, 12, 16), (16, 4, 64, 16)):
        for dtype in (mt.float32, mt.float64):
            for mask_kind in ("none", "causal", "padding"):
                if (T > 12 or dtype == mt.float64) and mask_kind == "padding":
                    continue
                report(f"sdpa B={B} H={H} T={T} d={d} {dtype} mask={mask_kind}",
                       *bench_function(B, H, T, d, dtype, mask_kind, repeats, number))
    for kind in ("MultiHeadAttention", "TransformerBlock"):
        for B, T, d_model, H in ((64, 12, 48, 3), (16, 64, 64, 4)):
            report(f"{kind} B={B} T={T} d_model={d_model} H={H} float32",
                   *bench_layer(kind, B, T, d_model, H, mt.float32, repeats, number))

if __name__ == "__main__":
    main()

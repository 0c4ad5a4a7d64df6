r"""The "Illustrated: Self-Attention" worked example, forward and backward, with minitensor.

    attention-walkthrough                   # the walk-through (a few seconds at most)
    attention-walkthrough --explain         # ... plus autograd's own node-by-node report
    attention-walkthrough --dot graph.dot   # ... and the graph as Graphviz text
    attention-walkthrough --svg graph.svg   # ... or as a picture (no Graphviz needed), top to bottom

(`python -m attention.walkthrough` and `python examples/illustrated_self_attention.py` run the same.)

Forward: 3 inputs of size 4, key/query/value weights of shape 4x3, scores without the 1/sqrt(d_k)
scale (as in the tutorial), a row softmax, the weighted values and their sums, printed with the
tutorial's figures.

Backward: for a loss on the outputs, the gradient at every step back to W_query, W_key and
W_value, each printed with the formula that produced it, computed three ways that must agree:
  1. by the formula, in plain numpy (what you would write on paper);
  2. by minitensor's autograd (`.retain_grad()` on every intermediate, then `loss.backward()`);
  3. by central finite differences of the loss, in an independent numpy forward pass.
The script exits with status 1 if any of them disagree, so it doubles as a test.
"""
import argparse
import os
import sys

import numpy as np

import minitensor as torch  # named as the tutorial names it: the same lines run on PyTorch
import minitensor.nn.functional as F
from minitensor.autograd import explain, gradcheck

# ---- the tutorial's numbers -----------------------------------------------------------------------
X = [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]]
W_KEY = [[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]]
W_QUERY = [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]]
W_VALUE = [[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]]
TUTORIAL = {
    "keys": [[0, 1, 1], [4, 4, 0], [2, 3, 1]],
    "queries": [[1, 0, 2], [2, 2, 2], [2, 1, 3]],
    "values": [[1, 2, 3], [2, 8, 0], [2, 6, 3]],
    "scores": [[2, 4, 4], [4, 16, 12], [4, 12, 10]],
    "softmax (rounded)": [[0.0, 0.5, 0.5], [0.0, 1.0, 0.0], [0.0, 0.9, 0.1]],
    "outputs (from the rounded softmax)": [[2.0, 7.0, 1.5], [2.0, 8.0, 0.0], [2.0, 7.8, 0.3]],
}
# The loss weights: fixed, "random-looking", and given here so the printout is reproducible.
LOSS_WEIGHTS = np.round(np.random.default_rng(2019).standard_normal((3, 3)), 1)

EPS = 1e-6  # central differences in float64: error ~ eps^2 * f''' + 1e-16 / eps, about 1e-10 here
TOL = 1e-6

failures: list[str] = []


# ---- printing ---------------------------------------------------------------------------------------
def fmt(a, decimals=4):
    """A matrix as aligned text: integers print as integers, everything else with `decimals` places."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 1:
        a = a[None, :]
    integral = np.all(a == np.round(a))
    cells = [[f"{v:.0f}" if integral else f"{v:.{decimals}f}" for v in row] for row in a.reshape(-1, a.shape[-1])]
    cells = [[c if c not in ("-0", "-0." + "0" * decimals) else c[1:] for c in row] for row in cells]
    width = max(len(c) for row in cells for c in row)
    return "\n".join("    [ " + "  ".join(c.rjust(width) for c in row) + " ]" for row in cells)


def show(name, a, decimals=4, note=""):
    shape = tuple(np.shape(a))
    print(f"  {name}  {shape}{'   ' + note if note else ''}")
    print(fmt(a, decimals))


def heading(text):
    print()
    print(text)
    print("-" * len(text))


def agree(label, a, b, tol=TOL):
    err = float(np.max(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))))
    ok = err <= tol
    if not ok:
        failures.append(f"{label}: max |difference| {err:.3g} > {tol:g}")
    return err, ok


# ---- an independent numpy forward pass (for finite differences) --------------------------------------
def np_softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_loss(w_query, w_key, w_value, replace=None):
    """The loss, recomputed in numpy; `replace={'scores': S}` substitutes an intermediate."""
    r = replace or {}
    x = np.array(X, dtype=np.float64)
    keys = r.get("keys", x @ w_key)
    queries = r.get("queries", x @ w_query)
    values = r.get("values", x @ w_value)
    scores = r.get("scores", queries @ keys.T)
    p = r.get("softmax", np_softmax(scores))
    outputs = r.get("outputs", p @ values)
    return float(np.sum(outputs * LOSS_WEIGHTS))


def numeric_grad(f, at):
    """Central differences of the scalar function f at the array `at` (one element at a time)."""
    at = np.array(at, dtype=np.float64)
    grad = np.zeros_like(at)
    for idx in np.ndindex(at.shape):
        plus, minus = at.copy(), at.copy()
        plus[idx] += EPS
        minus[idx] -= EPS
        grad[idx] = (f(plus) - f(minus)) / (2 * EPS)
    return grad


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m attention.walkthrough" if sys.argv[0].endswith("walkthrough.py") else None,
        description=__doc__.split("\n")[0])
    parser.add_argument("--explain", action="store_true", help="also print autograd.explain(loss)")
    parser.add_argument("--dot", metavar="PATH", help="write the autograd graph as Graphviz DOT text")
    parser.add_argument("--svg", metavar="PATH",
                        help="write the autograd graph as an SVG picture with values and gradients (no Graphviz)")
    args = parser.parse_args(argv)
    for option, path in (("--dot", args.dot), ("--svg", args.svg)):
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            parser.error(f"argument {option}: no folder "
                         f"{os.path.dirname(os.path.abspath(path))!r} to write {path!r} in")
    np.set_printoptions(suppress=True)
    failures.clear()  # main() may run more than once in one process (tests, a notebook)

    print("Illustrated self-attention with minitensor: forward, then backward, every step checked")
    print("=" * 86)

    # ---- forward ------------------------------------------------------------------------------------
    heading("Step 1. Three inputs of size 4 (one per row)")
    x = torch.tensor(X, dtype=torch.float64)  # (3, 4)
    show("x", x)

    heading("Step 2. Weights for keys, queries and values, each 4x3 (learnable: requires_grad=True)")
    w_key = torch.tensor(W_KEY, dtype=torch.float64, requires_grad=True)  # (4, 3)
    w_query = torch.tensor(W_QUERY, dtype=torch.float64, requires_grad=True)  # (4, 3)
    w_value = torch.tensor(W_VALUE, dtype=torch.float64, requires_grad=True)  # (4, 3)
    show("w_key", w_key)
    show("w_query", w_query)
    show("w_value", w_value)

    heading("Step 3. Keys, queries and values: each input times each weight matrix")
    keys = x @ w_key  # (3, 3)
    queries = x @ w_query  # (3, 3)
    values = x @ w_value  # (3, 3)
    show("keys = x @ w_key", keys)
    show("queries = x @ w_query", queries)
    show("values = x @ w_value", values)

    heading("Step 4. Attention scores: every query dotted with every key")
    scores = queries @ keys.T  # (3, 3): scores[i, j] = queries[i] . keys[j]
    show("scores = queries @ keys.T", scores, note="(the tutorial uses no 1/sqrt(d_k) scale)")

    heading("Step 5. Softmax of each row of scores")
    p = F.softmax(scores, dim=-1)  # (3, 3), each row sums to 1
    show("softmax(scores, dim=-1), exact", p)
    show("softmax as rounded in the tutorial", TUTORIAL["softmax (rounded)"], decimals=1,
         note="(used only to reproduce its figures below)")

    heading("Step 6. Weighted values: each value scaled by the softmax weight it gets from each query")
    weighted = values[:, None] * p.T[:, :, None]  # (3, 3, 3): weighted[j, i] = p[i, j] * values[j]
    for j in range(3):
        show(f"weighted[{j}] = p[:, {j}] * values[{j}]   (row i: what input {j} contributes to output i)",
             weighted[j].detach().numpy())

    heading("Step 7. Outputs: sum the weighted values over the inputs j")
    outputs = weighted.sum(dim=0)  # (3, 3): outputs[i] = sum_j p[i, j] * values[j]  (= p @ values)
    show("outputs = weighted.sum(dim=0), exact softmax", outputs)
    rounded = np.array(TUTORIAL["softmax (rounded)"]) @ values.detach().numpy()
    show("outputs with the tutorial's rounded softmax", rounded, decimals=1, note="(the tutorial's figures)")

    for name, value in [("keys", keys), ("queries", queries), ("values", values), ("scores", scores),
                        ("outputs (from the rounded softmax)", rounded)]:
        agree(f"forward: {name} vs the tutorial", np.asarray(value), TUTORIAL[name], tol=1e-9)
    # The tutorial rounds loosely (0.0634 shows as 0.0), so its softmax is only within 0.07 of the exact one.
    err, _ = agree("forward: exact softmax vs the tutorial's rounded one", p.detach().numpy(),
                   TUTORIAL["softmax (rounded)"], tol=0.07)
    print(f"\n  The tutorial's softmax is a rough rounding (0.0634 shows as 0.0): it is within {err:.4f} of the\n"
          "  exact one. Its outputs above follow from the rounded weights; everything below uses the exact ones.")

    # ---- backward -----------------------------------------------------------------------------------
    for t in (keys, queries, values, scores, p, weighted, outputs):
        t.retain_grad()  # keep the gradient of every intermediate, to compare with the formulas
    G = torch.tensor(LOSS_WEIGHTS)
    loss = (outputs * G).sum()

    heading("Backward. The loss: L = sum(outputs * G), with G a fixed random 3x3 matrix")
    show("G", LOSS_WEIGHTS, decimals=1)
    print(f"  L = {loss.item():.6f}")
    print(
        "  Why not simply L = sum(outputs)? Then dL/d(outputs) would be all ones: every row and every\n"
        "  column of the upstream gradient alike, so a backward that transposes a matrix or mixes up\n"
        "  rows gives the same numbers and the bug hides. (For a softmax alone it is worse: each row\n"
        "  sums to 1, so d sum(softmax)/d scores is exactly zero whatever the backward does.)\n"
        "  Random weights make every element of the gradient different."
    )
    loss.backward(retain_graph=True)  # kept for --explain, which runs the backward pass once more

    o = outputs.detach().numpy()
    P, V = p.detach().numpy(), values.detach().numpy()
    Q, K = queries.detach().numpy(), keys.detach().numpy()
    xn = x.numpy()
    wq, wk, wv = (w.detach().numpy() for w in (w_query, w_key, w_value))

    def step(title, formula, name, by_formula, by_autograd, numeric_of):
        heading(title)
        print(f"  {formula}")
        show(name, by_formula)
        e1, ok1 = agree(f"{name}: formula vs autograd", by_formula, by_autograd)
        by_numeric = numeric_of()
        e2, ok2 = agree(f"{name}: formula vs finite differences", by_formula, by_numeric)
        verdict = "OK" if ok1 and ok2 else "MISMATCH"
        print(f"  check: formula vs autograd max |diff| = {e1:.1e};  vs finite differences = {e2:.1e}   {verdict}")

    def fd(intermediate, value):
        return lambda: numeric_grad(lambda v: np_loss(wq, wk, wv, replace={intermediate: v}), value)

    dO = LOSS_WEIGHTS
    step("B1. Gradient at the outputs", "dL/d outputs = G   (L = sum(outputs * G) is linear in outputs)",
         "d outputs", dO, outputs.grad.numpy(), fd("outputs", o))

    print(
        "\n  Steps 6 and 7 together are one matrix product: outputs[i] = sum_j p[i, j] values[j], i.e.\n"
        "  outputs = p @ values. Its backward, written with the same indices:"
    )
    dP = dO @ V.T
    step("B2. Through the weighted sum, to the softmax weights",
         "dP = dO @ values^T        (dP[i, j] = sum_k dO[i, k] values[j, k])",
         "d softmax", dP, p.grad.numpy(), fd("softmax", P))
    dV = P.T @ dO
    step("B3. Through the weighted sum, to the values",
         "dV = P^T @ dO             (values[j] feeds every output i, weighted by P[i, j])",
         "d values", dV, values.grad.numpy(), fd("values", V))

    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    step("B4. Through the softmax, to the scores",
         "dS = P ⊙ (dP − rowsum(dP ⊙ P))   (the Jacobian dp_i/ds_j = p_i (δ_ij − p_j) applied to dP)",
         "d scores", dS, scores.grad.numpy(), fd("scores", scores.detach().numpy()))
    print("  Each row of dS sums to 0 (adding a constant to a row of scores leaves its softmax unchanged):")
    show("rowsum(dS)", np.abs(np.round(dS.sum(axis=-1), 12)))

    dQ = dS @ K
    step("B5. Through scores = queries @ keys^T, to the queries",
         "dQ = dS @ keys            (scores[i, j] = queries[i] . keys[j])",
         "d queries", dQ, queries.grad.numpy(), fd("queries", Q))
    dK = dS.T @ Q
    step("B6. ... and to the keys",
         "dK = dS^T @ queries",
         "d keys", dK, keys.grad.numpy(), fd("keys", K))

    step("B7. To W_query", "dW_query = x^T @ dQ", "d w_query", xn.T @ dQ, w_query.grad.numpy(),
         lambda: numeric_grad(lambda w: np_loss(w, wk, wv), wq))
    print("  Rows 0 and 2 of every dW are equal: columns 0 and 2 of x are equal, so those two weights\n"
          "  always see the same input and get the same gradient.")
    step("B8. To W_key", "dW_key = x^T @ dK", "d w_key", xn.T @ dK, w_key.grad.numpy(),
         lambda: numeric_grad(lambda w: np_loss(wq, w, wv), wk))
    step("B9. To W_value", "dW_value = x^T @ dV", "d w_value", xn.T @ dV, w_value.grad.numpy(),
         lambda: numeric_grad(lambda w: np_loss(wq, wk, w), wv))

    heading("B10. minitensor.autograd.gradcheck on the whole layer (random upstream weights, float64)")

    def layer(wq_, wk_, wv_):
        s = (x @ wq_) @ (x @ wk_).T
        return F.softmax(s, dim=-1) @ (x @ wv_)

    try:
        gradcheck(layer, (w_query.detach().requires_grad_(), w_key.detach().requires_grad_(),
                          w_value.detach().requires_grad_()))
        print("  gradcheck: OK for w_query, w_key and w_value")
    except Exception as e:  # noqa: BLE001 (the message is the report)
        failures.append(f"gradcheck: {e}")
        print(f"  gradcheck FAILED: {e}")

    _optional_attention_module(x, outputs.detach().numpy(), {
        "w_query": w_query.grad.numpy(), "w_key": w_key.grad.numpy(), "w_value": w_value.grad.numpy()})

    if args.explain:
        heading("autograd.explain(loss): the same backward pass, node by node, as autograd ran it")
        print(explain(loss, names=dict(x=x, w_key=w_key, w_query=w_query, w_value=w_value, keys=keys,
                                       queries=queries, values=values, scores=scores, p=p,
                                       weighted=weighted, outputs=outputs, loss=loss)))
    names = dict(w_key=w_key, w_query=w_query, w_value=w_value, keys=keys, queries=queries, values=values,
                 scores=scores, p=p, outputs=outputs, loss=loss)
    if args.dot:
        from minitensor.viz import render

        render(loss, args.dot, names=names)
        print(f"\n  graph written to {args.dot}")
    if args.svg:
        from minitensor.viz import to_svg

        # drawn in Python (the same picture with or without Graphviz), top to bottom as the steps
        # above read, with each tensor's numbers and gradient: the graph is small enough for them
        with open(args.svg, "w", encoding="utf-8") as f:
            f.write(to_svg(loss, names=names, rankdir="TB", show_values=True))
        print(f"\n  graph picture written to {args.svg}")

    print()
    if failures:
        print(f"FAILED: {len(failures)} check(s) disagree:")
        for f in failures:
            print("  - " + f)
        return 1
    print("All checks passed: every gradient agrees with autograd and with finite differences.")
    return 0


def _optional_attention_module(x, outputs, grads):
    """If the `attention` package has SelfAttention, load the tutorial's weights into it and compare.

    The package is built by the project alongside this script, so its absence (or an API that
    does not fit) is reported and skipped; a layer that loads but computes other numbers is a failure.
    """
    try:
        from attention import SelfAttention
    except ImportError:
        return
    heading("Bonus. The same layer as attention.SelfAttention(4, 3, scale=1.0)")
    try:
        layer = SelfAttention(4, 3, scale=1.0)  # scale=1.0: no 1/sqrt(d_k), as in the tutorial
        with torch.no_grad():
            for name, w in (("w_query", W_QUERY), ("w_key", W_KEY), ("w_value", W_VALUE)):
                setattr(layer, name, torch.nn.Parameter(torch.tensor(w, dtype=torch.float64)))
        result = layer(x)
        out = result[0] if isinstance(result, tuple) else result
        (out * torch.tensor(LOSS_WEIGHTS)).sum().backward()
    except Exception as e:  # noqa: BLE001 (optional here; say why it was skipped)
        print(f"  skipped: could not run SelfAttention with the tutorial's weights ({type(e).__name__}: {e})")
        return
    show("SelfAttention(4, 3, scale=1.0)(x)", out.detach().numpy())
    err, ok = agree("attention.SelfAttention outputs vs the steps above", out.detach().numpy(), outputs)
    print(f"  same outputs as step 7: max |diff| = {err:.1e}   {'OK' if ok else 'MISMATCH'}")
    worst = 0.0
    for name, want in grads.items():
        err_g, ok_g = agree(f"attention.SelfAttention: d {name}", getattr(layer, name).grad.numpy(), want)
        worst, ok = max(worst, err_g), ok and ok_g
    print(f"  same gradients for w_query, w_key, w_value: max |diff| = {worst:.1e}   {'OK' if ok else 'MISMATCH'}")


if __name__ == "__main__":
    sys.exit(main())

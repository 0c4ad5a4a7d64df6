r"""Every number in docs/backprop_through_attention.md is recomputed here with minitensor.

The document keeps its numbers in fenced blocks whose info string names a quantity:

    ```text check=scores
     2   4   4
    ...
    ```

`QUANTITIES[name]()` recomputes it (forward values with minitensor ops, gradients with
minitensor's autograd, never with the document's own formulas), and the test fails when a printed
number is off by more than half a unit in its last printed digit, when a block has the wrong count
of numbers, or names an unknown quantity. A decimal number (or an integer >= 10) written in the
prose or in an unchecked formula block must also appear in some checked block, so no number
escapes the check (code in ```python blocks and `inline code` is exempt: it is code, not a result).

To (re)write the blocks after changing the document:  python tests/docs/test_backprop_doc.py --update
"""
import math
import os
import re
import sys

import numpy as np

import minitensor as torch
import minitensor.nn.functional as F

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   "docs", "backprop_through_attention.md")

X = [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]]
W_KEY = [[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]]
W_QUERY = [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]]
W_VALUE = [[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]]
G = [[-0.1, 1.3, -0.9], [-1.0, -0.9, -0.7], [-1.0, -0.3, 0.5]]  # the loss weights of the worked example
G2 = [[0.4, -0.6, 1.1], [0.8, 0.2, -1.2], [-0.5, 0.9, 0.3]]  # the second head's loss weights


def t(a, grad=False):
    return torch.tensor(a, dtype=torch.float64, requires_grad=grad)


def _attention(wq, wk, wv, mask=None):
    """The worked example's layer; returns every intermediate, with retained gradients after backward."""
    x = t(X)
    keys, queries, values = x @ wk, x @ wq, x @ wv
    scores = queries @ keys.T
    masked = scores.masked_fill(~mask, float("-inf")) if mask is not None else scores
    p = F.softmax(masked, dim=-1)
    outputs = p @ values
    for v in (keys, queries, values, scores, p, outputs):
        v.retain_grad()
    return dict(keys=keys, queries=queries, values=values, scores=scores, p=p, outputs=outputs)


def _worked(mask=None):
    w = dict(w_query=t(W_QUERY, True), w_key=t(W_KEY, True), w_value=t(W_VALUE, True))
    r = _attention(w["w_query"], w["w_key"], w["w_value"], mask=mask)
    (r["outputs"] * t(G)).sum().backward()
    r.update(w)
    return {k: v for k, v in r.items()}


def _np(v):
    return np.array(v.detach().numpy(force=True) if hasattr(v, "data") else v, dtype=np.float64)


def _causal():
    return torch.tril(torch.ones(3, 3)).bool()


def _jacobian_of_softmax(z):
    """The 3x3 Jacobian dp/dz of softmax at z, one row per output, by autograd (one backward per row)."""
    rows = []
    for i in range(len(z)):
        zt = t(z, True)
        p = F.softmax(zt, dim=-1)
        p[i].backward()
        rows.append(_np(zt.grad))
    return np.stack(rows)


def _dot_variance(d, n=20000, seed=0):
    """Sample variance of q . k for q, k with independent standard normal components."""
    torch.manual_seed(seed)
    q, k = torch.randn(n, d, dtype=torch.float64), torch.randn(n, d, dtype=torch.float64)
    return float((q * k).sum(dim=-1).var().item())


def _peakiness(d=64, keys=8, rows=4000, seed=0):
    """For random unit-variance q, k with d = 64 and 8 keys: the mean largest softmax weight of a row
    and the mean largest entry of its Jacobian p_i (1 - p_i), unscaled (row 0) and scaled (row 1)."""
    torch.manual_seed(seed)
    q = torch.randn(rows, 1, d, dtype=torch.float64)
    k = torch.randn(rows, keys, d, dtype=torch.float64)
    s = (q * k).sum(dim=-1)  # (rows, keys)
    out = []
    for scores in (s, s / math.sqrt(d)):
        p = F.softmax(scores, dim=-1)
        out.append([p.amax(dim=-1).mean().item(), (p * (1 - p)).amax(dim=-1).mean().item()])
    return np.array(out)


def _multihead():
    """Two heads of the worked example's kind: head 0 is the tutorial's, head 1 uses its weights with rows reversed."""
    rev = lambda w: [row for row in reversed(w)]  # noqa: E731
    wq = t([a + b for a, b in zip(W_QUERY, rev(W_QUERY))], True)  # (4, 6): [head 0 | head 1]
    wk = t([a + b for a, b in zip(W_KEY, rev(W_KEY))], True)
    wv = t([a + b for a, b in zip(W_VALUE, rev(W_VALUE))], True)
    x = t(X)
    heads = lambda y: y.reshape(3, 2, 3).transpose(0, 1)  # noqa: E731  (T, H*d) -> (H, T, d): the split
    q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
    scores = q @ k.transpose(-2, -1)  # (H, T, T)
    o = F.softmax(scores, dim=-1) @ v  # (H, T, d)
    merged = o.transpose(0, 1).reshape(3, 6)  # the merge: (H, T, d) -> (T, H*d)
    upstream = t([a + b for a, b in zip(G, G2)])
    (merged * upstream).sum().backward()
    return dict(scores=scores, merged=merged, upstream=upstream, wq=wq, wk=wk, wv=wv)


def _quantities():
    q = {}
    w = None

    def worked():
        nonlocal w
        if w is None:
            w = _worked()
        return w

    q["x"] = lambda: np.array(X)
    q["w_key"] = lambda: np.array(W_KEY)
    q["w_query"] = lambda: np.array(W_QUERY)
    q["w_value"] = lambda: np.array(W_VALUE)
    for name in ("keys", "queries", "values", "scores", "p", "outputs"):
        q[name] = (lambda n: lambda: _np(worked()[n]))(name)
    q["p_rounded"] = lambda: np.round(_np(worked()["p"]), 2)
    q["G"] = lambda: _np(worked()["outputs"].grad)  # dL/d outputs, which is G
    q["loss"] = lambda: float(np.sum(_np(worked()["outputs"]) * np.array(G)))
    q["dP"] = lambda: _np(worked()["p"].grad)
    q["dV"] = lambda: _np(worked()["values"].grad)
    q["dS"] = lambda: _np(worked()["scores"].grad)
    q["dS_rowsum"] = lambda: _np(worked()["scores"].grad).sum(axis=-1)
    q["dQ"] = lambda: _np(worked()["queries"].grad)
    q["dK"] = lambda: _np(worked()["keys"].grad)
    q["dW_query"] = lambda: _np(worked()["w_query"].grad)
    q["dW_key"] = lambda: _np(worked()["w_key"].grad)
    q["dW_value"] = lambda: _np(worked()["w_value"].grad)
    # softmax's Jacobian at row 0 of the scores, and what it does to row 0 of dP
    q["jacobian_row0"] = lambda: _jacobian_of_softmax(_np(worked()["scores"])[0])
    q["p_row0"] = lambda: _np(worked()["p"])[0]
    q["dP_row0"] = lambda: _np(worked()["p"].grad)[0]
    q["dS_row0"] = lambda: _np(worked()["scores"].grad)[0]
    # the scale
    q["dot_variance"] = lambda: np.array([_dot_variance(d) for d in (3, 64, 512)])
    q["dot_dims"] = lambda: np.array([3, 64, 512])
    q["sqrt3"] = lambda: math.sqrt(3)
    q["peakiness"] = lambda: _peakiness()
    q["scores_scaled"] = lambda: _np(worked()["scores"] / math.sqrt(3))
    q["p_scaled"] = lambda: _np(F.softmax(t(_np(worked()["scores"]) / math.sqrt(3)), dim=-1))
    q["jacobian_row1"] = lambda: _jacobian_of_softmax(_np(worked()["scores"])[1])
    q["jacobian_row1_scaled"] = lambda: _jacobian_of_softmax(_np(worked()["scores"])[1] / math.sqrt(3))
    q["saturation"] = lambda: np.array([
        np.abs(_jacobian_of_softmax(np.array([4.0, 16.0, 12.0]) * c)).max() for c in (0.25, 1 / math.sqrt(3), 1.0, 4.0)
    ])
    # masking
    causal = {}

    def masked():
        if not causal:
            causal.update(_worked(mask=_causal()))
        return causal

    q["p_causal"] = lambda: _np(masked()["p"])
    q["outputs_causal"] = lambda: _np(masked()["outputs"])
    q["dS_causal"] = lambda: _np(masked()["scores"].grad)
    q["p_minus_1e9"] = lambda: _np(F.softmax(t(np.full(3, -1e9)), dim=-1))
    # multi-head
    mh = {}

    def multi():
        if not mh:
            mh.update(_multihead())
        return mh

    q["G2"] = lambda: np.array(G2)
    q["mh_scores_head1"] = lambda: _np(multi()["scores"])[1]
    q["mh_merged"] = lambda: _np(multi()["merged"])
    q["mh_dW_query"] = lambda: _np(multi()["wq"].grad)
    return q


QUANTITIES = _quantities()
_computed = {}


def value(name):
    """QUANTITIES[name](), computed once per run (the sampled variances take a moment)."""
    if name not in _computed:
        _computed[name] = np.atleast_1d(np.asarray(QUANTITIES[name](), dtype=np.float64)).ravel()
    return _computed[name]

# ---- reading and writing the document's blocks -------------------------------------------------------
BLOCK = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\w|\.\d)")  # "0.5." ends a sentence


def checked_blocks(text):
    """(name, options, body, span) for each fenced block with `check=NAME` in its info string."""
    out = []
    for m in BLOCK.finditer(text):
        opts = dict(kv.split("=", 1) for kv in m.group("info").split() if "=" in kv)
        if "check" in opts:
            out.append((opts["check"], opts, m.group("body"), m.span("body")))
    return out


def format_block(value, decimals):
    a = np.atleast_1d(np.asarray(value, dtype=np.float64))
    if a.ndim == 1:
        a = a[None, :]
    a = a.reshape(-1, a.shape[-1])
    integral = bool(np.all(a == np.round(a)))
    cells = [[f"{v:.0f}" if integral else f"{v:.{decimals}f}" for v in row] for row in a]
    cells = [[c[1:] if c.startswith("-") and float(c) == 0 else c for c in row] for row in cells]
    width = max(len(c) for row in cells for c in row)
    return "".join(" ".join(c.rjust(width) for c in row) + "\n" for row in cells)


def check_text(text):
    """Every mismatch between the document `text` and the recomputed quantities, as messages."""
    problems = []
    blocks = checked_blocks(text)
    if not blocks:
        return ["the document has no checked blocks"]
    printed = set()
    for name, _opts, body, _span in blocks:
        if name not in QUANTITIES:
            problems.append(f"block check={name}: no such quantity")
            continue
        want = value(name)
        tokens = NUMBER.findall(body)
        printed.update(tokens)
        if len(tokens) != want.size:
            problems.append(f"block check={name}: {len(tokens)} numbers printed, {want.size} computed")
            continue
        for k, (tok, w) in enumerate(zip(tokens, want)):
            decimals = len(tok.split(".")[1]) if "." in tok else 0
            tol = 0.5 * 10 ** -decimals + 1e-9
            if not abs(float(tok) - w) <= tol:
                problems.append(f"block check={name}: number {k} is printed {tok} but computes to {w:.6g}")
    # Prose, formula blocks included; checked blocks are done, and code (```python, `inline`) is code,
    # not a claim about a value.
    prose = BLOCK.sub(lambda m: "" if ("check=" in m.group("info") or m.group("info").strip().startswith("python"))
                      else m.group("body"), text)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    for tok in NUMBER.findall(prose):
        if ("." in tok or abs(float(tok)) >= 10) and tok not in printed:
            problems.append(f"prose number {tok} appears in no checked block")
    return problems


def update(text):
    """`text` with every checked block's body recomputed (decimals=N in the info string, default 4)."""
    for name, opts, _body, (start, end) in reversed(checked_blocks(text)):
        body = format_block(QUANTITIES[name](), int(opts.get("decimals", 4)))
        text = text[:start] + body + text[end:]
    return text


# ---- tests --------------------------------------------------------------------------------------------
def _doc():
    with open(DOC, encoding="utf-8") as f:
        return f.read()


def test_every_number_in_the_document_is_recomputed_and_matches():
    problems = check_text(_doc())
    assert not problems, "\n".join(problems)


def test_the_document_covers_every_step_of_attention():
    text = _doc().lower()
    for topic in ("matmul", "sqrt(d_k)", "saturat", "mask", "jacobian", "p_i(δ_ij − p_j)", "weighted sum",
                  "multi-head", "split", "merge"):
        assert topic in text, topic
    names = {name for name, *_ in checked_blocks(_doc())}
    for needed in ("scores", "p", "outputs", "dP", "dS", "dQ", "dK", "dV", "dW_query", "dW_key", "dW_value",
                   "jacobian_row0", "dot_variance", "p_causal", "mh_dW_query"):
        assert needed in names, needed


def test_the_checker_catches_a_changed_number():
    text = _doc()
    name, _opts, body, (start, end) = next(b for b in checked_blocks(text) if b[0] == "dS")
    first = NUMBER.search(body)
    wrong = body[: first.start()] + ("9" + first.group().lstrip("-")) + body[first.end():]
    problems = check_text(text[:start] + wrong + text[end:])
    assert any("check=dS" in p for p in problems), problems


def test_the_checker_catches_a_missing_number_and_an_unchecked_prose_number():
    text = _doc()
    name, _opts, body, (start, end) = next(b for b in checked_blocks(text) if b[0] == "scores")
    short = body.rsplit(" ", 1)[0] + "\n"
    assert any("numbers printed" in p for p in check_text(text[:start] + short + text[end:]))
    assert any("prose number 0.1234" in p for p in check_text(text + "\nThe answer is 0.1234.\n"))


def test_the_checked_quantities_agree_with_the_formulas_in_the_document():
    # The blocks come from autograd; the document derives them by hand. Both must be the same numbers.
    q = QUANTITIES
    P, V, Q, K, dO = q["p"](), q["values"](), q["queries"](), q["keys"](), np.array(G)
    x = np.array(X, dtype=np.float64)
    dP = dO @ V.T
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    np.testing.assert_allclose(q["dP"](), dP, atol=1e-12)
    np.testing.assert_allclose(q["dV"](), P.T @ dO, atol=1e-12)
    np.testing.assert_allclose(q["dS"](), dS, atol=1e-12)
    np.testing.assert_allclose(q["dQ"](), dS @ K, atol=1e-12)
    np.testing.assert_allclose(q["dK"](), dS.T @ Q, atol=1e-12)
    np.testing.assert_allclose(q["dW_query"](), x.T @ (dS @ K), atol=1e-12)
    p0 = P[0]
    np.testing.assert_allclose(q["jacobian_row0"](), np.diag(p0) - np.outer(p0, p0), atol=1e-12)
    # the first head of the two-head layer is the single-head layer: the same W_query gradient
    np.testing.assert_allclose(q["mh_dW_query"]()[:, :3], q["dW_query"](), atol=1e-12)


if __name__ == "__main__":
    if "--update" in sys.argv:
        with open(DOC, encoding="utf-8") as f:
            new = update(f.read())
        with open(DOC, "w", encoding="utf-8") as f:
            f.write(new)
    problems = check_text(_doc())
    print("\n".join(problems) or "the document's numbers all check")
    sys.exit(1 if problems else 0)

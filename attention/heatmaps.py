"""Heatmaps of attention weights, and of their gradients, for any number of layers and heads.

    import attention
    out, w = attention.MultiHeadAttention(16, 4)(x)            # w: (B, H, T, T)
    attention.show_heatmaps(w[0], tokens, tokens)              # a matplotlib Figure: inline in Jupyter
    attention.show_heatmaps(w[0], tokens, tokens, path="w.png")
    attention.show_heatmaps(scores.grad[0], tokens, tokens)    # signed: a diverging colormap centred at 0

Weights in [0, 1] are drawn with a sequential colormap from 0 to 1, so two maps compare at a
glance; anything with a negative value (a gradient such as dS or dP) with a diverging one whose
white is 0, red positive and blue negative, on a scale symmetric about 0.

matplotlib is optional (`pip install matplotlib`); without it `unicode_heatmap` prints a map as
text, and `attention.attention_viewer_html` writes a page any browser opens.
"""
from __future__ import annotations

import io
import os
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

import minitensor as mt

_SHADES = " ░▒▓█"


def unicode_heatmap(weights: Sequence[Sequence[float]] | NDArray[Any], labels: Sequence[str]) -> str:
    """A (T, T) matrix of attention weights in [0, 1] as text: rows are queries, columns keys."""
    lines = ["    " + "".join(f"{lab:>2}" for lab in labels)]
    for lab, row in zip(labels, weights):
        cells = "".join(_SHADES[min(int(w * (len(_SHADES) - 1) + 0.5), len(_SHADES) - 1)] * 2 for w in row)
        lines.append(f"{lab:>3} {cells}")
    return "\n".join(lines)


def as_maps(weights, op):
    """`weights` (a Tensor or array of shape (T, S), (H, T, S) or (L, H, T, S), or a list of per-layer
    (H, T, S) arrays) as a float64 array of shape (L, H, T, S)."""
    if isinstance(weights, mt.Tensor):
        arr = weights.detach().numpy()
    elif isinstance(weights, (list, tuple)) and weights and all(isinstance(w, mt.Tensor) for w in weights):
        arr = np.stack([w.detach().numpy() for w in weights])
    else:
        try:
            arr = np.asarray(weights)
        except ValueError:  # a ragged list: layers of different shapes
            shapes = [np.shape(w) for w in weights]
            raise ValueError(f"{op}: the layers must have one shape (H, T, S), got shapes {shapes}") from None
    if arr.ndim not in (2, 3, 4) or arr.dtype.kind not in "biuf":
        raise ValueError(f"{op}: expected numbers of shape (T, S), (H, T, S) or (L, H, T, S), got shape "
                         f"{arr.shape} and dtype {arr.dtype}")
    return arr.astype(np.float64).reshape((1,) * (4 - arr.ndim) + arr.shape)


def labels_for(labels, n, what, op):
    """The labels of the n rows or columns: `labels` as strings, or their positions 0..n-1."""
    if labels is None:
        return [str(i) for i in range(n)]
    labels = [str(lab) for lab in labels]
    if len(labels) != n:
        raise ValueError(f"{op}: {n} {what} but {len(labels)} labels: {labels}")
    return labels


def prompt_divider(prompt_len, t, s, op):
    """`prompt_len` checked against the maps' T queries and S keys: None, or where the answer begins."""
    if prompt_len is None:
        return None
    if isinstance(prompt_len, bool) or not isinstance(prompt_len, (int, np.integer)) \
            or not 0 < prompt_len <= max(t, s):
        raise ValueError(f"{op}: prompt_len must be an integer from 1 to {max(t, s)} (the tokens shown), "
                         f"got {prompt_len!r}")
    return int(prompt_len)


def color_scale(maps):
    """(signed, vmin, vmax): a scale symmetric about 0 for data with a negative value, else [0, 1]
    (or [0, max] when something exceeds 1)."""
    finite = maps[np.isfinite(maps)]
    low, high = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
    if low < 0:
        m = max(-low, high)
        return True, -m, m
    return False, 0.0, max(1.0, high)


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


def new_figure(op: str, **kwargs: Any) -> Any:
    """A matplotlib Figure that Jupyter shows once, as a PNG, when it is a cell's value.

    It is made without pyplot: pyplot's inline backend would show it a second time, and a script
    making many would keep them all open."""
    try:  # imported here, when something is drawn: matplotlib takes seconds to import, and it is optional
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            f"{op} draws with matplotlib, which is not installed: `pip install matplotlib`. Without it, "
            "attention.unicode_heatmap(weights, labels) prints a (T, T) map as text, and "
            "attention.attention_viewer_html(maps, tokens, path) writes a page any browser opens") from None
    fig: Any = Figure(**kwargs)  # (Any: IPython's attribute below is not one a Figure declares)
    fig._repr_png_ = lambda: _png(fig)  # how IPython displays an object it has no printer for
    return fig


def show_heatmaps(weights: mt.Tensor | Sequence[mt.Tensor] | ArrayLike, query_labels: Sequence[object] | None = None,
                  key_labels: Sequence[object] | None = None, title: str | None = None,
                  path: str | os.PathLike[str] | None = None, cmap: str | None = None,
                  prompt_len: int | None = None) -> Any:
    """Draw attention weights (or a gradient of them) as heatmaps; return the matplotlib Figure.

    weights: a Tensor or array of shape (T, S), (H, T, S) or (L, H, T, S): one panel per head, a
        row of panels per layer; rows are queries (labelled `query_labels`), columns keys.
    cmap: a matplotlib colormap name; by default 'viridis' from 0 to 1 for weights, and 'RdBu_r'
        centred at 0 for signed data such as dS or dP.
    path: also save the figure there (a PNG, or any format matplotlib knows from the suffix).
    prompt_len: the first `prompt_len` tokens are the prompt and the rest the model's answer: a
        line is drawn where the answer begins, across the rows and down the columns.
    Column labels of one or two characters stay upright; longer ones are turned to fit.
    Needs matplotlib; raises ImportError saying what to install and what works without it.
    """
    op = "show_heatmaps"
    maps = as_maps(weights, op)
    n_layers, n_heads, t, s = maps.shape
    rows = labels_for(query_labels, t, "queries", op)
    cols = labels_for(key_labels, s, "keys", op)
    split = prompt_divider(prompt_len, t, s, op)
    signed, vmin, vmax = color_scale(maps)
    side = max(2.2, 0.28 * max(t, s) + 0.8)  # inches per panel: room for a label on every row
    fig = new_figure(op, figsize=(side * n_heads + 0.9, side * n_layers + (0.5 if title else 0.2)),
                     layout="constrained")
    axes = fig.subplots(n_layers, n_heads, squeeze=False)
    for li in range(n_layers):
        for hi in range(n_heads):
            ax = axes[li][hi]
            image = ax.imshow(maps[li, hi], cmap=cmap or ("RdBu_r" if signed else "viridis"), vmin=vmin, vmax=vmax)
            ax.set_xticks(range(s), cols, fontsize=7, rotation=90 if max(map(len, cols)) > 2 else 0)
            ax.set_yticks(range(t), rows, fontsize=7)
            if split is not None:  # between the last prompt token and the first answer token
                if split < t:
                    ax.axhline(split - 0.5, color="white", lw=1.6)
                    ax.axhline(split - 0.5, color="black", lw=0.8, ls="--")
                if split < s:
                    ax.axvline(split - 0.5, color="white", lw=1.6)
                    ax.axvline(split - 0.5, color="black", lw=0.8, ls="--")
            if n_layers * n_heads > 1:
                ax.set_title(f"layer {li} head {hi}" if n_layers > 1 else f"head {hi}", fontsize=8)
    axes[0][0].set_ylabel("query", fontsize=8)
    axes[-1][0].set_xlabel("key", fontsize=8)
    fig.colorbar(image, ax=axes, shrink=0.8, label="value (signed)" if signed else "weight")
    if title:
        fig.suptitle(title, fontsize=9)
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig

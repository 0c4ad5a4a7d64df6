"""Pictures of a trained toy model: attention maps of every head of every layer, and the loss curve.

PNG files through matplotlib when it is installed (the `examples` extra); otherwise the maps are
printed as Unicode heatmaps in the terminal, so nothing needs a display or an extra package.
"""
from __future__ import annotations

import os
from typing import Any, Sequence, TextIO

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .lm import DecoderLM, greedy_answers
from .tasks import Task

_SHADES = " ░▒▓█"


def telling_example(prompts: ArrayLike) -> NDArray[Any]:
    """The prompt with the most different tokens, most out of order: its attention has most to show."""
    p = np.asarray(prompts)
    unique = np.array([len(set(row)) for row in p.tolist()])
    descents = (p[:, :-1] > p[:, 1:]).sum(axis=1)
    return p[int(np.argmax(unique * p.shape[1] + descents))]


def unicode_heatmap(weights: Sequence[Sequence[float]] | NDArray[Any], labels: Sequence[str]) -> str:
    """A (T, T) matrix of attention weights in [0, 1] as text: rows are queries, columns keys."""
    lines = ["    " + "".join(f"{lab:>2}" for lab in labels)]
    for lab, row in zip(labels, weights):
        cells = "".join(_SHADES[min(int(w * (len(_SHADES) - 1) + 0.5), len(_SHADES) - 1)] * 2 for w in row)
        lines.append(f"{lab:>3} {cells}")
    return "\n".join(lines)


def draw(model: DecoderLM, task: Task, prompt: NDArray[Any], losses: Sequence[float], out_dir: str,
         stream: TextIO) -> list[str]:
    """Save (or print) the attention maps for one held-out example and the loss curve; return file paths."""

    answer = greedy_answers(model, task, prompt[None, :])[0]
    seq = np.concatenate([prompt, answer])[: task.block_size]
    maps = model.attention_maps(seq[None, :])  # one (heads, T, T) array per layer
    labels = [str(int(t)) for t in seq]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        stream.write("matplotlib is not installed: attention maps as text (rows = queries, columns = keys)\n")
        for li, heads in enumerate(maps):
            for hi, w in enumerate(heads):
                stream.write(f"\nlayer {li} head {hi}\n{unicode_heatmap(w, labels)}\n")
        return []
    n_layers, n_heads = len(maps), maps[0].shape[0]
    fig, axes = plt.subplots(n_layers, n_heads, figsize=(2.6 * n_heads, 2.6 * n_layers), squeeze=False)
    for li, heads in enumerate(maps):
        for hi, w in enumerate(heads):
            ax = axes[li][hi]
            ax.imshow(w, cmap="viridis", vmin=0, vmax=1)
            ax.set_xticks(range(len(labels)), labels, fontsize=7)
            ax.set_yticks(range(len(labels)), labels, fontsize=7)
            ax.set_title(f"layer {li} head {hi}", fontsize=8)
    fig.suptitle(f"{task.name}: prompt {' '.join(labels[:task.prompt_len])} -> answer "
                 f"{' '.join(str(int(t)) for t in answer)}", fontsize=9)
    fig.tight_layout()
    maps_path = os.path.join(out_dir, "attention_maps.png")
    fig.savefig(maps_path, dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(np.arange(1, len(losses) + 1), losses, lw=1)
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (cross-entropy)")
    fig.tight_layout()
    loss_path = os.path.join(out_dir, "loss_curve.png")
    fig.savefig(loss_path, dpi=110)
    plt.close(fig)
    return [maps_path, loss_path]

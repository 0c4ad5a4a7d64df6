"""Pictures of a trained model: attention maps of every head of every layer, and the loss curve.

PNG files through matplotlib when it is installed (the `examples` extra); otherwise the maps are
printed as Unicode heatmaps in the terminal, so nothing needs a display or an extra package. The
HTML viewer (`attention_viewer.html`, layer, head and query selectable) is written either way.
"""
from __future__ import annotations

import os
from typing import Any, Sequence, TextIO

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .chars import CharsTask
from .heatmaps import new_figure, show_heatmaps, unicode_heatmap
from .lm import DecoderLM, greedy_answers
from .tasks import Task
from .viewer import attention_viewer_html


def telling_example(prompts: ArrayLike) -> NDArray[Any]:
    """The prompt with the most different tokens, most out of order: its attention has most to show."""
    p = np.asarray(prompts)
    unique = np.array([len(set(row)) for row in p.tolist()])
    descents = (p[:, :-1] > p[:, 1:]).sum(axis=1)
    return p[int(np.argmax(unique * p.shape[1] + descents))]


def draw(model: DecoderLM, task: Task, prompt: NDArray[Any], losses: Sequence[float], out_dir: str,
         stream: TextIO) -> list[str]:
    """Save the attention maps for one held-out example (a PNG and the HTML viewer) and the loss
    curve, or print the maps as text without matplotlib; return the paths of the files written."""
    answer = greedy_answers(model, task, prompt[None, :])[0]
    seq = np.concatenate([prompt, answer])[: task.block_size]
    labels = [str(int(t)) for t in seq]
    title = (f"{task.name}: prompt {' '.join(labels[:task.prompt_len])} -> answer "
             f"{' '.join(str(int(t)) for t in answer)}")
    return _save(np.stack(model.attention_maps(seq[None, :])), labels, title, losses, out_dir, stream)


def char_label(c: str) -> str:
    """A character as one visible glyph: a newline as ↵, a space as ·."""
    return {"\n": "↵", " ": "·", "\t": "→"}.get(c, c)


def draw_text(model: DecoderLM, task: CharsTask, losses: Sequence[float], out_dir: str, stream: TextIO,
              length: int = 20) -> list[str]:
    """Save (or print) the attention maps over `length` held-out characters (a chars task), and the loss curve."""
    text = task.decode(task.heldout_ids)
    starts = [i + 1 for i in range(len(text) - length) if text[i] == "\n" != text[i + 1]]
    start = starts[0] if starts else 0  # at the beginning of a line of text when there is one
    seq = task.heldout_ids[start:start + min(length, task.block_size)]
    labels = [char_label(task.chars[int(t)]) for t in seq]
    title = f"{task.name}: {task.decode(seq)!r}"
    return _save(np.stack(model.attention_maps(seq[None, :])), labels, title, losses, out_dir, stream)


def _save(maps: NDArray[Any], labels: list[str], title: str, losses: Sequence[float], out_dir: str,
          stream: TextIO) -> list[str]:
    """The maps (layers, heads, T, T) as a PNG and the HTML viewer, and the loss curve; the maps as
    text (and the viewer) without matplotlib."""
    viewer_path = os.path.join(out_dir, "attention_viewer.html")
    attention_viewer_html(maps, labels, viewer_path, title=title)
    maps_path = os.path.join(out_dir, "attention_maps.png")
    try:
        show_heatmaps(maps, labels, labels, title=title, path=maps_path)
    except ImportError:
        stream.write("matplotlib is not installed: attention maps as text (rows = queries, columns = keys); "
                     f"open {viewer_path} in a browser to explore them\n")
        for li, heads in enumerate(maps):
            for hi, w in enumerate(heads):
                stream.write(f"\nlayer {li} head {hi}\n{unicode_heatmap(w, labels)}\n")
        return [viewer_path]
    fig = new_figure("draw", figsize=(5, 3), layout="constrained")
    ax = fig.subplots()
    ax.plot(np.arange(1, len(losses) + 1), losses, lw=1)
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (cross-entropy)")
    loss_path = os.path.join(out_dir, "loss_curve.png")
    fig.savefig(loss_path, dpi=110)
    return [maps_path, loss_path, viewer_path]

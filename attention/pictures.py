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
         stream: TextIO, evals: Sequence[dict[str, Any]] = ()) -> list[str]:
    """Save the attention maps for one held-out example (a PNG and the HTML viewer, each with a line
    where the prompt ends and the answer begins) and the loss curve (the held-out `evals` marked on
    it), or print the maps as text without matplotlib; return the paths of the files written."""
    answer = greedy_answers(model, task, prompt[None, :])[0]
    seq = np.concatenate([prompt, answer])[: task.block_size]
    labels = [str(int(t)) for t in seq]
    title = (f"{task.name}: prompt {' '.join(labels[:task.prompt_len])} -> answer "
             f"{' '.join(str(int(t)) for t in answer)}")
    return _save(np.stack(model.attention_maps(seq[None, :])), labels, title, losses, out_dir, stream,
                 prompt_len=min(task.prompt_len, len(labels)), evals=evals, name=task.name)


def char_label(c: str) -> str:
    """A character as one visible glyph: a newline as ↵, a space as ·."""
    return {"\n": "↵", " ": "·", "\t": "→"}.get(c, c)


def draw_text(model: DecoderLM, task: CharsTask, losses: Sequence[float], out_dir: str, stream: TextIO,
              length: int = 20, evals: Sequence[dict[str, Any]] = ()) -> list[str]:
    """Save (or print) the attention maps over `length` held-out characters (a chars task), and the loss curve."""
    text = task.decode(task.heldout_ids)
    starts = [i + 1 for i in range(len(text) - length) if text[i] == "\n" != text[i + 1]]
    start = starts[0] if starts else 0  # at the beginning of a line of text when there is one
    seq = task.heldout_ids[start:start + min(length, task.block_size)]
    labels = [char_label(task.chars[int(t)]) for t in seq]
    title = f"{task.name}: {task.decode(seq)!r}"
    return _save(np.stack(model.attention_maps(seq[None, :])), labels, title, losses, out_dir, stream,
                 evals=evals, name=task.name)


def _save(maps: NDArray[Any], labels: list[str], title: str, losses: Sequence[float], out_dir: str,
          stream: TextIO, prompt_len: int | None = None, evals: Sequence[dict[str, Any]] = (),
          name: str = "") -> list[str]:
    """The maps (layers, heads, T, T) as a PNG and the HTML viewer, and the loss curve; the maps as
    text (and the viewer) without matplotlib."""
    viewer_path = os.path.join(out_dir, "attention_viewer.html")
    attention_viewer_html(maps, labels, viewer_path, title=title, prompt_len=prompt_len)
    maps_path = os.path.join(out_dir, "attention_maps.png")
    try:
        show_heatmaps(maps, labels, labels, title=title, path=maps_path, prompt_len=prompt_len)
    except ImportError:
        stream.write("matplotlib is not installed: attention maps as text (rows = queries, columns = keys); "
                     f"open {viewer_path} in a browser to explore them\n")
        for li, heads in enumerate(maps):
            for hi, w in enumerate(heads):
                stream.write(f"\nlayer {li} head {hi}\n{unicode_heatmap(w, labels)}\n")
        return [viewer_path]
    loss_path = os.path.join(out_dir, "loss_curve.png")
    loss_curve(losses, evals, name).savefig(loss_path, dpi=110)
    return [maps_path, loss_path, viewer_path]


def loss_curve(losses: Sequence[float], evals: Sequence[dict[str, Any]] = (), name: str = "") -> Any:
    """The training loss per step (log scale) as a matplotlib Figure, titled, with each held-out
    evaluation marked: a dotted line at its step, and its result as a point (the held-out loss on
    the loss axis; an exact-match score on a percent axis at the right)."""
    fig = new_figure("loss_curve", figsize=(5.5, 3.3), layout="constrained")
    ax = fig.subplots()
    ax.plot(np.arange(1, len(losses) + 1), losses, lw=1, label="training loss")
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (cross-entropy)")
    ax.set_title(f"{name + ': ' if name else ''}training loss"
                 + (f", {len(evals)} held-out evaluations" if evals else ""), fontsize=10)
    handles = ax.get_lines()[:1]
    for r in evals:
        ax.axvline(r["step"], color="0.6", lw=0.7, ls=":", zorder=0)
    steps = [r["step"] for r in evals]
    if evals and "loss" in evals[0]:
        handles += ax.plot(steps, [r["loss"] for r in evals], "o", ms=4, color="C1", label="held-out loss")
    elif evals and "draws" in evals[0]:
        right = ax.twinx()
        handles += right.plot(steps, [100 * r["draws"] for r in evals], "s", ms=4, color="C2",
                              label="held-out exact match (%)")
        right.set_ylim(-3, 103)
        right.set_ylabel("held-out exact match (%)")
    if evals:
        ax.legend(handles=handles, fontsize=8, loc="upper right", framealpha=0.9)
    return fig

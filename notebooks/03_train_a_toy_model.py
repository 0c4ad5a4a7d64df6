# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Train a toy model: a tiny transformer learns to sort
#
# minGPT's sort demo on a laptop CPU: the prompt is 6 digits from 0 to 2, the answer the same
# digits sorted. A decoder-only transformer (3 layers, 3 heads, 48 dimensions, GPT-2's layout)
# sees `prompt + answer` one token at a time and learns to predict each next token. Some prompts
# are held out and never trained on; the model is scored on them.
#
# The pieces are `attention.trainer`'s: `Config`, `build`, `train_step`, `evaluate`. The same run
# from a terminal, with checkpoints and resume, is `python -m attention --task sort`.

# %%
import html
import os

# Matrices this small run fastest on one BLAS thread; numpy reads this when it loads, so it counts
# in a fresh kernel (Kernel > Restart, then run from here).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import matplotlib.pyplot as plt
import numpy as np

import attention
from attention.lm import greedy_answers
from attention.pictures import telling_example
from attention.trainer import Config, build, evaluate, heldout_sets, train_step

try:
    from IPython.display import HTML, display
except ImportError:  # run as a plain script: progress as text lines instead of a live plot
    HTML = display = None

# %% [markdown]
# ## The task, the model, the optimizer
#
# `build(cfg)` seeds minitensor's generator from `cfg.seed`, then makes the task, the model
# (`attention.lm.DecoderLM`), AdamW and a learning-rate schedule. The batches come from a numpy
# generator with the same seed, so the run is the same every time.

# %%
cfg = Config(task="sort", steps=300, seed=0)  # 300 steps: about 10 s on one CPU thread
task, model, optimizer, scheduler = build(cfg)
data_rng = np.random.default_rng(cfg.seed)
distinct, draws = heldout_sets(task, 500)  # every held-out prompt, and 500 draws from them
print(task.describe())
print(f"{sum(p.numel() for p in model.parameters()):,} parameters; {len(distinct)} held-out prompts")

x, y = task.batch(2, data_rng)
print("a batch: inputs\n", x, "\ntargets (-100: not scored, the prompt's positions)\n", y)

# %% [markdown]
# ## Training, with a live loss plot
#
# Each step: a batch of 64 sequences, the cross-entropy of the next-token predictions at the
# answer positions, `backward`, gradient clipping, an AdamW step. The plot is redrawn every
# `PLOT_EVERY` steps, and the held-out exact match (every answer token right) is measured every
# 100.

# %%
PLOT_EVERY = 25
losses, evals = [], []
fig, ax = plt.subplots(figsize=(6, 3), layout="constrained")
(line,) = ax.plot([], [], lw=1)
ax.set_yscale("log")
ax.set_xlim(0, cfg.steps)
ax.set_xlabel("step")
ax.set_ylabel("training loss (cross-entropy)")
live = display(fig, display_id=True) if display else None

model.train()
for step in range(1, cfg.steps + 1):
    x, y = task.batch(cfg.batch, data_rng)
    losses.append(train_step(model, optimizer, scheduler, x, y, cfg.clip))
    if step % 100 == 0:
        evals.append((step, evaluate(model, task, draws)))
    if step % PLOT_EVERY == 0:
        line.set_data(np.arange(1, step + 1), losses)
        ax.relim()
        ax.autoscale_view(scalex=False)
        held_out = f", held-out exact match {100 * evals[-1][1]:.1f}% at step {evals[-1][0]}" if evals else ""
        ax.set_title(f"step {step}: loss {losses[-1]:.4f}{held_out}", fontsize=9)
        if live is not None:
            live.update(fig)
        else:
            print(f"step {step}: loss {losses[-1]:.4f}{held_out}")
plt.close(fig)  # shown above already; closed so that Jupyter does not draw it a second time

# %% [markdown]
# ## How well does it sort?
#
# Greedy decoding: the model writes the answer one token at a time, each time taking its most
# likely token. A prompt counts only when all six answer tokens are right.

# %%
model.eval()
print(f"held-out exact match: {100 * evaluate(model, task, distinct):.1f}% of all {len(distinct)} held-out prompts")
answers = greedy_answers(model, task, distinct[:5])
for prompt, answer in zip(distinct[:5], answers):
    print(" ".join(map(str, prompt)), "->", " ".join(map(str, answer)),
          "" if np.array_equal(answer, np.sort(prompt)) else "(wrong)")

# %% [markdown]
# ## Where the model looks
#
# The attention weights of every head of every layer for one held-out prompt and the model's
# answer: a row per query position, a column per key position, so row $i$ is where position $i$
# reads from. The mask is causal, so nothing above the diagonal. The rows to look at are the
# answer's: to write the next sorted digit, which prompt positions does each head read?

# %%
prompt = telling_example(distinct)
answer = greedy_answers(model, task, prompt[None, :])[0]
seq = np.concatenate([prompt, answer])[: task.block_size]  # what the model reads
maps = np.stack(model.attention_maps(seq[None, :]))  # (layers, heads, T, T)
labels = [str(t) for t in seq]
title = f"sort: prompt {' '.join(labels[:task.prompt_len])} -> answer {' '.join(map(str, answer))}"
attention.show_heatmaps(maps, labels, labels, title=title)

# %% [markdown]
# The same maps in the HTML viewer: pick a layer, a head (or their mean) and a query. The page is
# one file with no outside links, written to `runs/notebook/attention_viewer.html`; any browser
# opens it. Below it is shown in a frame (if the frame stays empty, your notebook viewer does not
# run scripts in outputs: open the file instead).

# %%
os.makedirs(os.path.join("runs", "notebook"), exist_ok=True)
page = attention.attention_viewer_html(maps, labels, path=os.path.join("runs", "notebook", "attention_viewer.html"),
                                       title=title)
if HTML is not None:
    frame = f'<iframe srcdoc="{html.escape(page)}" style="width: 100%; height: 560px; border: none"></iframe>'
    display(HTML(f"<div>{frame}</div>"))  # (IPython warns about a bare <iframe>, suggesting IFrame, which needs a URL)

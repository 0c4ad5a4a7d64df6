"""A self-contained HTML page to explore attention weights: layer, head and query token selectable.

    html = attention.attention_viewer_html(maps, tokens, path="attention_viewer.html")

One file with its style and a small script inline: it opens in any browser from the disk, with no
network, no server and no package (matplotlib included) on the machine that writes it. The page
shows the chosen layer's and head's weights (or their mean over the heads) as a grid, rows
queries and columns keys, and beside it lines from each query token to the keys it attends to,
thicker and darker for larger weights. Picking a query (in its menu, or by clicking its row)
keeps only its lines. Signed data (a gradient such as dS or dP) is drawn red for positive and
blue for negative values, on a scale symmetric about 0.

The numbers are in the page as JSON (`<script id="attention-data">`), to 7 significant digits.
"""
from __future__ import annotations

import html
import json
import os
import re
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

from minitensor import Tensor

from .heatmaps import as_maps, color_scale, labels_for, prompt_divider


def _number(v):
    return float(f"{v:.7g}") if np.isfinite(v) else None  # JSON has no NaN or inf: null, drawn grey


def attention_viewer_html(maps: Tensor | Sequence[Tensor] | ArrayLike, tokens: Sequence[object],
                          path: str | os.PathLike[str] | None = None, key_tokens: Sequence[object] | None = None,
                          title: str = "attention weights", prompt_len: int | None = None) -> str:
    """The viewer page for `maps` as an HTML string; also written to `path` when given.

    maps: a Tensor or array of shape (T, S), (H, T, S) or (L, H, T, S), or a list of per-layer
        (H, T, S) arrays (what `DecoderLM.attention_maps` returns); rows are queries.
    tokens: the T query tokens (any objects, shown as text); `key_tokens` the S key tokens, by
        default the same (self-attention).
    prompt_len: the first `prompt_len` tokens are the prompt, the rest the model's answer: the grid
        and the lines mark where the answer begins.
    """
    op = "attention_viewer_html"
    arr = as_maps(maps, op)
    n_layers, n_heads, t, s = arr.shape
    queries = labels_for(tokens, t, "queries", op)
    keys = queries if key_tokens is None and s == t else labels_for(key_tokens, s, "keys", op)
    split = prompt_divider(prompt_len, t, s, op)
    signed, vmin, vmax = color_scale(arr)
    data = {"title": str(title), "layers": n_layers, "heads": n_heads, "queries": queries, "keys": keys,
            "prompt_len": split, "signed": signed, "vmin": float(vmin), "vmax": float(vmax),
            "weights": np.vectorize(_number, otypes=[object])(arr).tolist()}
    # \u003c for every "<": no token can close the script element or open a comment inside it
    blob = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    parts = {"title": html.escape(str(title)), "data": blob}
    page = re.sub(r"\{(title|data)\}", lambda m: parts[m.group(1)], _PAGE)  # one pass: neither is searched again
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
    return page


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
  body { font-family: sans-serif; margin: 1em 1.5em; color: #222; }
  h1 { font-size: 1.2em; }
  .help { color: #555; max-width: 52em; font-size: 0.9em; }
  .controls label { margin-right: 1.2em; }
  .views { display: flex; gap: 2em; align-items: flex-start; margin-top: 1em; flex-wrap: wrap; }
  table { border-collapse: collapse; font-size: 12px; }
  td.cell { width: 30px; height: 22px; text-align: center; font-size: 10px; border: 1px solid #fff; cursor: pointer; }
  th { font-weight: normal; padding: 0 4px; white-space: nowrap; }
  th.query { text-align: right; cursor: pointer; }
  th.key { text-align: center; vertical-align: bottom; }
  th.key.vertical { writing-mode: vertical-rl; transform: rotate(180deg); text-align: left; height: 4em; }
  td.answer-start, th.answer-start { border-left: 2px dashed #000; }
  tr.answer-start td.cell { border-top: 2px dashed #000; }
  .legend { color: #555; font-size: 0.85em; margin: 0.3em 0 0; }
  tr.selected th.query { font-weight: bold; }
  tr.selected td.cell { border-top: 2px solid #000; border-bottom: 2px solid #000; }
  canvas { border: 1px solid #ddd; }
</style>
</head>
<body>
<h1>{title}</h1>
<p class="help">Grid: rows are queries, columns keys; each row is where that query looks.
Lines: from each query (left) to each key (right), thicker and darker for a larger weight.
Pick a query, or click its row, to see only its lines. Signed values: red positive, blue negative.</p>
<div class="controls">
  <label>layer <select id="layer"></select></label>
  <label>head <select id="head"></select></label>
  <label>query <select id="query"></select></label>
</div>
<div class="views">
  <table id="grid"></table>
  <canvas id="lines"></canvas>
</div>
<p class="legend" id="legend"></p>
<script type="application/json" id="attention-data">{data}</script>
<script>
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("attention-data").textContent);
  var layerMenu = document.getElementById("layer"), headMenu = document.getElementById("head");
  var queryMenu = document.getElementById("query");

  function addOption(menu, value, text) {
    var o = document.createElement("option");
    o.value = value; o.textContent = text; menu.appendChild(o);
  }
  for (var l = 0; l < data.layers; l++) addOption(layerMenu, l, "layer " + l);
  for (var h = 0; h < data.heads; h++) addOption(headMenu, h, "head " + h);
  if (data.heads > 1) addOption(headMenu, "mean", "mean of the heads");
  addOption(queryMenu, "all", "every query");
  data.queries.forEach(function (tok, i) { addOption(queryMenu, i, i + ": " + tok); });

  // the matrix on show: one head's weights, or their mean over the heads (null stays null)
  function matrix() {
    var heads = data.weights[+layerMenu.value];
    if (headMenu.value !== "mean") return heads[+headMenu.value];
    return heads[0].map(function (row, i) {
      return row.map(function (_, j) {
        var sum = 0;
        for (var h = 0; h < heads.length; h++) {
          if (heads[h][i][j] === null) return null;
          sum += heads[h][i][j];
        }
        return sum / heads.length;
      });
    });
  }

  // white at 0 (or vmin), to dark blue at vmax; signed: red above 0 and blue below, by |v| / vmax
  function shade(v) {
    if (v === null) return { fill: "rgb(190,190,190)", strength: 0 };
    var t = data.signed ? Math.abs(v) / data.vmax : (v - data.vmin) / (data.vmax - data.vmin);
    t = Math.max(0, Math.min(1, t || 0));
    var to = data.signed && v > 0 ? [178, 24, 43] : [8, 48, 160];
    var c = to.map(function (x) { return Math.round(255 + (x - 255) * t); });
    return { fill: "rgb(" + c.join(",") + ")", strength: t, rgb: to };
  }

  // where the answer begins (the dashed lines), or -1 with no prompt; short key labels stay upright
  var split = data.prompt_len === null ? -1 : data.prompt_len;
  var upright = data.keys.every(function (tok) { return tok.length <= 2; });
  if (split > 0) {
    document.getElementById("legend").textContent = "Dashed lines: the prompt (first " + split +
      " tokens) above and left of them, the answer below and right.";
  }

  function drawGrid(w, picked) {
    var grid = document.getElementById("grid");
    grid.textContent = "";
    var head = grid.insertRow();
    head.appendChild(document.createElement("th"));
    data.keys.forEach(function (tok, j) {
      var th = document.createElement("th");
      th.className = "key" + (upright ? "" : " vertical") + (j === split ? " answer-start" : "");
      th.textContent = tok; head.appendChild(th);
    });
    w.forEach(function (row, i) {
      var tr = grid.insertRow();
      var rowClass = [picked === i ? "selected" : "", i === split ? "answer-start" : ""].join(" ").trim();
      if (rowClass) tr.className = rowClass;
      var th = document.createElement("th"); th.className = "query"; th.textContent = data.queries[i];
      tr.appendChild(th);
      row.forEach(function (v, j) {
        var td = tr.insertCell(), s = shade(v);
        td.className = "cell" + (j === split ? " answer-start" : "");
        td.style.background = s.fill;
        td.style.color = s.strength > 0.55 ? "#fff" : "#222";
        td.title = data.queries[i] + " -> " + data.keys[j] + ": " + (v === null ? "nan" : v);
        if (w.length <= 16 && row.length <= 16) td.textContent = v === null ? "nan" : v.toFixed(2);
      });
      tr.addEventListener("click", function () { queryMenu.value = String(i); draw(); });
    });
  }

  function drawLines(w, picked) {
    var canvas = document.getElementById("lines"), step = 24, width = 360;
    var n = Math.max(data.queries.length, data.keys.length);
    canvas.width = width; canvas.height = step * n + 20;
    var ctx = canvas.getContext("2d"), left = 110, right = width - 110;
    ctx.font = "13px sans-serif"; ctx.textBaseline = "middle";
    function y(i) { return 20 + step * i; }
    w.forEach(function (row, i) {
      if (picked !== null && picked !== i) return;
      row.forEach(function (v, j) {
        var s = shade(v);
        if (!s.strength) return;
        ctx.strokeStyle = "rgba(" + s.rgb.join(",") + "," + s.strength + ")";
        ctx.lineWidth = 0.5 + 5 * s.strength;
        ctx.beginPath(); ctx.moveTo(left, y(i)); ctx.lineTo(right, y(j)); ctx.stroke();
      });
    });
    if (split > 0) {  // a dashed rule on each side between the last prompt token and the first answer token
      ctx.strokeStyle = "#000"; ctx.lineWidth = 1; ctx.setLineDash([4, 3]);
      [[0, left], [right, width]].forEach(function (side) {
        if ((side[0] ? data.keys : data.queries).length <= split) return;
        ctx.beginPath(); ctx.moveTo(side[0], y(split) - step / 2); ctx.lineTo(side[1], y(split) - step / 2);
        ctx.stroke();
      });
      ctx.setLineDash([]);
    }
    ctx.fillStyle = "#222";
    ctx.textAlign = "right";
    data.queries.forEach(function (tok, i) {
      ctx.font = (picked === i ? "bold " : "") + "13px sans-serif";
      ctx.fillText(tok, left - 6, y(i));
    });
    ctx.font = "13px sans-serif"; ctx.textAlign = "left";
    data.keys.forEach(function (tok, j) { ctx.fillText(tok, right + 6, y(j)); });
  }

  function draw() {
    var w = matrix(), picked = queryMenu.value === "all" ? null : +queryMenu.value;
    drawGrid(w, picked);
    drawLines(w, picked);
  }
  [layerMenu, headMenu, queryMenu].forEach(function (m) { m.addEventListener("change", draw); });
  draw();
})();
</script>
</body>
</html>
"""

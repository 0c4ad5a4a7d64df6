"""Screenshots of the documentation site as a reader sees it, taken in headless Chromium.

    python scripts/screenshot_site.py --out shots/                 # build the site, then take them
    python scripts/screenshot_site.py --site site/ --out shots/    # of a site built already

A page that builds is not a page that reads: these pictures show a notebook with its outputs,
pictures and typeset math, an API page with a docstring's formula as math, and the labelled graph
of one multi-head attention after backward. Look at them
(any image viewer). Needs the docs extra to build, and Chromium (`chromium` or `chromium-browser`
on the PATH, or /usr/bin/chromium); exits with status 2 and says so when it is missing.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_docs  # noqa: E402

sys.path.pop(0)

# (file name, page of the site, what it shows)
SHOTS = [
    ("notebook_outputs_and_math.png", "notebooks/02_backprop_through_attention/index.html",
     "a notebook run at build time: its outputs, a picture and display math"),
    ("notebook_pictures.png", "notebooks/01_illustrated_self_attention/index.html",
     "the first lesson, with its heatmaps"),
    # (no #fragment: headless Chromium paints a blank page when it scrolls to one on a long page)
    ("api_formula.png", "api/ops/index.html", "the API reference: the ops' forward formulas and VJPs typeset as math"),
    ("mha_graph.png", "mha_graph.svg", "one multi-head attention's graph after backward, each node named by its step"),
]


def write_mha_graph(site):
    """mha_graph.svg beside the site's pages: the graph of one MultiHeadAttention (3 tokens, 2 heads,
    float64) after backward, as `to_svg` draws it for a learner (its steps named, top to bottom)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, root)
    import numpy as np

    import attention
    import minitensor as mt
    from minitensor.viz import to_svg

    rng = np.random.default_rng(0)
    mha = attention.MultiHeadAttention(d_model=4, num_heads=2).double()
    x = mt.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    out, _ = mha(x, is_causal=True)
    loss = (out * mt.tensor(rng.standard_normal((3, 4)))).sum()
    loss.backward()
    path = os.path.join(site, "mha_graph.svg")
    with open(path, "w", encoding="utf-8") as f:
        f.write(to_svg(loss, names={"x": x, **dict(mha.named_parameters())}))
    return path


def chromium():
    """The Chromium program, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None


def screenshot(browser, url, path, size=(1280, 2000)):
    """One screenshot of `url` at `size` (pixels) into `path`; returns the CompletedProcess."""
    with tempfile.TemporaryDirectory() as profile:  # a fresh profile: nothing cached from an earlier run
        # (no background connections: on a machine with no network each one waits to be refused)
        return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                               "--no-first-run", "--disable-background-networking", "--disable-component-update",
                               "--disable-sync", "--disable-quic",
                               f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
                               f"--screenshot={path}", url],
                              capture_output=True, text=True, timeout=120, check=False)


def take(site, out, browser, names=None):
    """The shots of SHOTS (those in `names`, by default all) from the built `site` into `out`;
    returns the paths written."""
    os.makedirs(out, exist_ok=True)
    if names is None or "mha_graph.png" in names:
        write_mha_graph(site)
    written = []
    for name, page, _ in SHOTS:
        if names is not None and name not in names:
            continue
        url = "file://" + os.path.abspath(os.path.join(site, page))
        path = os.path.join(out, name)
        done = screenshot(browser, url, path)
        if done.returncode != 0 or not os.path.exists(path):
            raise RuntimeError(f"chromium could not take {name} of {url}: {done.stderr[-500:]}")
        written.append(path)
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description="Screenshots of the documentation site in headless Chromium.")
    ap.add_argument("--out", default="site-screenshots", help="folder for the PNG files (default: %(default)s)")
    ap.add_argument("--site", help="a site built already (default: build one, as scripts/build_docs.py does)")
    args = ap.parse_args(argv)
    browser = chromium()
    if browser is None:
        print("screenshots: no Chromium found (apt-get install chromium); nothing taken", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = os.path.join(tmp, "site")
            done = build_docs.build(site)
            if done.returncode:
                sys.stderr.write(done.stdout + done.stderr)
                print("screenshots: the site did not build", file=sys.stderr)
                return 1
        for path, (_, _, what) in zip(take(site, args.out, browser), SHOTS):
            print(f"{path}: {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

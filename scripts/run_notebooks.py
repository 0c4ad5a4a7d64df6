"""Run the percent-format notebooks of notebooks/ in a fresh kernel, and keep each lesson's run.

Two users need the lessons executed: the docs site (their pages show every output and picture)
and tests/notebooks (each lesson shows what it promises). A lesson trains a model and takes
tens of seconds, so `executed(path)` runs it once and keeps the executed notebook and its working
folder in a cache; the second user, in the same CI run or a later one, reads that run. The key is
everything the run depends on: the notebook's text, every file of the two packages it imports,
this script, and the interpreter with its numpy and matplotlib. A lock on the key makes a second process wait
for the first run instead of starting its own.

    python scripts/run_notebooks.py notebooks/01_illustrated_self_attention.py   # prints where the run is

`execute(path, folder, edit=...)` runs a notebook afresh (the exercise tests change a cell first).
The kernel is this interpreter, importing this checkout, with one BLAS thread; it works in `folder`,
so nothing a notebook writes (runs/, my_exercises/) lands in the repository.
"""
import fcntl
import glob
import hashlib
import json
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("MINITENSOR_NOTEBOOK_CACHE") or os.path.join(tempfile.gettempdir(), "minitensor-notebooks")

# Seconds any one cell may take (nbclient stops the run there): generous for a busy 2-core CI
# machine, and far below CI's own limit, so a notebook that hangs fails instead.
CELL_TIMEOUT = {"03_train_a_toy_model.py": 180}
DEFAULT_CELL_TIMEOUT = 90


def _kernel_dirs(folder):
    """A kernelspec named python3 that starts this very interpreter."""
    spec = os.path.join(folder, "kernels", "python3")
    os.makedirs(spec, exist_ok=True)
    with open(os.path.join(spec, "kernel.json"), "w", encoding="utf-8") as f:
        json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                   "display_name": "Python 3 (this interpreter)", "language": "python"}, f)
    return [os.path.join(folder, "kernels")]


def execute(path, folder, edit=None):
    """Run the percent file at `path` as a notebook with `folder` as its working folder; return the
    executed notebook. `edit(nb)` may change the notebook before it runs."""
    import jupytext
    import nbclient
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    nb = jupytext.read(path)
    if edit is not None:
        edit(nb)
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory() as kernels:
        specs = KernelSpecManager(kernel_dirs=_kernel_dirs(kernels))
        km = KernelManager(kernel_name="python3", kernel_spec_manager=specs)
        client = nbclient.NotebookClient(
            nb, km=km, timeout=CELL_TIMEOUT.get(os.path.basename(path), DEFAULT_CELL_TIMEOUT),
            resources={"metadata": {"path": str(folder)}})
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        env.pop("MPLBACKEND", None)  # the kernel's own (inline) backend, as a learner's Jupyter has
        try:
            client.execute(env=env, cleanup_kc=True)  # (a client given a kernel manager leaves the kernel running)
        finally:
            if km.has_kernel:
                km.shutdown_kernel(now=True)
    return nb


def run_key(path):
    """What a run of `path` depends on, hashed: the notebook, the packages' files, the interpreter."""
    h = hashlib.sha256()
    sources = [path, __file__] + sorted(p for package in ("minitensor", "attention")
                              for p in glob.glob(os.path.join(ROOT, package, "**", "*"), recursive=True)
                              if os.path.isfile(p) and "__pycache__" not in p)
    for source in sources:
        h.update(os.path.relpath(source, ROOT).encode())
        with open(source, "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    import matplotlib
    import numpy
    h.update(f"{sys.executable} {sys.version} numpy {numpy.__version__} matplotlib {matplotlib.__version__}".encode())
    return h.hexdigest()[:24]


def executed(path):
    """(the executed notebook's path, its working folder) for the lesson at `path`, run at most
    once per key (see the module's docstring). A run that fails raises and keeps nothing."""
    name = os.path.splitext(os.path.basename(path))[0]
    entry = os.path.join(CACHE, f"{name}-{run_key(path)}")
    done = os.path.join(entry, "notebooks", name + ".ipynb")  # (mkdocs.yml's include matches notebooks/*.ipynb)
    os.makedirs(CACHE, exist_ok=True)
    with open(entry + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second process waits here for the first one's run
        if not os.path.exists(done):
            shutil.rmtree(entry, ignore_errors=True)  # a run that died half-way
            import nbformat
            nb = execute(path, os.path.join(entry, "run"))
            os.makedirs(os.path.dirname(done))
            nbformat.write(nb, done + ".part")
            os.replace(done + ".part", done)  # complete or absent
    return done, os.path.join(entry, "run")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(*executed(os.path.abspath(arg)))

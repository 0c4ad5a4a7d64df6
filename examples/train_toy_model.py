"""Train a tiny decoder-only transformer on a toy task, on the CPU, with minitensor + attention.

    python examples/train_toy_model.py                 # minGPT's sort demo: 3 layers, 3 heads, 48 dims
    python examples/train_toy_model.py --task reverse
    python examples/train_toy_model.py --out runs/x --steps 300 && python examples/train_toy_model.py --out runs/x --resume --steps 600

See `python examples/train_toy_model.py --help` for every option.
"""
import os
import sys

# BLAS on two threads at most (one on a one-core machine). The default model's matrix products
# (704 rows per training batch, thousands when evaluating) gain from a second thread: a 300-step
# run takes about a third less time than on one thread on a 2-core machine. More threads only
# spin against each other at these sizes. Must be set before numpy is imported; a value you set
# wins (and fixes the run's last bits across machines: see README, Determinism).
_THREADS = str(min(2, os.cpu_count() or 1))
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, _THREADS)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from attention.trainer import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

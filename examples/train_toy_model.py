"""Train a tiny decoder-only transformer on a toy task, on the CPU, with minitensor + attention.

    python examples/train_toy_model.py                 # minGPT's sort demo: 3 layers, 3 heads, 48 dims
    python examples/train_toy_model.py --task reverse
    python examples/train_toy_model.py --out runs/x --steps 300 && python examples/train_toy_model.py --out runs/x --resume --steps 600

See `python examples/train_toy_model.py --help` for every option.
"""
import os
import sys


def _threads_asked(argv):
    """N from `--threads N` or `--threads=N` when it is a positive whole number (argparse reports any other)."""
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--threads="):
            value = arg.split("=", 1)[1]
        else:
            continue
        return value if value.isdigit() and int(value) > 0 else None
    return None


# BLAS threads, fixed when numpy loads, so read here before anything imports it. One by default:
# a second thread makes the default model's step about a third faster on an idle 2-core machine,
# but 12-17x slower while another program keeps a core busy (a browser is enough), so one is
# never the slow case. `--threads N` asks for N; without it an OPENBLAS_NUM_THREADS you set wins.
_THREADS = _threads_asked(sys.argv[1:])
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    if _THREADS is not None:
        os.environ[_var] = _THREADS
    else:
        os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from attention.trainer import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

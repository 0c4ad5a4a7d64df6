"""Train a tiny decoder-only transformer on a toy task or a text, on the CPU, with minitensor + attention.

    python examples/train_toy_model.py                 # minGPT's sort demo: 3 layers, 3 heads, 48 dims
    python examples/train_toy_model.py --task reverse
    python examples/train_toy_model.py --out runs/x --steps 300 &&
        python examples/train_toy_model.py --out runs/x --resume --steps 600
    python examples/train_toy_model.py --task chars                 # a character model of the shipped novel
    python examples/train_toy_model.py --task chars --data my.txt --sample 500   # ... of your own text
    python examples/train_toy_model.py --task chars --generate-only --sample 1000 --temperature 0.8

See `python examples/train_toy_model.py --help` for every option.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from attention.trainer import command  # noqa: E402

if __name__ == "__main__":
    sys.exit(command())  # sets the BLAS threads (one unless --threads says otherwise), then trains

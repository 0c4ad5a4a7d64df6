"""The "Illustrated: Self-Attention" worked example, forward and backward: see attention/walkthrough.py.

    python examples/illustrated_self_attention.py [--explain] [--dot graph.dot]

The same as the `attention-walkthrough` command and `python -m attention.walkthrough`; this file lets
a clone run it without installing the package.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from attention.walkthrough import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

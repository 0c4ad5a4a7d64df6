"""Measure the facts README.md states, so they are re-measured rather than remembered.

    python scripts/readme_facts.py            # test count and the default model's parameters (~10 s)
    python scripts/readme_facts.py --suite    # also the suite's wall time (one full run)
    python scripts/readme_facts.py --tasks    # also the toy tasks' table: steps to 100% and wall time

Each figure is printed with how it was measured (machine, versions, BLAS threads), which is what
README's text should say next to it. tests/test_readme.py checks README's test count against
`count_tests()` and its parameter count against `default_parameters()`.
"""
import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = ("sort", "reverse", "copy", "add")


def count_tests():
    """The number of tests `python -m pytest` collects here (fewer without PyTorch installed,
    where the comparison modules skip at import)."""
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-p", "no:randomly", "tests"],
                         cwd=ROOT, capture_output=True, text=True, check=False).stdout
    found = re.search(r"(\d+) tests? collected", out)
    if not found:
        raise RuntimeError(f"pytest --collect-only printed no count:\n{out[-2000:]}")
    return int(found.group(1))


def default_parameters(task="sort"):
    """Parameters of the trainer's default model for `task` (for sort, minGPT's sort demo)."""
    sys.path.insert(0, ROOT)
    import minitensor
    from attention.trainer import Config, build

    state = minitensor.get_rng_state()  # build() seeds the global generator: leave it as it was
    try:
        _, model, _, _ = build(Config(task=task))
    finally:
        minitensor.set_rng_state(state)
    return sum(p.numel() for p in model.parameters())


def time_suite():
    """Wall time of README's test command, in seconds."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def train_task(task):
    """(steps to 100% held-out, wall time in s) of the trainer's default run of `task`, as its report says."""
    with tempfile.TemporaryDirectory() as out:
        report = subprocess.run([sys.executable, "-m", "attention", "--task", task, "--out", out, "--no-pictures"],
                                cwd=ROOT, capture_output=True, text=True, check=True).stdout
    steps = int(re.search(r"^steps\s+(\d+)", report, re.M).group(1))
    wall = float(re.search(r"^wall time\s+([\d.]+) s", report, re.M).group(1))
    return steps, wall


def machine():
    import numpy

    try:
        import torch
        torch_version = torch.__version__
    except ImportError:
        torch_version = "not installed"
    return (f"{os.cpu_count()} cores, Python {platform.python_version()}, numpy {numpy.__version__}, "
            f"PyTorch {torch_version}, {time.strftime('%Y-%m-%d')}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", action="store_true", help="also time the whole test suite (default: off)")
    ap.add_argument("--tasks", action="store_true", help="also train each toy task once (default: off)")
    args = ap.parse_args(argv)
    print(f"measured on: {machine()}")
    print(f"tests collected by `python -m pytest`: {count_tests():,}")
    print(f"parameters of the default model: {default_parameters():,}")
    print(f"parameters of the default chars model: {default_parameters('chars'):,}")
    if args.suite:
        print(f"`python -m pytest` wall time: {time_suite():.0f} s")
    if args.tasks:
        print("| task | steps to 100% held-out | wall time |\n|---|---|---|")
        for task in TASKS:  # one process per run: the trainer sets its one BLAS thread before numpy loads
            steps, wall = train_task(task)
            print(f"| `{task}` | {steps} | {wall:.1f} s |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

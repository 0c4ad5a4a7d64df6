"""Shared by the benchmark scripts: interleaved timing with medians, and the printed verdicts.

The machine these run on is shared and its speed drifts by 2x from minute to minute, so a time
is only meaningful next to another time taken at the same moment. `interleaved` therefore runs
the contenders A B A B ... (each repeat times every step back to back) and returns the median
of each, and the scripts print ratios of those medians.
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

CHILD = "MINITENSOR_BENCH_THREADS"  # set in the child processes of `per_thread_count`: their thread count
NO_TORCH = "MINITENSOR_BENCH_NO_TORCH"  # set there when the parent could not import PyTorch


def load_user_file(name, filename):
    """benchmarks/`filename` (a user's plain-PyTorch program) as a fresh module named `name`, its `import
    torch` resolved as `torch` means right now (inside `minitensor.run.torch_is_minitensor()`: minitensor)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                     filename))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pin_child_threads():
    """In a child of `per_thread_count`, pin BLAS (and so numpy) to its thread count; call before numpy
    loads. Returns that count, or None in the parent."""
    threads = os.environ.get(CHILD)
    if threads:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = threads
    return int(threads) if threads else None


def child_torch():
    """PyTorch in a child of `per_thread_count`, or None when it (or the parent) can't import it."""
    if os.environ.get(NO_TORCH):
        return None
    try:
        import torch
    except ImportError:
        return None
    return torch


def per_thread_count(script, argv, counts=(1, 2)):
    """Run `script` (a benchmark file) once per thread count in a child process, BLAS being fixed when
    numpy loads; print each child's output as it is and return {count: output}."""
    try:
        import torch  # noqa: F401
        env = dict(os.environ)
    except ImportError:  # the children go without it too
        env = dict(os.environ, **{NO_TORCH: "1"})
    outputs = {}
    for threads in counts:
        print(f"== BLAS (and PyTorch) on {threads} thread(s) ==", flush=True)
        done = subprocess.run([sys.executable, os.path.abspath(script), *argv], env=dict(env, **{CHILD: str(threads)}),
                              capture_output=True, text=True, check=False)
        print(done.stdout, end="", flush=True)
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            raise SystemExit(f"{os.path.basename(script)}: the {threads}-thread run failed")
        outputs[threads] = done.stdout
    return outputs


def interleaved(steps, repeats, number, warmup=None, before=None, settle=0.0, rounds=None):
    """Median seconds per call of each step in `steps` ({name: callable}).

    Each step first runs `warmup` untimed calls (default: `number`). Then each of `repeats`
    rounds times a block of `number` calls of every step in turn. `before` ({name: callable})
    runs untimed before each block of that step, e.g. to switch PyTorch's thread count.
    `settle` (seconds, or {name: seconds} for some steps only): then rest that long, so worker
    threads of the previous block fall idle, and run `number` untimed calls, so the timed block
    starts warm (a rest alone left it cold: bench_attention's floor read ~8% slow at T=16).
    `rounds`, a dict, receives every step's list of seconds per call, one per round, for
    `round_ratios`.
    """
    before = before or {}
    warmup = number if warmup is None else warmup
    rest_of = settle if isinstance(settle, dict) else dict.fromkeys(steps, settle)
    for name, step in steps.items():
        before.get(name, _nothing)()
        for _ in range(warmup):
            step()
    samples = {name: [] for name in steps}
    for _ in range(repeats):
        for name, step in steps.items():
            before.get(name, _nothing)()
            rest = rest_of.get(name, 0.0)
            if rest:
                time.sleep(rest)
                for _ in range(number):
                    step()
            t0 = time.perf_counter()
            for _ in range(number):
                step()
            samples[name].append((time.perf_counter() - t0) / number)
    if rounds is not None:
        rounds.update(samples)
    return {name: statistics.median(s) for name, s in samples.items()}


def round_ratios(rounds, name, baseline):
    """The ratio of step `name` to step `baseline` in each round of `interleaved`: (median, lower
    quartile, upper quartile). Both blocks of a round run within a few hundred milliseconds of each
    other, so the machine's speed, which drifts 2x over a run, cancels out of each ratio; the ratio
    of the two medians is exposed to that drift."""
    r = sorted(a / b for a, b in zip(rounds[name], rounds[baseline]))
    if len(r) < 2:
        return r[0], r[0], r[0]
    q1, q2, q3 = statistics.quantiles(r, n=4, method="inclusive")
    return q2, q1, q3


def per_round(out, start):
    """The per-round ratio a child of `per_thread_count` printed on its line beginning with `start`
    ("... per round 0.912 (quartiles ...)"), or None when it printed no such line."""
    lines = [ln for ln in out.splitlines() if ln.startswith(start)]
    return float(lines[0].split("per round ")[1].split()[0]) if lines else None


def _nothing():
    pass


def table(headers, rows):
    """Print `rows` (lists of str, or of numbers formatted with 3 decimals) under `headers`,
    the first column left-aligned and the others right-aligned."""
    cells = [[c if isinstance(c, str) else f"{c:.3f}" for c in row] for row in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *cells)]

    def line(row):
        first, *rest = row
        return "  ".join([f"{first:<{widths[0]}}"] + [f"{c:>{w}}" for c, w in zip(rest, widths[1:])])

    print(line(headers))
    for row in cells:
        print(line(row))
    print(flush=True)


def verdict(name, value, limit, unit=""):
    """One target line, PASS when value <= limit; returns whether it passed."""
    ok = value <= limit
    print(f"{'PASS' if ok else 'FAIL'}  {name}: {value:.3f}{unit} (target <= {limit:g}{unit})", flush=True)
    return ok


FLAGS_THAT_MATTER = ("avx2", "avx512f", "fma")  # numpy's and the BLAS's kernels differ by these


def processor():
    """The processor these figures come from, as one line: lscpu's model name and whether it has
    the flags that matter here. Ratios between libraries differ between machines of one kind
    (numpy's transcendental functions and the BLAS kernels are chosen by these flags)."""
    model, flags = None, set()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    for line in out.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "Model name" and model is None:
            model = value.strip()
        elif name.strip() == "Flags":
            flags = set(value.split())
    if not flags:  # no lscpu (or an old one without Flags): the kernel's own list
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    name, _, value = line.partition(":")
                    if name.strip() == "model name" and model is None:
                        model = value.strip()
                    elif name.strip() == "flags" and not flags:
                        flags = set(value.split())
        except OSError:
            pass
    model = model or platform.processor() or platform.machine() or "unknown"
    have = (", ".join(f"{flag} {'yes' if flag in flags else 'no'}" for flag in FLAGS_THAT_MATTER) if flags
            else "flags unknown")
    return f"{model} ({os.cpu_count()} logical CPUs; {have})"


def report_setup(minitensor, counts=None):
    """Print the processor (`processor()`), the run's BLAS thread count (or the `counts` the
    children run at, each in its own process), then apply minitensor's allocator tuning (opt-in,
    process-wide) and say whether it took. Returns whether it took."""
    print(f"processor: {processor()}")
    if counts:
        print("BLAS threads: " + " and ".join(map(str, counts)) + ", each count in a child process of its own (below)")
    else:
        n = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
        print(f"BLAS threads: {n or 'BLAS default (every core)'}"
              + (" (OPENBLAS_NUM_THREADS / OMP_NUM_THREADS)" if n else ""))
    applied = minitensor.tune_malloc()
    print("minitensor.tune_malloc(): " + ("applied (glibc mmap/trim thresholds raised)" if applied
                                          else "not applied (not glibc); timings use the default allocator"))
    return applied


def import_torch(user_env):
    """PyTorch, or None (with a note) when it is not installed.

    `user_env` is os.environ as it was before the script pinned the thread variables to 1: numpy
    has read them by now, so they are put back for PyTorch, whose default thread count should be
    the one its users get, not our pin."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if var not in user_env:
            os.environ.pop(var, None)
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: skipping the PyTorch baseline.")
        return None
    return torch


def run_options(argv, doc, full, quick, smoke, what="calls"):
    """The options every timing script shares: --quick, --repeats, --number and the test suite's
    hidden --smoke. `full`, `quick` and `smoke` are (repeats, number) pairs; returns them resolved."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{quick[0]} repeats of {quick[1]} {what} (well under a minute)")
    parser.add_argument("--repeats", type=int, help=f"interleaved repeats (default {full[0]}, --quick {quick[0]})")
    parser.add_argument("--number", type=int,
                        help=f"{what} per timed block (default {full[1]}, --quick {quick[1]})")
    parser.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    repeats, number = smoke if args.smoke else quick if args.quick else full
    return args.repeats or repeats, args.number or number

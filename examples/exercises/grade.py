r"""Grade a student's backward: gradcheck on several shapes, and say which input's gradient is wrong.

    python -m examples.exercises.grade softmax    path/to/student_softmax.py
    python -m examples.exercises.grade layer_norm path/to/student_layer_norm.py
    python -m examples.exercises.grade sdpa       path/to/student_sdpa.py
    python examples/exercises/grade.py --list

For every case (a set of input shapes) the grader
  1. runs the student's function and compares its forward with minitensor's own op (the forward
     is given, but a changed forward would make the gradient check meaningless);
  2. checks that the output was made by the student's `Function` (not by composing library ops,
     whose gradients are already right);
  3. checks each input's gradient on its own with `minitensor.autograd.gradcheck` (float64,
     random upstream weights, central differences), so a failure names the input, the worst
     element, and the analytic vs numeric value.
Exit status: 0 when every case passes, 1 otherwise (2 for a usage error).
"""
import argparse
import importlib.util
import math
import os
import sys
import traceback

import numpy as np

try:
    import minitensor
except ImportError:  # run from a clone without `pip install -e .`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    import minitensor
import minitensor.nn.functional as F
from minitensor.autograd import GradcheckError, gradcheck


class Case:
    """One set of inputs: `make(rng)` returns the positional arguments of the student's function."""

    def __init__(self, label, make):
        self.label, self.make = label, make


class Exercise:
    def __init__(self, name, entry, arg_names, reference, cases, aliases=()):
        self.name, self.entry, self.arg_names = name, entry, arg_names
        self.reference, self.cases, self.aliases = reference, cases, aliases


def _randn(rng, *shape, scale=1.0):
    return minitensor.from_numpy(rng.standard_normal(shape) * scale)


def _softmax_case(shape, scale=1.0):
    return Case(f"x {shape}" + (f" times {scale:g}" if scale != 1 else ""), lambda rng: (_randn(rng, *shape, scale=scale),))


def _layer_norm_case(shape):
    d = shape[-1]
    # weight and bias are random, not ones and zeros: a gradient that ignores them must not pass
    return Case(f"x {shape}, weight ({d},), bias ({d},)",
                lambda rng: (_randn(rng, *shape), _randn(rng, d), _randn(rng, d), 1e-5))


def _sdpa_case(q, k, v, causal=False):
    def make(rng):
        mask = None
        if causal:
            mask = minitensor.from_numpy(np.tril(np.ones((q[-2], k[-2]), dtype=bool)))
        return _randn(rng, *q), _randn(rng, *k), _randn(rng, *v), mask

    return Case(f"q {q}, k {k}, v {v}" + (", causal mask" if causal else ""), make)


def _sdpa_reference(q, k, v, mask=None):
    s = (q @ k.mT) * (1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return F.softmax(s, dim=-1) @ v


EXERCISES = {
    e.name: e for e in [
        Exercise("softmax", "softmax", ("x",), lambda x: F.softmax(x, dim=-1), [
            _softmax_case((5,)), _softmax_case((3, 4)), _softmax_case((2, 3, 5)), _softmax_case((1, 1)),
            _softmax_case((2, 6), scale=30.0),
        ]),
        Exercise("layer_norm", "layer_norm", ("x", "weight", "bias", "eps"),
                 lambda x, w, b, eps: F.layer_norm(x, (x.shape[-1],), w, b, eps), [
                     _layer_norm_case((6,)), _layer_norm_case((3, 4)), _layer_norm_case((2, 3, 5)),
                 ], aliases=("layernorm",)),
        Exercise("sdpa", "scaled_dot_product_attention", ("q", "k", "v", "mask"), _sdpa_reference, [
            _sdpa_case((3, 4), (3, 4), (3, 2)),
            _sdpa_case((2, 3, 4), (2, 5, 4), (2, 5, 3)),
            _sdpa_case((4, 3), (4, 3), (4, 2), causal=True),
            _sdpa_case((2, 4, 2), (2, 4, 2), (2, 4, 3), causal=True),
        ], aliases=("attention", "scaled_dot_product_attention")),
    ]
}


def find_exercise(name):
    for e in EXERCISES.values():
        if name == e.name or name in e.aliases:
            return e
    raise KeyError(f"unknown exercise {name!r}; choose one of: {', '.join(EXERCISES)}")


def load_student(path):
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    module_name = "student_" + os.path.splitext(os.path.basename(path))[0] + f"_{abs(hash(path))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # lets the student's file use dataclasses, pickling, etc.
    spec.loader.exec_module(module)
    return module


def _not_implemented(e):
    return f"NOT IMPLEMENTED: the backward raised NotImplementedError:\n      {e}"


def _student_error(e):
    frames = traceback.extract_tb(e.__traceback__)
    where = next((f for f in reversed(frames) if "minitensor" not in f.filename), frames[-1] if frames else None)
    at = f' (File "{where.filename}", line {where.lineno})' if where else ""
    return f"ERROR: {type(e).__name__}: {e}{at}"


def grade_case(exercise, module, case, seed, out):
    """Grade one case; print what happened; return 'pass', 'fail' or 'not implemented'."""
    fn = getattr(module, exercise.entry)
    rng = np.random.default_rng(seed)
    args = case.make(rng)
    tensors = [i for i, a in enumerate(args) if isinstance(a, minitensor.Tensor) and a.dtype.kind == "f"]

    # 1. forward against the library's op
    try:
        got = fn(*args)
    except Exception as e:  # noqa: BLE001 (any student error is reported, not raised)
        out(f"    {_student_error(e)}")
        return "fail"
    want = exercise.reference(*args)
    if tuple(got.shape) != tuple(want.shape) or not np.allclose(got.numpy(force=True), want.numpy(force=True), rtol=1e-7, atol=1e-9):
        out(f"    WRONG FORWARD: output of shape {tuple(got.shape)} differs from {exercise.entry} of minitensor "
            f"(shape {tuple(want.shape)}); the forward was given: restore it")
        return "fail"

    # 2. the student's own Function must make the output
    probe_args = [a.detach().requires_grad_(True) if i in tensors else a for i, a in enumerate(args)]
    probe = fn(*probe_args)
    node = probe.grad_fn
    if node is None or type(node).__module__ != module.__name__:
        made = "no graph node" if node is None else f"'{node.name()}' from {type(node).__module__}"
        out(f"    NOT YOUR FUNCTION: the output was made by {made}, not by a Function defined in your file; "
            "the exercise is to write that Function's backward")
        return "fail"

    # 3. each input's gradient on its own, so a failure names exactly one input
    for i in tensors:
        name = exercise.arg_names[i]
        inputs = [a.detach().requires_grad_(True) if j == i else (a.detach() if j in tensors else a)
                  for j, a in enumerate(args)]
        try:
            gradcheck(fn, tuple(inputs), seed=seed)
        except NotImplementedError as e:
            out(f"    {_not_implemented(e)}")
            return "not implemented"
        except GradcheckError as e:
            out(f"    WRONG GRADIENT for input '{name}' (argument {i}):")
            out("      " + str(e).replace("\n", "\n      "))
            return "fail"
        except Exception as e:  # noqa: BLE001 (wrong shape, wrong count, a typo: say so, with the line)
            out(f"    while checking the gradient of '{name}': {_student_error(e)}")
            return "fail"
    return "pass"


def grade(exercise_name, path, out=print, seed=0):
    """Grade the file at `path`; return the process exit status (0: every case passes)."""
    exercise = find_exercise(exercise_name)
    try:
        module = load_student(path)
    except Exception as e:  # noqa: BLE001
        out(f"could not load {path}: {_student_error(e)}")
        return 1
    if not callable(getattr(module, exercise.entry, None)):
        out(f"{path} defines no function '{exercise.entry}': keep the name the exercise file uses")
        return 1
    out(f"grading '{exercise.name}' in {path}")
    passed = 0
    for n, case in enumerate(exercise.cases, 1):
        lines = []
        result = grade_case(exercise, module, case, seed + n, lines.append)
        out(f"  case {n}/{len(exercise.cases)}: {case.label:<52} {result.upper() if result != 'pass' else 'ok'}")
        for line in lines:
            out(line)
        if result == "not implemented":
            out("result: not implemented yet (write the backward, then run the grader again)")
            return 1
        passed += result == "pass"
    if passed == len(exercise.cases):
        out(f"result: PASSED, {passed}/{len(exercise.cases)} cases")
        return 0
    out(f"result: FAILED, {passed}/{len(exercise.cases)} cases pass")
    return 1


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m examples.exercises.grade",
                                     description="Grade a student's backward with finite differences.")
    parser.add_argument("exercise", nargs="?", help=f"one of: {', '.join(EXERCISES)}")
    parser.add_argument("path", nargs="?", help="the student's file")
    parser.add_argument("--list", action="store_true", help="list the exercises and their cases")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    args = parser.parse_args(argv)
    if args.list:
        for e in EXERCISES.values():
            print(f"{e.name}: {e.entry}({', '.join(e.arg_names)})")
            for c in e.cases:
                print(f"    {c.label}")
        return 0
    if not args.exercise or not args.path:
        parser.print_usage()
        return 2
    try:
        return grade(args.exercise, args.path, seed=args.seed)
    except KeyError as e:
        print(e.args[0])
        return 2


if __name__ == "__main__":
    sys.exit(main())

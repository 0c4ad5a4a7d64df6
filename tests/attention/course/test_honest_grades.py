"""Issue 32: no wrong answer scores, and a wrong gradient's report names the usual slip.

The audit submits, for every exercise, answers that are wrong in the usual ways (0, twice the
true gradient, the true one transposed, its sign flipped; for the topological sort an empty,
reversed or doubled order, on every graph but the 3000-node chain, which costs 0.6 s a check)
and requires 0 points on every case. It grades in this process (`check_case`, the grader's own
two halves joined directly): the verdicts are the same as in a child, at a fraction of the cost.
"""
import importlib.resources
import importlib.util
import itertools
import sys

import numpy as np
import pytest

import minitensor as mt
from attention.course import check, ninja
from attention.course.exercises import EXERCISES

NAMES = list(EXERCISES)
_loaded = itertools.count()


def _reference(name):
    """A fresh copy of the teacher's source of `name` as a module (so patching it changes no other)."""
    path = str(importlib.resources.files("attention.course.source") / f"{name}.py")
    module_name = f"student_audit_{name}_{next(_loaded)}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module, path


def _transposed(a):
    return a.swapaxes(-1, -2) if a.ndim >= 2 else a[::-1]  # a vector has no transpose: reversed instead


WRONG_GRADIENTS = {"zero": lambda a: a * 0, "twice": lambda a: a * 2, "transposed": _transposed,
                   "sign flipped": lambda a: -a}
WRONG_ORDERS = {"empty": lambda order: [], "reversed": lambda order: order[::-1],
                "each node twice": lambda order: [n for n in order for _ in range(2)]}


def _with_wrong_backward(name, wrong):
    """The reference solution whose every backward returns `wrong` of the right gradients."""
    module, path = _reference(name)
    for cls in check._student_functions(module):
        right = cls.backward

        def backward(ctx, g, right=right):
            out = right(ctx, g)
            many = isinstance(out, tuple)
            out = tuple(None if o is None else mt.from_numpy(np.ascontiguousarray(wrong(o.numpy(force=True))))
                        for o in (out if many else (out,)))
            return out if many else out[0]

        cls.backward = staticmethod(backward)
    return module, path


def _with_wrong_steps(name, wrong):
    """The reference solution of the ninja exercise whose every step returns `wrong` of the right
    gradient (its `backward`, and so its `train`, call the steps by name: they get the wrong ones too)."""
    module, path = _reference(name)
    for step in ninja.STEPS:
        right = getattr(module, f"d_{step}")
        setattr(module, f"d_{step}", lambda c, p, d, right=right: np.ascontiguousarray(wrong(right(c, p, d))))
    return module, path


def _with_wrong_order(wrong):
    module, path = _reference("topo_sort")
    right = module.topological_order
    module.topological_order = lambda root: wrong(right(root))
    return module, path


_TRUE_GRADIENTS = {}


@pytest.fixture
def remembered_references(monkeypatch):
    """Finite differences of the reference computed once per case and input: every wrong answer to
    a case is compared with the same true gradient, and computing it is most of a check's time."""
    compute = check._numeric_gradient

    def remembered(fn, args, i, u):
        key = (id(fn), i, u.tobytes(), *(a.numpy(force=True).tobytes() if isinstance(a, mt.Tensor) else repr(a)
                                        for a in args))
        if key not in _TRUE_GRADIENTS:
            _TRUE_GRADIENTS[key] = compute(fn, args, i, u)
        return _TRUE_GRADIENTS[key]

    monkeypatch.setattr(check, "_numeric_gradient", remembered)


AUDIT = ([(n, w) for n in NAMES if EXERCISES[n].kind in ("backward", "function", "steps") for w in WRONG_GRADIENTS]
         + [("topo_sort", w) for w in WRONG_ORDERS])


@pytest.mark.parametrize("name, wrong", AUDIT, ids=[f"{n}-{w}" for n, w in AUDIT])
def test_a_wrong_answer_scores_0_on_every_case(name, wrong, remembered_references):
    exercise = EXERCISES[name]
    if exercise.kind == "order":
        module, path = _with_wrong_order(WRONG_ORDERS[wrong])
    elif exercise.kind == "steps":  # every step wrong, and so the training run too
        module, path = _with_wrong_steps(name, WRONG_GRADIENTS[wrong])
    else:
        module, path = _with_wrong_backward(name, WRONG_GRADIENTS[wrong])
    cases = list(enumerate(exercise.cases))
    if name == "topo_sort":
        # the chain of 3000 nodes costs 0.6 s a check (the test budget is tight): its wrong orders lose
        # every gradient as the ladder's do, and test_exercises fails a recursive walk on it
        cases = cases[:-1]
    # the grader's default seed (case n gets seed + n); the tolerance is relative, so no other seed differs
    passed = [case.label for n, case in cases if check.check_case(exercise, module, path, case, n)[0] != "fail"]
    assert not passed, f"{name}, {wrong}: scores on {passed}"


@pytest.mark.parametrize("name", [n for n in NAMES if EXERCISES[n].kind in ("backward", "function")])
def test_every_case_has_a_gradient_of_meaningful_size_for_every_input(name):
    exercise = EXERCISES[name]
    for n, case in enumerate(exercise.cases):
        rng = np.random.default_rng(n)
        args = case.make(rng)
        floats = [i for i, a in enumerate(args) if isinstance(a, mt.Tensor) and a.dtype.kind == "f"]
        u = rng.standard_normal(tuple(exercise.reference(*args).shape))
        for i, g in zip(floats, check._gradients(exercise.reference, args, floats, u)):
            # 100 times the absolute tolerance: returning 0, or twice the gradient, is far outside it
            assert np.abs(g).max() > 100 * check.NUMERIC_TOL[0], f"{name} case {n + 1} ({case.label}): input {i}"


def test_every_ninja_step_has_a_gradient_of_meaningful_size():
    """As the grader draws them (case n: seed n): the forward values, the random upstream gradients."""
    exercise = EXERCISES["backprop_ninja"]
    for n, case in enumerate(exercise.cases):
        if case.variable is None:
            continue
        rng = np.random.default_rng(n)
        params, tokens, targets = case.make(rng)
        cache = ninja.forward_values(params, tokens, targets)
        true = ninja.true_gradient(case.variable, cache, params, tokens, targets,
                                   ninja.random_upstream(case.variable, cache, rng))
        assert np.abs(true).max() > 100 * check.AUTOGRAD_TOL[0], case.label


def test_the_tolerance_is_relative_to_a_small_gradient():
    true = np.array([3e-6, -2e-6, 1e-6])  # smaller than the absolute tolerance of 1e-5
    assert check.gradient_pair("x", true * (1 + 1e-7), true, "finite differences") == []
    for wrong in (0 * true, 2 * true, -true):
        assert check.gradient_pair("x", wrong, true, "finite differences"), wrong


def _lines(name, old, new, case):
    """The report of the reference solution of `name` with `old` replaced by `new`, on one case."""
    module, path = _reference(name)
    source = open(path, encoding="utf-8").read()
    assert old in source, f"the solution of {name} changed: update this test's edit"
    code = compile(source.replace(old, new), path, "exec")
    exec(code, module.__dict__)
    status, lines = check.check_case(EXERCISES[name], module, path, EXERCISES[name].cases[case], case)
    assert status == "fail"
    return "\n".join(lines)


# (exercise, the line changed, the bug, the case, what the report must say)
SLIPS = [
    ("sdpa", "gs = gs * ctx.scale", "gs = gs", 0,
     "your gradient is 2x the true one everywhere, i.e. times sqrt(d_k)=2 (d_k=4): did you forget the "
     "1/sqrt(d_k) scale?\n  or: a term counted twice, or a factor 2 too many?"),
    ("sdpa", "gs = gs * ctx.scale", "gs = gs", 3,
     "your gradient is 1.414x the true one everywhere, i.e. times sqrt(d_k)=1.414 (d_k=2): did you forget the "
     "1/sqrt(d_k) scale?"),
    ("sdpa", "gs = gs * ctx.scale", "gs = gs * ctx.scale ** 2", 3,
     "i.e. times 1/sqrt(d_k)=0.7071 (d_k=2): is the 1/sqrt(d_k) scale applied twice?"),
    ("attention_block", "dw_q, dw_k, dw_v = (rows(dt).mT @ rows(x) for dt in (dq, dk, dv))",
     "dw_q, dw_k, dw_v = (rows(x).mT @ rows(dt) for dt in (dq, dk, dv))", 3,
     "your gradient is the true one transposed (its last two dims swapped)"),
    ("layer_norm", "gb = g.reshape(-1, n_features).sum(dim=0)", "gb = g.reshape(-1, n_features).mean(dim=0)", 2,
     "your gradient is 1/6 of the true one everywhere, i.e. times 1/6 (the input is used by 6 rows): a mean over "
     "a broadcast axis where the sum belongs?"),
    ("layer_norm", "gb = g.reshape(-1, n_features).sum(dim=0)", "gb = g", 2,
     "your gradient for 'bias' is (2, 3, 5), its shape is (5,): 'bias' is broadcast over dims [0, 1] of it, so "
     "its gradient is the sum over them: a missing sum over a broadcast axis"),
    ("sdpa", "gk = gs.mT @ q", "gk = (gs.mT @ q).mT", 0,
     "a transpose too many or too few?"),
    ("cross_entropy", "return g * (p - from_numpy(target_rows)) / n_rows, None",
     "return g * (p - from_numpy(target_rows)) / n_rows / n_rows, None", 0,
     "i.e. times 1/N=1/4: divided by N twice?"),
    ("gelu", "return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du_dx)",
     "return -g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du_dx)", 0, "with its sign flipped everywhere"),
]


@pytest.mark.parametrize("name, old, new, case, expected", SLIPS, ids=[f"{s[0]}-{i}" for i, s in enumerate(SLIPS)])
def test_a_usual_slip_is_named(name, old, new, case, expected):
    out = _lines(name, old, new, case)
    assert expected in out, out

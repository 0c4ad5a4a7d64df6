"""attention/course/exercises.py: each exercise passes its reference solution, stops at its stub,
and fails a deliberately broken solution with the message that names the bug."""
import importlib.resources
import importlib.util

import numpy as np
import pytest

import minitensor as mt
from attention.course import release as rel
from attention.course.exercises import EXERCISES
from attention.course.grade import grade_exercise, report

NAMES = list(EXERCISES)


def _source_path(name):
    return str(importlib.resources.files("attention.course.source") / f"{name}.py")


def _graded(name, path, **kw):
    result = grade_exercise(EXERCISES[name], str(path), **kw)
    return result, "\n".join(report(result))


@pytest.mark.parametrize("name", NAMES)
def test_the_reference_solution_passes(name):
    result, out = _graded(name, _source_path(name))
    assert result.passed and result.score == EXERCISES[name].max_score, out
    assert "result: PASSED" in out and "FAIL" not in out


@pytest.mark.parametrize("name", NAMES)
def test_the_released_stub_fails_cleanly_as_not_implemented(tmp_path, name):
    rel.release(str(tmp_path), [name])
    result, out = _graded(name, tmp_path / f"{name}.py")
    assert result.score == 0 and not result.passed
    assert [c.status for c in result.cases] == ["not implemented"] + ["not run"] * (len(result.cases) - 1)
    assert "NOT IMPLEMENTED: " in out and "Hint 1: " + EXERCISES[name].hints[0] in out
    assert "result: not implemented yet" in out and "Traceback" not in out


def _broken(tmp_path, name, old, new):
    src = rel.source_text(name)
    assert old in src, f"the solution of {name} changed: update this test's edit"
    path = tmp_path / f"student_{name}.py"
    path.write_text(src.replace(old, new), encoding="utf-8")
    return path


# (exercise, the line changed, the bug, the text the report must hold, inputs whose gradient must be right)
BROKEN = [
    ("softmax", "return p * (g - (g * p).sum(dim=-1, keepdim=True))", "return p * g",
     "WRONG GRADIENT for input 'x' (argument 0)", ()),
    ("softmax", "return p * (g - (g * p).sum(dim=-1, keepdim=True))",
     "return 2 * p * (g - (g * p).sum(dim=-1, keepdim=True))", "your gradient is 2x the true one everywhere", ()),
    ("layer_norm", "gb = g.reshape(-1, n_features).sum(dim=0)", "gb = g.reshape(-1, n_features).mean(dim=0)",
     "WRONG GRADIENT for input 'bias' (argument 2)", ("'x'", "'weight'")),
    ("layer_norm", "gx = rstd * (gxhat - gxhat.mean(dim=-1, keepdim=True) - ", "gx = rstd * (gxhat - ",
     "WRONG GRADIENT for input 'x' (argument 0)", ("'weight'", "'bias'")),
    ("sdpa", "gk = gs.mT @ q", "gk = gs.mT @ q / ctx.scale", "WRONG GRADIENT for input 'k' (argument 1)",
     ("'q'", "'v'")),
    ("sdpa", "gv = p.mT @ g", "gv = p @ g", "WRONG GRADIENT for input 'v' (argument 2)", ("'q'", "'k'")),
    ("cross_entropy", "return g * (p - from_numpy(target_rows)) / n_rows, None",
     "return g * (p - from_numpy(target_rows)), None",
     "your gradient is 4x the true one everywhere, i.e. times N=4 (the number of rows): did you forget to divide by N?",
     ()),
    ("cross_entropy", "return g * (p - from_numpy(target_rows)) / n_rows, None",
     "return (p - from_numpy(target_rows)) / n_rows, None", "divided by the upstream gradient g", ()),
    ("cross_entropy", "return g * (p - from_numpy(target_rows)) / n_rows, None",
     "return g * (from_numpy(target_rows) - p) / n_rows, None", "with its sign flipped everywhere", ()),
    ("gelu", "du_dx = C * (1.0 + 3.0 * A * x * x)", "du_dx = C * (1.0 + A * x * x)",
     "WRONG GRADIENT for input 'x' (argument 0)", ()),
    ("gelu", "return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du_dx)",
     "return g * ((1.0 + t) + x * (1.0 - t * t) * du_dx)", "your gradient is 2x the true one everywhere", ()),
    ("embedding", "np.add.at(table_grad, indices.numpy(), g.numpy())", "table_grad[indices.numpy()] += g.numpy()",
     "only rows looked up more than once are wrong (rows [1, 3], looked up [3, 2] times)", ()),
    ("attention_block", "dx = dq @ w_q + dk @ w_k + dv @ w_v", "dx = dq @ w_q + dk @ w_k",
     "WRONG GRADIENT for input 'x' (argument 0)", ("'w_q'", "'w_k'", "'w_v'", "'w_o'")),
    ("attention_block", "dq = (ds @ k) * ctx.scale", "dq = ds @ k",
     "WRONG GRADIENT for input 'w_q' (argument 1): 6 of 6 elements are wrong\n"
     "      worst, element (1, 2): yours 0.109133, autograd 0.0771685\n"
     "      your gradient is 1.414x the true one everywhere, i.e. times sqrt(d_k)=1.414 (d_k=2): did you forget "
     "the 1/sqrt(d_k) scale?", ("'w_k'", "'w_v'", "'w_o'")),
    ("attention_block", "return mixed @ Wo.T", "return mixed @ Wo", "WRONG FORWARD", ()),
]


@pytest.mark.parametrize("name, old, new, expected, right", BROKEN, ids=[f"{b[0]}-{i}" for i, b in enumerate(BROKEN)])
def test_a_broken_solution_fails_with_the_message_that_names_the_bug(tmp_path, name, old, new, expected, right):
    result, out = _graded(name, _broken(tmp_path, name, old, new))
    assert not result.passed and result.score < EXERCISES[name].max_score
    assert expected in out, out
    for case in result.cases:  # one (yours, true) pair per wrong input, none for the right ones
        text = "\n".join(case.lines)
        assert text.count("WRONG GRADIENT for") == text.count("  worst, element")
        for good in right:
            assert f"for input {good}" not in text, out
    assert "result: FAILED" in out and "hint 1: " in out


def _topo_with(tmp_path, body, name="student_topo.py"):
    src = rel.source_text("topo_sort")
    start, end = src.index("    # BEGIN SOLUTION"), src.index("    # END SOLUTION\n") + len("    # END SOLUTION\n")
    path = tmp_path / name
    path.write_text(src[:start] + body + src[end:], encoding="utf-8")
    return path


RECURSIVE = '''    order, seen = [], set()

    def visit(node):
        if node in seen:
            return
        seen.add(node)
        for child, _ in node.gradient_edges:
            if not isinstance(child, Tensor):
                visit(child)
        order.append(node)

    visit(root)
    return order[::-1]
'''

BREADTH_FIRST = '''    order, seen, queue = [], {root}, [root]
    while queue:
        node = queue.pop(0)
        order.append(node)
        for child, _ in node.gradient_edges:
            if not isinstance(child, Tensor) and child not in seen:
                seen.add(child)
                queue.append(child)
    return order
'''

WITH_LEAVES = '''    order, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        order.append(node)
        for child, _ in getattr(node, "gradient_edges", ()):
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return order
'''

TWICE = '''    order = [root]
    for child, _ in root.gradient_edges:
        order += [] if isinstance(child, Tensor) else [child, child]
    return order
'''


def test_topo_sort_a_recursive_walk_fails_on_the_deep_chain_at_the_students_line(tmp_path):
    path = _topo_with(tmp_path, RECURSIVE)
    result, out = _graded("topo_sort", path)
    assert [c.status for c in result.cases] == ["pass"] * 5 + ["fail"]
    line = path.read_text().splitlines().index("                visit(child)") + 1
    assert "RecursionError" in out and f'File "{path}", line {line}, in visit (and ' in out
    assert "use an explicit stack" in out


def test_topo_sort_breadth_first_is_no_topological_order(tmp_path):
    result, out = _graded("topo_sort", _topo_with(tmp_path, BREADTH_FIRST))
    residual = result.cases[2]
    assert residual.status == "fail" and "residual" in residual.label
    text = "\n".join(residual.lines)
    assert "WRONG GRADIENT for leaf 'a' (3,)" in text and "the engine's" in text
    assert "'ExpBackward' (at 2 in your order) comes before 'MulBackward' (at 4)" in text


def test_topo_sort_leaves_and_duplicates_are_named(tmp_path):
    _, out = _graded("topo_sort", _topo_with(tmp_path, WITH_LEAVES))
    assert "your order holds a leaf tensor of shape (4,)" in out
    _, out = _graded("topo_sort", _topo_with(tmp_path, TWICE, "twice.py"))
    assert "'MulBackward' is in your order twice" in out and "your order misses" in out


def _load(path):
    spec = importlib.util.spec_from_file_location("reference_" + path.split("/")[-1][:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _torch_versions(torch):
    F = torch.nn.functional

    def sdpa(q, k, v, mask=None):
        s = q @ k.mT / q.shape[-1] ** 0.5
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        return torch.softmax(s, -1) @ v

    def block(x, wq, wk, wv, wo, causal=False):
        q, k, v = x @ wq.mT, x @ wk.mT, x @ wv.mT
        s = q @ k.mT / wq.shape[0] ** 0.5
        if causal:
            t = x.shape[-2]
            s = s.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), float("-inf"))
        return torch.softmax(s, -1) @ v @ wo.mT

    return {
        "softmax": lambda x: torch.softmax(x, -1),
        "layer_norm": lambda x, w, b, eps: F.layer_norm(x, (x.shape[-1],), w, b, eps),
        "sdpa": sdpa,
        "cross_entropy": F.cross_entropy,
        "gelu": lambda x: F.gelu(x, approximate="tanh"),
        "embedding": F.embedding,
        "attention_block": block,
    }


@pytest.mark.parametrize("name", [n for n in NAMES if EXERCISES[n].kind in ("backward", "function")])
def test_each_reference_solution_gives_pytorchs_values_and_gradients(name):
    torch = pytest.importorskip("torch")
    exercise, module = EXERCISES[name], _load(_source_path(name))
    for case_number, case in enumerate(exercise.cases):
        rng = np.random.default_rng(case_number)
        args = case.make(rng)
        floats = [i for i, a in enumerate(args) if hasattr(a, "dtype") and a.dtype.kind == "f"]
        mine = [a.detach().requires_grad_(True) if i in floats else a for i, a in enumerate(args)]
        theirs = [torch.tensor(a.numpy(force=True), requires_grad=i in floats) if hasattr(a, "numpy") else a
                  for i, a in enumerate(args)]
        out, want = getattr(module, exercise.entry)(*mine), _torch_versions(torch)[name](*theirs)
        np.testing.assert_allclose(out.numpy(force=True), want.detach().numpy(), rtol=1e-10, atol=1e-12)
        u = rng.standard_normal(tuple(want.shape))
        out.backward(mt.from_numpy(np.asarray(u)))
        want.backward(torch.tensor(u))
        for i in floats:
            np.testing.assert_allclose(mine[i].grad.numpy(), theirs[i].grad.numpy(), rtol=1e-9, atol=1e-12,
                                       err_msg=f"{name}, case {case_number}, input {exercise.arg_names[i]}")

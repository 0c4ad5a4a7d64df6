"""torch.profiler and torch.autograd.profiler: each op, VJP and range of the user's code as a timed event,
PyTorch's table and schedule. Times are never asserted; the table's layout is compared with PyTorch's
own on events of given times, and the events' names, nesting and counts on real programs."""
import json
import re
import warnings
from collections import Counter

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from minitensor import profiler as mt_profiler
from minitensor.autograd import grad_mode, profiler as mt_autograd_profiler

from .test_run import run_in_process

ENGINE = "autograd::engine::evaluate_function: "


def _events(lib, specs):
    """FunctionEvents of `lib`'s autograd profiler, from (id, name, start, end, parent, memory, shapes, user)."""
    events = []
    for i, name, start, end, parent, memory, shapes, user in specs:
        e = lib.FunctionEvent(i, name, 1, start, end, input_shapes=shapes, stack=[], cpu_memory_usage=memory,
                              is_user_annotation=user)
        if parent is not None:
            e.set_cpu_parent(events[parent])
            events[parent].append_cpu_child(e)
        events.append(e)
    return events


SPECS = [
    (0, "model_inference", 0.0, 5000.0, None, 1200, [], True),
    (1, "aten::matmul", 10.0, 980.5, 0, 400, [[4, 3], [3, 2]], False),
    (2, "aten::relu", 1000.0, 1133.3, 0, 32, [[4, 2]], False),
    (3, "aten::matmul", 1200.0, 1300.0, 0, 400, [[8, 3], [3, 2]], False),
    (4, ENGINE + "torch::autograd::AccumulateGrad", 6000.0, 6100.25, None, 0, [], False),
    (5, "torch::autograd::AccumulateGrad", 6001.0, 6090.0, 4, 0, [[4, 3]], False),
    (6, "a_long_range_" * 6, 7000.0, 2_107_000.0, None, 5 * 2 ** 20, [], True),
]


@pytest.mark.parametrize("profile_memory", [False, True])
@pytest.mark.parametrize("averages, options", [
    (None, dict(sort_by="cpu_time_total", row_limit=3)),
    ({}, dict(sort_by="self_cpu_time_total")),
    ({}, dict(sort_by="count", row_limit=2)),
    (dict(group_by_input_shapes=True), dict(sort_by="cuda_time_total", time_unit="ms")),
    ({}, dict(max_name_column_width=30, header="HEAD", top_level_events_only=True)),
    ({}, dict(sort_by="self_cpu_memory_usage", time_unit="s")),
    (None, dict(max_shapes_column_width=12)),
])
def test_the_table_prints_as_pytorchs(profile_memory, averages, options):
    torch_util = pytest.importorskip("torch.autograd.profiler_util")

    def table(lib, events):
        listed = lib.EventList(events, profile_memory=profile_memory)
        listed._tree_built = True  # (PyTorch's own profile sets this once it has nested the events)
        return (listed if averages is None else listed.key_averages(**averages)).table(**options)

    ours = table(mt_autograd_profiler, _events(mt_autograd_profiler, SPECS))
    theirs = table(torch_util, _events(torch_util, SPECS))
    assert ours == theirs


def test_times_and_memory_of_nested_events():
    events = _events(mt_autograd_profiler, SPECS)
    top = events[0]
    assert top.cpu_time_total == 5000.0 and top.self_cpu_time_total == pytest.approx(5000.0 - 970.5 - 133.3 - 100.0)
    assert top.self_cpu_memory_usage == 1200 - 832
    averaged = mt_autograd_profiler.EventList(events).key_averages()
    matmul = next(a for a in averaged if a.key == "aten::matmul")
    assert (matmul.count, matmul.cpu_time_total, matmul.cpu_time) == (2, 1070.5, 535.25)
    total = mt_autograd_profiler.EventList(events).total_average()
    assert total.count == 7 and total.self_cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in events))


def _program(torch, F):
    torch.manual_seed(0)
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(3, 2, requires_grad=True)
    with torch.profiler.profile(record_shapes=True) as prof:
        with torch.profiler.record_function("model_inference"):
            y = torch.tanh(x @ w).relu() * 2.0
        y.sum().backward()
    return prof


def test_events_name_ops_and_nodes_and_nest_in_time():
    prof = _program(mt, F)
    events = prof.events()
    names = [e.name for e in events]
    assert names[:5] == ["model_inference", "aten::matmul", "aten::tanh", "aten::relu", "aten::mul"]
    inside = [e for e in events if e.cpu_parent is events[0]]
    assert [e.name for e in inside] == names[1:5]  # the ops inside the range are its children
    for e in events:
        assert e.self_cpu_time_total <= e.cpu_time_total
        for child in e.cpu_children:
            assert e.time_range.start <= child.time_range.start <= child.time_range.end <= e.time_range.end
    matmul = events[1]
    assert matmul.input_shapes == [[4, 3], [3, 2]]
    backward = [e for e in events if e.name.startswith(ENGINE)]
    for outer in backward:  # each node's evaluation holds the node's own event
        assert [c.name for c in outer.cpu_children][:1] == [outer.name[len(ENGINE):]]
    assert sum(e.self_cpu_time_total for e in events) == pytest.approx(
        sum(e.cpu_time_total for e in events if e.cpu_parent is None))


def test_the_backward_events_are_pytorchs_for_the_same_program():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF

    def nodes(prof):
        return Counter(e.name for e in prof.events() if e.name.startswith(ENGINE))

    ours, theirs = nodes(_program(mt, F)), nodes(_program(torch, TF))
    assert ours == theirs and ours[ENGINE + "torch::autograd::AccumulateGrad"] == 2


def test_a_composite_op_is_one_node_where_pytorch_has_several():
    """minitensor's fused ops (cross-entropy, linear) are one node: their events are among PyTorch's."""
    torch = pytest.importorskip("torch")

    def nodes(lib):
        lib.manual_seed(0)
        lin, emb = lib.nn.Linear(5, 3), lib.nn.Embedding(10, 5)
        idx, y = lib.tensor([1, 2, 3, 4]), lib.tensor([0, 1, 2, 1])
        with lib.profiler.profile() as prof:
            h = lib.tanh(emb(idx))
            (lib.nn.functional.cross_entropy(lin(h), y) + (h ** 2).mean()).backward()
        return Counter(e.name for e in prof.events() if e.name.startswith(ENGINE))

    ours, theirs = nodes(mt), nodes(torch)
    assert ours - theirs == Counter()
    assert set(theirs - ours) == {ENGINE + "LogSoftmaxBackward0", ENGINE + "TBackward0"}


def test_profiling_changes_no_number_and_leaves_nothing_behind():
    def grads(profiled):
        mt.manual_seed(3)
        x = mt.randn(5, 4, dtype=mt.float64, requires_grad=True)
        w = mt.randn(4, 3, dtype=mt.float64, requires_grad=True)
        v = mt.randn(5, 3, dtype=mt.float64)
        if profiled:
            with mt.profiler.profile(record_shapes=True, profile_memory=True, with_stack=True, with_flops=True):
                (F.softmax(x @ w, dim=-1) * v).sum().backward()
        else:
            (F.softmax(x @ w, dim=-1) * v).sum().backward()
        return x.grad.numpy(), w.grad.numpy()

    for a, b in zip(grads(True), grads(False)):
        np.testing.assert_array_equal(a, b)
    assert grad_mode.modes.profiler is None
    with pytest.raises(ValueError), mt.profiler.profile():
        raise ValueError("inside")
    assert grad_mode.modes.profiler is None
    x = mt.ones(2, requires_grad=True)
    with mt.profiler.record_function("outside a profile: nothing"):
        (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_record_function_as_a_decorator_and_memory_and_flops():
    @mt.profiler.record_function("my_step")
    def step(a, b):
        return a @ b

    a, b = mt.ones(4, 3), mt.ones(3, 2)
    with mt.profiler.profile(profile_memory=True, with_flops=True) as prof:
        step(a, b)
    rng, matmul = prof.events()
    assert (rng.name, matmul.name, matmul.cpu_parent) == ("my_step", "aten::matmul", rng)
    assert matmul.self_cpu_memory_usage == 4 * 2 * 4 and rng.cpu_memory_usage == 32 and rng.self_cpu_memory_usage == 0
    assert matmul.flops == 2 * 4 * 2 * 3
    assert "Total FLOPs" in prof.key_averages().table()


@pytest.mark.parametrize("kwargs", [
    dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=2, active=1, repeat=2),
    dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3), dict(wait=5, warmup=1, active=1, skip_first=2,
                                                                  skip_first_wait=1),
])
def test_schedule_gives_pytorchs_actions(kwargs):
    torch = pytest.importorskip("torch")
    ours, theirs = mt.profiler.schedule(**kwargs), torch.profiler.schedule(**kwargs)
    assert [ours(s).name for s in range(25)] == [theirs(s).name for s in range(25)]


def test_schedule_refuses_what_pytorch_refuses():
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments. Got wait=-1"):
        mt.profiler.schedule(wait=-1, warmup=1, active=1)
    with pytest.raises(AssertionError, match="active=0 \\(need > 0\\)"):
        mt.profiler.schedule(wait=0, warmup=1, active=0)
    with pytest.warns(UserWarning, match="Profiler won't be using warmup"):
        mt.profiler.schedule(wait=1, warmup=0, active=1)
    with pytest.raises(AssertionError, match="Step must be non-negative"):
        mt.profiler.schedule(wait=1, warmup=1, active=1)(-1)


def _scheduled_loop(lib, steps=9, **schedule):
    """A loop of `steps` steps under a schedule: per saved cycle, the step ranges and op count it holds."""
    saved = []

    def ready(prof):
        names = [e.name for e in prof.events()]
        saved.append((names.count("ProfilerStep*"), names.count("aten::mul")))

    x = lib.ones(3)
    with lib.profiler.profile(schedule=lib.profiler.schedule(**schedule), on_trace_ready=ready) as prof:
        for _ in range(steps):
            x * 2.0
            prof.step()
    return saved, prof.step_num


@pytest.mark.parametrize("schedule", [dict(wait=1, warmup=1, active=2), dict(wait=1, warmup=1, active=2, repeat=1),
                                      dict(wait=0, warmup=1, active=3, skip_first=2)])
def test_a_scheduled_loop_saves_the_cycles_pytorch_saves(schedule):
    torch = pytest.importorskip("torch")
    ours = _scheduled_loop(mt, **schedule)
    assert ours == _scheduled_loop(torch, **schedule)
    assert ours[0][0] == (schedule["active"], schedule["active"])  # a whole cycle: each active step and its op


def test_chrome_trace_and_tensorboard_handler(tmp_path):
    x = mt.ones(2, 2, requires_grad=True)
    with mt.profiler.profile(on_trace_ready=mt.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), "worker0"),
                             ) as prof:
        with mt.profiler.record_function("range"):
            (x @ x).sum().backward()
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    trace = json.loads((tmp_path / "trace.json").read_text())
    names = [e["name"] for e in trace["traceEvents"]]
    assert names[:2] == ["range", "aten::matmul"] and all(e["ph"] == "X" and e["dur"] >= 0
                                                         for e in trace["traceEvents"])
    written = list((tmp_path / "tb").iterdir())
    assert len(written) == 1 and written[0].name.startswith("worker0.") and written[0].name.endswith(".pt.trace.json")
    assert json.loads(written[0].read_text())["traceEvents"][0]["name"] == "range"


def test_with_stack_names_the_callers_line_and_exports_folded_stacks(tmp_path):
    x = mt.ones(3)
    with mt.profiler.profile(with_stack=True) as prof:
        x * 2.0
    mul = prof.events()[0]
    assert __file__ in mul.stack[0] and "test_with_stack" in mul.stack[0]
    assert "Source Location" in prof.key_averages(group_by_stack_n=2).table()
    prof.export_stacks(str(tmp_path / "stacks.txt"))
    line = (tmp_path / "stacks.txt").read_text().splitlines()[0]
    assert line.split(";")[-1].startswith(mul.stack[0]) and line.rsplit(" ", 1)[1].isdigit()
    with pytest.raises(AssertionError, match="with_stack=True"):
        mt.profiler.profile().export_stacks(str(tmp_path / "none.txt"))


def test_the_autograd_profiler_interface():
    x = mt.ones(2, requires_grad=True)
    prof = mt.autograd.profiler.profile(record_shapes=True)
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        prof.key_averages()
    with prof:
        with mt.autograd.profiler.record_function("label"):
            (x * 3).sum().backward()
    assert [e.name for e in prof.function_events][:2] == ["label", "aten::mul"]
    assert prof.self_cpu_time_total == pytest.approx(prof.function_events.self_cpu_time_total)
    assert "Self CPU time total" in str(prof) and prof.total_average().key == "Total"
    with mt.autograd.profiler.profile(enabled=False) as off:
        (x * 3).sum()
    assert off.function_events is None
    with prof.__class__() as first, pytest.raises(RuntimeError, match="not reentrant"):
        first.__enter__()


def test_activities_and_enums_as_pytorchs():
    torch = pytest.importorskip("torch")
    for name in ("ProfilerActivity", "ProfilerAction", "DeviceType"):
        ours, theirs = getattr(mt.profiler, name), getattr(torch.profiler, name)
        assert {k: v.value for k, v in ours.__members__.items()} == {k: v.value for k, v in theirs.__members__.items()}
    assert repr(mt.profiler.ProfilerActivity.CPU) == repr(torch.profiler.ProfilerActivity.CPU)
    assert str(mt.profiler.ProfilerAction.RECORD) == str(torch.profiler.ProfilerAction.RECORD)
    assert mt.profiler.supported_activities() == {mt.profiler.ProfilerActivity.CPU}
    with pytest.raises(TypeError, match="ProfilerActivity"):
        mt.profiler.profile(activities=["cpu"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mt.profiler.profile(activities=[mt.profiler.ProfilerActivity.CPU, mt.profiler.ProfilerActivity.CUDA])


PROFILED_SCRIPT = '''
import torch
import torch.nn as nn
from torch.profiler import profile, record_function, ProfilerActivity

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
x = torch.randn(5, 8)
activities = [ProfilerActivity.CPU]
if torch.cuda.is_available():
    activities.append(ProfilerActivity.CUDA)
with profile(activities=activities, record_shapes=True) as prof:
    with record_function("model_inference"):
        model(x).sum().backward()
table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
print(table.splitlines()[1].split())
print(sorted({e.key for e in prof.key_averages() if e.key.startswith("autograd::engine")}))
with torch.autograd.profiler.profile() as legacy:
    model(x)
print(len(legacy.key_averages()) > 0)
'''


def test_a_profiled_script_prints_what_pytorch_prints(tmp_path):
    script = tmp_path / "profiled.py"
    script.write_text(PROFILED_SCRIPT)
    ours = run_in_process(script, True)[0].splitlines()
    assert eval(ours[0])[:4] == ["Name", "Self", "CPU", "%"] and ours[2] == "True"
    pytest.importorskip("torch")
    theirs = run_in_process(script, False)[0].splitlines()
    assert ours[0] == theirs[0] and ours[2] == theirs[2]
    # the nodes' evaluations: PyTorch's linear adds a TBackward0 for the weight's transpose, minitensor's doesn't
    assert set(eval(theirs[1])) - set(eval(ours[1])) == {ENGINE + "TBackward0"}


def test_the_profilers_names_are_the_modules_own():
    assert mt_profiler.record_function is mt_autograd_profiler.record_function
    assert mt.profiler is mt_profiler and mt.autograd.profiler is mt_autograd_profiler


@pytest.mark.parametrize("name, kwargs", [("Adam", {}), ("SGD", dict(lr=0.1)), ("LBFGS", {})])
def test_an_optimizers_step_and_zero_grad_are_ranges_named_as_pytorchs(name, kwargs):
    def ranges(lib):
        p = lib.nn.Parameter(lib.ones(3))
        opt = getattr(lib.optim, name)([p], **kwargs)

        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss
        with lib.profiler.profile() as prof:
            if name == "LBFGS":
                opt.step(closure)
            else:
                closure()
                opt.step()
        return [e.name for e in prof.events() if e.name.startswith("Optimizer.")][:3]

    ours = ranges(mt)
    assert ours[:2] == [f"Optimizer.zero_grad#{name}.zero_grad", f"Optimizer.step#{name}.step"] or \
        ours[0] == f"Optimizer.step#{name}.step"
    torch = pytest.importorskip("torch")
    assert ours == ranges(torch)


def test_a_compiled_models_replayed_call_is_one_range_named_as_pytorchs():
    def regions(lib):
        lib.manual_seed(0)
        model = lib.compile(lib.nn.Linear(4, 3))
        x = lib.randn(2, 4)
        for _ in range(3):  # record, check, then replay
            model(x)
        with lib.profiler.profile() as prof:
            model(x).sum().backward()
        return [e.name for e in prof.events() if e.name.startswith("Torch-Compiled Region")]

    # "<the compiled callable's number in the process>/<its recording's>": which number depends on what
    # compiled before in this process, in both libraries
    pattern = re.compile(r"Torch-Compiled Region: \d+/0")
    ours = regions(mt)
    assert len(ours) == 1 and pattern.fullmatch(ours[0])
    assert regions(mt) == [f"Torch-Compiled Region: {int(ours[0].split(': ')[1].split('/')[0]) + 1}/0"]
    torch = pytest.importorskip("torch")
    theirs = regions(torch)
    assert len(theirs) == 1 and pattern.fullmatch(theirs[0])


def test_a_numpy_vjps_gradients_count_as_its_memory():
    """Mul's backward runs the speed layer's numpy twin (no Tensor ops inside): its gradients are its memory."""
    x, w = mt.ones(4, 3, requires_grad=True), mt.ones(4, 3, requires_grad=True)
    y = x * w
    with mt.profiler.profile(profile_memory=True) as prof:
        y.backward(mt.ones(4, 3))
    mul = next(e for e in prof.events() if e.name == "MulBackward0")
    assert not mul.cpu_children and mul.self_cpu_memory_usage == 2 * 4 * 3 * 4

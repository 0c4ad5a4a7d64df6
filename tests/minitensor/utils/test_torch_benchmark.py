"""torch.utils.benchmark on minitensor: Timer, Measurement and Compare, compared with PyTorch's where it is
installed. Nothing is timed for its value: a scripted clock (`ScriptedClock`) makes every reading
deterministic, so both libraries must give the same raw times, statistics, repr and table; the tests on the
real clock check structure only."""
import contextlib
import io
import math
import pickle
import re
import textwrap

import numpy as np
import pytest

import minitensor as mt
import minitensor.utils.benchmark as mb
from minitensor import run as runner

ADDRESS = re.compile(r"<[\w.]+\.Measurement object at 0x[0-9a-fA-F]+>")


def torch_benchmark():
    """PyTorch's torch.utils.benchmark, or skip the test."""
    pytest.importorskip("torch")
    import torch.utils.benchmark as tb

    return tb


def masked(text):
    """A repr without the object's address and module path, which differ between the libraries."""
    return ADDRESS.sub("<Measurement object>", text)


def noise(k):
    """A fixed pseudo-random number in [-1, 1] for the k-th clock reading."""
    return math.sin(12.9898 * k + 78.233) * 0.999


class ScriptedClock:
    """A clock for tests: each run of the statement (it calls `tick`) lasts `per_run` seconds, scaled by
    1 + wobble * noise(k) * decay**k at the k-th reading; each reading adds `overhead` seconds."""

    def __init__(self, per_run=1e-6, overhead=2e-8, wobble=0.0, decay=1.0):
        self.per_run, self.overhead, self.wobble, self.decay = per_run, overhead, wobble, decay
        self.runs = self.readings = 0
        self.now = 0.0

    def tick(self):
        self.runs += 1

    def __call__(self):
        k, runs = self.readings, self.runs
        self.readings, self.runs = k + 1, 0
        self.now += runs * self.per_run * (1 + self.wobble * noise(k) * self.decay ** k) + self.overhead
        return self.now


def scripted_timer(lib, clock_kwargs=None, **timer_kwargs):
    """`lib.Timer("tick()")` on a fresh scripted clock."""
    clock = ScriptedClock(**(clock_kwargs or {}))
    return lib.Timer("tick()", globals={"tick": clock.tick}, timer=clock, **timer_kwargs)


def assert_same_measurement(ours, theirs):
    assert type(ours) is mb.Measurement
    assert ours.raw_times == theirs.raw_times and ours.number_per_run == theirs.number_per_run
    assert ours.times == theirs.times
    assert (ours.median, ours.iqr) == (theirs.median, theirs.iqr)
    # (PyTorch's float64 sum adds in an order set by its SIMD width; ours is the exactly rounded sum)
    assert ours.mean == pytest.approx(theirs.mean, rel=1e-14)
    assert ours.significant_figures == theirs.significant_figures
    assert ours.has_warnings == theirs.has_warnings
    assert masked(repr(ours)) == masked(repr(theirs))


def both(method, clock_kwargs=None, timer_kwargs=None, *args, **kwargs):
    """The same call on both libraries' Timers, each on its own scripted clock; also the callbacks made."""
    tb = torch_benchmark()
    results = []
    for lib in (mb, tb):
        calls = []
        timer = scripted_timer(lib, clock_kwargs, **(timer_kwargs or {}))
        if "callback" in kwargs:
            kwargs["callback"] = lambda number, seconds: calls.append((number, seconds))
        results.append((getattr(timer, method)(*args, **kwargs), calls))
    return results


# ---- the Timer's methods, against PyTorch's, on the scripted clock ------------------------------------------

LABELS = dict(label="Batched dot", sub_label="[1, 64]", description="mul/sum")


@pytest.mark.slow  # compares with PyTorch
@pytest.mark.parametrize("number", [1, 7, 100, 10000])
@pytest.mark.parametrize("num_threads", [1, 3])
def test_timeit_matches_torch(number, num_threads):
    (ours, _), (theirs, _) = both("timeit", {"wobble": 0.3}, dict(LABELS, num_threads=num_threads), number)
    assert len(ours.raw_times) == 1 and ours.number_per_run == number
    assert_same_measurement(ours, theirs)


@pytest.mark.slow
@pytest.mark.parametrize("clock, min_run_time", [
    ({"per_run": 1e-5}, 0.2),                  # loops of 100 runs; 200 of them
    ({"per_run": 3e-7, "wobble": 0.5}, 0.05),  # fast statement, noisy: warnings in the repr
    ({"per_run": 2e-3, "overhead": 1e-6}, 0.2),  # slow statement: the clock's cost decides the loop size
    ({"per_run": 0.3}, 0.2),                   # one run takes longer than min_run_time: one run a loop
])
def test_blocked_autorange_matches_torch(clock, min_run_time):
    (ours, ours_calls), (theirs, their_calls) = both("blocked_autorange", clock, LABELS, callback=None,
                                                     min_run_time=min_run_time)
    assert_same_measurement(ours, theirs)
    assert ours_calls == their_calls and len(ours_calls) == len(ours.raw_times)
    assert all(number == ours.number_per_run for number, _ in ours_calls)
    assert sum(ours.raw_times) >= min_run_time


@pytest.mark.slow
@pytest.mark.parametrize("clock, kwargs", [
    ({"per_run": 1e-5, "wobble": 0.6, "decay": 0.97}, {}),  # settles: stops when the IQR falls under 10%
    ({"per_run": 1e-5, "wobble": 0.6, "decay": 0.97}, {"threshold": 0.02}),
    ({"per_run": 1e-6}, {"min_run_time": 0.1}),  # steady at once: min_run_time decides
])
def test_adaptive_autorange_matches_torch(clock, kwargs):
    (ours, ours_calls), (theirs, their_calls) = both("adaptive_autorange", clock, LABELS, callback=None, **kwargs)
    assert_same_measurement(ours, theirs)
    assert ours_calls == their_calls and len(ours.raw_times) > 3


@pytest.mark.slow
def test_adaptive_autorange_stops_at_max_run_time_as_torch():
    (ours, _), (theirs, _) = both("adaptive_autorange", {"per_run": 1e-4, "wobble": 0.9}, None, max_run_time=0.5)
    assert_same_measurement(ours, theirs)
    assert not ours.meets_confidence(0.1) and sum(ours.raw_times) > 0.5


def test_blocked_autorange_grows_the_loop_by_tens_until_the_clock_cost_is_negligible():
    clock = {"per_run": 1e-6, "overhead": 2e-8}  # one reading costs 2e-8 s: 1e-4 of it takes loops of 1000
    m = scripted_timer(mb, clock).blocked_autorange(min_run_time=0.2)
    assert m.number_per_run == 1000 and len(m.raw_times) == 200 and m.median == pytest.approx(1e-6, rel=1e-4)


@pytest.mark.parametrize("method", ["repeat", "autorange"])
def test_repeat_and_autorange_refuse_as_torch(method):
    with pytest.raises(NotImplementedError, match=r"^See `Timer\.blocked_autorange\.`$"):
        getattr(mb.Timer(), method)()


@pytest.mark.slow
@pytest.mark.parametrize("method", ["repeat", "autorange"])
def test_repeat_and_autorange_refuse_like_torch(method):
    tb = torch_benchmark()
    with pytest.raises(NotImplementedError) as theirs:
        getattr(tb.Timer(), method)()
    with pytest.raises(NotImplementedError) as ours:
        getattr(mb.Timer(), method)()
    assert str(ours.value) == str(theirs.value)


def test_num_threads_is_set_while_timing_and_restored():
    seen = []
    mt.set_num_threads(2)
    try:
        timer = mb.Timer("seen.append(torch.get_num_threads())", globals={"seen": seen}, num_threads=5)
        timer.timeit(3)
        timer.blocked_autorange(min_run_time=0.001)
        assert set(seen) == {5} and mt.get_num_threads() == 2
        with pytest.raises(ZeroDivisionError), mb.set_torch_threads(7):
            assert mt.get_num_threads() == 7
            1 / 0
        assert mt.get_num_threads() == 2
    finally:
        mt.set_num_threads(1)


def test_a_bad_thread_count_raises_what_set_num_threads_raises():
    # (PyTorch raises RuntimeError too; minitensor's message is its own set_num_threads')
    with pytest.raises(RuntimeError):
        mb.Timer("pass", num_threads=0).timeit(1)
    assert mt.get_num_threads() == 1


def test_statements_see_torch_and_a_copy_of_globals():
    given = {"x": mt.ones(3)}
    timer = mb.Timer("y = torch.matmul(x, x)", setup="import math", globals=given)
    assert timer.timeit(5).raw_times[0] > 0 and given == {"x": given["x"]}  # nothing added to the caller's dict
    assert mb.Timer("torch", globals={"torch": 3})._globals["torch"] == 3  # a given `torch` is kept


def test_setup_runs_once_per_timed_loop():
    counts = {"setup": 0, "stmt": 0}
    timer = mb.Timer("counts['stmt'] += 1", setup="counts['setup'] += 1", globals={"counts": counts})
    timer.timeit(50)  # a warm-up loop of 2 runs, then the loop of 50
    assert counts == {"setup": 2, "stmt": 52}


def test_code_is_dedented_and_trimmed_as_torch():
    timer = mb.Timer("""
        a = 1
        b = a + 1
    """, setup="""
        import math
    """)
    assert (timer._task_spec.stmt, timer._task_spec.setup) == ("a = 1\nb = a + 1", "import math")


# ---- Measurement -------------------------------------------------------------------------------------------


def test_measurement_statistics_by_hand():
    m = mb.Measurement(10, [1e-5, 2e-5, 3e-5, 2.5e-5, 9e-5], mb.TaskSpec("x + 1", "pass", label="L", sub_label="s"))
    assert m.times == pytest.approx([1e-6, 2e-6, 3e-6, 2.5e-6, 9e-6])
    assert m.median == pytest.approx(2.5e-6) and m.mean == pytest.approx(3.5e-6)
    assert m.iqr == pytest.approx(1e-6)  # 3.0 - 2.0 us
    assert m.has_warnings and not m.meets_confidence(0.25) and m.meets_confidence(0.5)
    assert m.significant_figures == 1
    assert (m.title, m.as_row_name, m.label, m.stmt, m.num_threads, m.env) == ("L: s", "s", "L", "x + 1", 1, None)
    assert masked(repr(m)) == textwrap.dedent("""\
        <Measurement object>
        L: s
          Median: 2.50 us
          IQR:    1.00 us (2.00 to 3.00)
          5 measurements, 10 runs per measurement, 1 thread
          WARNING: Interquartile range is 40.0% of the median measurement.
                   This suggests significant environmental influence.""")


def test_quantiles_interpolate_from_the_nearer_rank_as_torch():
    # the 75th percentile of six times lies 3/4 of the way from the 4th to the 5th: PyTorch interpolates
    # back from the 5th (b - (b - a) * 0.25), which here differs in the last bit from a + (b - a) * 0.75;
    # the numbers are PyTorch's
    times = [2.887602853884182e-06, 1.2536342045224956e-06, 2.7295565908015485e-06, 1.118928303200677e-06,
             1.761541016621779e-06, 1.8595481223571534e-06]
    assert mb.Measurement(1, times, mb.TaskSpec("x", "pass")).iqr == 1.131443566143133e-06
    # and the 25th, 1/4 of the way from the 2nd to the 3rd, forward from the 2nd
    times = [2.8393136938616523, 2.877944484919279, 1.6609740540622495, 2.786066960969772, 1.9436286098017075,
             2.9477933741236084]
    assert mb.Measurement(1, times, mb.TaskSpec("x", "pass")).iqr == 0.7140485895611488


def test_measurement_has_no_other_attributes():
    m = mb.Measurement(1, [1.0], mb.TaskSpec("x", "pass"))
    with pytest.raises(AttributeError, match="'Measurement' object has no attribute 'nope'"):
        m.nope


def test_the_repr_names_the_minitensor_class():
    m = mb.Measurement(1, [1.0], mb.TaskSpec("x", "pass"))
    assert re.match(r"<minitensor\.utils\.benchmark\.Measurement object at 0x[0-9a-f]+>\nx\n  1\.00 s\n", repr(m))


SPECS = [
    dict(stmt="x + 1", setup="pass"),
    dict(stmt="x + 1", setup="y = 2", label="L", sub_label="float", description="n=4", num_threads=4),
    dict(stmt="a = 1\nb = 2", setup="u = 1\nv = 2", sub_label="multi"),
    dict(stmt="a = 1\nb = 2", setup="", description="d", env="E"),
    dict(stmt="", setup="pass"),
    dict(stmt="f(x)", setup="pass", label="", sub_label=""),
]
TIMES = [[1.2e-5], [1e-3, 1.1e-3], [5e-8, 5.1e-8, 4.9e-8], [1e-6, 1.02e-6, 1.01e-6, 0.99e-6, 1.05e-6],
         [1e-6, 1.3e-6, 0.9e-6, 1.1e-6, 1.2e-6, 1e-6], [2.0, 2.5, 3.0, 9.0], [0.0009999999, 0.0009999999]]


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("times", TIMES)
def test_measurement_matches_torch(spec, times):
    tb = torch_benchmark()
    ours = mb.Measurement(1000, times, mb.TaskSpec(**spec))
    theirs = tb.Measurement(1000, times, tb.TaskSpec(**spec))
    assert_same_measurement(ours, theirs)
    assert (ours.title, ours.as_row_name, ours.env) == (theirs.title, theirs.as_row_name, theirs.env)
    assert ours.task_spec.summarize() == theirs.task_spec.summarize()
    assert ours.task_spec.setup_str() == theirs.task_spec.setup_str()


@pytest.mark.slow
def test_measurement_statistics_match_torch_on_random_times():
    tb = torch_benchmark()
    rng = np.random.default_rng(0)
    for _ in range(200):
        n, scale = int(rng.integers(1, 40)), 10.0 ** rng.uniform(-10, 1)
        spread = 0.1 * int(rng.integers(0, 4))
        times = [float(t) for t in scale * (1 + rng.exponential(spread, n))]
        number = int(rng.integers(1, 1000))
        assert_same_measurement(mb.Measurement(number, times, mb.TaskSpec("x", "pass")),
                                tb.Measurement(number, times, tb.TaskSpec("x", "pass")))


def replicates(lib):
    spec = dict(stmt="x + 1", setup="pass", label="L")
    return [lib.Measurement(10, [1e-5, 2e-5], lib.TaskSpec(**spec)),
            lib.Measurement(100, [1e-4, 3e-4, 2e-4], lib.TaskSpec(**spec), metadata={"run": 2}),
            lib.Measurement(1, [5e-6], lib.TaskSpec(**spec, sub_label="other")),
            lib.Measurement(1, [7e-6], lib.TaskSpec(**spec))]


def test_merge_pools_per_run_times_of_equal_specs():
    merged = mb.Measurement.merge(replicates(mb))
    assert [len(m.raw_times) for m in merged] == [6, 1]
    assert merged[0].number_per_run == 1 and merged[0].metadata is None
    assert merged[0].raw_times == pytest.approx([1e-6, 2e-6, 1e-6, 3e-6, 2e-6, 7e-6])


@pytest.mark.slow
def test_merge_matches_torch():
    tb = torch_benchmark()
    ours, theirs = mb.Measurement.merge(replicates(mb)), tb.Measurement.merge(replicates(tb))
    assert len(ours) == len(theirs) == 2
    for a, b in zip(ours, theirs):
        assert_same_measurement(a, b)
        assert a.metadata is b.metadata is None


def test_measurements_compare_and_hash_as_dataclasses():
    a, b = (mb.Measurement(1, [1.0], mb.TaskSpec("x", "pass")) for _ in range(2))
    assert a == b and hash(mb.TaskSpec("x", "pass")) == hash(b.task_spec)
    a.median  # (computed statistics travel with a pickle, as the fields do)
    assert pickle.loads(pickle.dumps(a)) == a and pickle.loads(pickle.dumps(a)).median == 1.0


# ---- units and figures -------------------------------------------------------------------------------------

EDGES = [v for e in range(-12, 4) for v in (10.0 ** e, 10.0 ** e * (1 + 1e-9), 10.0 ** e * (1 - 1e-9),
                                            10.0 ** e * (1 + 1e-7), 10.0 ** e * (1 - 1e-7),
                                            float(np.nextafter(np.float32(10.0 ** e), np.float32(0))),
                                            float(np.nextafter(np.float32(10.0 ** e), np.float32(1e9))),
                                            3.14159 * 10.0 ** e, 9.995 * 10.0 ** e, 2.5 * 10.0 ** e)]
SWEEP = EDGES + [float(v) for v in 10.0 ** np.random.default_rng(1).uniform(-12, 3, 500)]


def test_units_by_hand():
    assert mb.select_unit(2.5e-6) == ("us", 1e-6) and mb.select_unit(0.5) == ("ms", 1e-3)
    assert mb.select_unit(5e-9) == ("ns", 1e-9) and mb.select_unit(7.0) == ("s", 1)
    assert mb.select_unit(1e-10) == ("s", 1)  # below a nanosecond PyTorch's rule falls through to seconds
    assert mb.select_unit(0.0009999999) == ("ms", 1e-3)  # 1e-3 once rounded to float32
    assert [mb.unit_to_english(u) for u in ("ns", "us", "ms", "s")] == ["nanosecond", "microsecond",
                                                                         "millisecond", "second"]
    assert mb.trim_sigfig(3.14159, 2) == 3.1000001430511475  # 31 * 0.1, both in float32, as PyTorch rounds
    assert mb.trim_sigfig(1234.5, 2) == 1200.0 and mb.trim_sigfig(2.5, 1) == 2.0  # half to even
    assert mb.ordered_unique([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_units_follow_the_default_dtype():
    mt.set_default_dtype(mt.float64)
    try:
        assert mb.select_unit(0.0009999999) == ("us", 1e-6)
        assert mb.trim_sigfig(3.14159, 2) == 3.1
    finally:
        mt.set_default_dtype(mt.float32)


@pytest.mark.slow
def test_select_unit_matches_torch_on_a_sweep():
    tb = torch_benchmark()
    assert [mb.select_unit(v) for v in SWEEP] == [tb.select_unit(v) for v in SWEEP]


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_trim_sigfig_matches_torch_on_a_sweep(n):
    tb = torch_benchmark()
    values = SWEEP + [-v for v in SWEEP[:100]] + [np.float64(v) for v in SWEEP[:100]]  # (a numpy float keeps float64)
    assert [mb.trim_sigfig(v, n) for v in values] == [tb.trim_sigfig(v, n) for v in values]


@pytest.mark.slow
def test_units_follow_the_default_dtype_as_torch():
    torch = pytest.importorskip("torch")
    tb = torch_benchmark()
    mt.set_default_dtype(mt.float64)
    torch.set_default_dtype(torch.float64)
    try:
        assert [mb.select_unit(v) for v in EDGES] == [tb.select_unit(v) for v in EDGES]
        assert [mb.trim_sigfig(v, 3) for v in EDGES] == [tb.trim_sigfig(v, 3) for v in EDGES]
    finally:
        mt.set_default_dtype(mt.float32)
        torch.set_default_dtype(torch.float32)


# ---- Compare -----------------------------------------------------------------------------------------------


def table_measurements(lib, env=None):
    """Two labels; rows by sub-label (or statement) under two thread counts; three descriptions, one cell
    missing; replicates to merge; spreads from steady to noisy."""
    rng = np.random.default_rng(3)
    out = []
    for label in ("Batched dot", "Matmul"):
        for threads in (1, 4):
            for i, sub in enumerate(["[1, 64]", "[64, 64]", None]):
                for j, description in enumerate(["mul/sum", "bmm", "einsum"]):
                    if (i, j) == (2, 1):
                        continue  # an empty cell
                    base = 1e-6 * (1 + i) * (1 + 3 * j) / threads * (50 if label == "Matmul" else 1)
                    for replicate in range(2):
                        times = [float(t) for t in base * (1 + rng.exponential(0.03 * (i + j), 5))]
                        spec = lib.TaskSpec("torch.mm(a, b)" if sub is None else "(a * b).sum()", "pass", label=label,
                                            sub_label=sub, description=description, num_threads=threads,
                                            env=table_env(env, i, threads))
                        out.append(lib.Measurement(100, times, spec))
    return out


def table_env(kind, row, threads):
    """None; or two envs alternating by row; or with 4 threads only the env 1 thread ends with."""
    if kind == "alternating" or (kind == "per_thread" and threads == 1):
        return "A/B: " + "ab"[row % 2]
    return "A/B: b" if kind == "per_thread" else None


def render(lib, options, env=None, measurements=None):
    compare = lib.Compare(measurements or table_measurements(lib, env))
    if "trim" in options:
        compare.trim_significant_figures()
    if "colorize" in options or "rowwise" in options:
        compare.colorize(rowwise="rowwise" in options)
    if "highlight" in options:
        compare.highlight_warnings()
    return str(compare)


OPTIONS = [(), ("trim",), ("colorize",), ("rowwise",), ("highlight",), ("trim", "highlight", "colorize"),
           ("trim", "rowwise", "highlight")]


def test_compare_layout_by_hand():
    spec = dict(stmt="x", setup="pass", label="add")
    results = [mb.Measurement(1, [2e-6, 2e-6], mb.TaskSpec(**spec, sub_label="small", description="n=1")),
               mb.Measurement(1, [1.5e-5], mb.TaskSpec(**spec, sub_label="small", description="n=10")),
               mb.Measurement(1, [3e-6], mb.TaskSpec(**spec, sub_label="large", description="n=1"))]
    assert str(mb.Compare(results)).splitlines() == [
        "[---------- add -----------]",
        "             |  n=1  |  n=10",  # a column as wide as its widest cell or header, centred
        "1 threads: -----------------",
        "      small  |  2.0  |  15.0",  # digits: as many before the point as the column's largest needs
        "      large  |  3.0  |      ",  # a missing cell: blanks
        "",
        "Times are in microseconds (us)."]


@pytest.mark.slow
@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("env", [None, "alternating", "per_thread"])
def test_compare_matches_torch(options, env):
    tb = torch_benchmark()
    assert render(mb, options, env) == render(tb, options, env)


@pytest.mark.slow
def test_compare_matches_torch_on_random_tables():
    tb = torch_benchmark()
    rng = np.random.default_rng(11)
    for _ in range(100):
        rows = []
        base = 10.0 ** rng.uniform(-9.5, 0.5)
        for _ in range(int(rng.integers(1, 12))):
            spec = dict(stmt=str(rng.choice(["x + 1", "torch.mm(a, b)"])), setup="pass",
                        label=[None, "L", "Other"][int(rng.integers(0, 3))],
                        sub_label=[None, "s", "a longer sub-label"][int(rng.integers(0, 3))],
                        description=str(rng.choice(["d1", "a wide description", "d3"])),
                        num_threads=int(rng.choice([1, 2, 8])))
            spread = rng.exponential(0.1, int(rng.integers(1, 9)))
            times = [float(t) for t in base * rng.uniform(0.5, 40) * (1 + spread)]
            rows.append((int(rng.integers(1, 100)), times, spec))
        options = [o for o in ("trim", "colorize", "rowwise", "highlight") if rng.random() < 0.5]
        ours = render(mb, options, measurements=[mb.Measurement(n, t, mb.TaskSpec(**s)) for n, t, s in rows])
        theirs = render(tb, options, measurements=[tb.Measurement(n, t, tb.TaskSpec(**s)) for n, t, s in rows])
        assert ours == theirs


def test_colorize_marks_the_best_of_each_column_and_row():
    spec = dict(stmt="x", setup="pass", label="L")
    results = [mb.Measurement(1, [t], mb.TaskSpec(**spec, sub_label=s, description=d))
               for s, d, t in [("a", "d1", 1e-5), ("b", "d1", 1.05e-5), ("c", "d1", 3e-5), ("d", "d1", 6e-5),
                               ("a", "d2", 1.5e-5)]]
    compare = mb.Compare(results)
    compare.colorize()
    lines = str(compare).splitlines()
    best, good, very_bad = "\033[92m\033[1m", "\033[34m\033[1m", "\033[31m\033[1m"
    bad, end = "\033[2m\033[91m", "\033[0m\033[0m"  # (twice as slow is dim, not bold)
    rows = lines[3:7]  # (after the title, the header and the thread rule)
    assert best in rows[0] and good in rows[1] and bad in rows[2] and very_bad in rows[3]
    assert [row.count(end) for row in rows] == [2, 1, 1, 1]  # each coloured cell closed
    assert rows[0].count(best) == 2  # 15 us is the best of column d2
    compare.colorize(rowwise=True)
    assert str(compare).splitlines()[3].count(best) == 1  # against row a's best (10 us), 15 us is not within 10%


def test_highlight_warnings_marks_noisy_cells_and_explains():
    spec = dict(stmt="x", setup="pass", label="L", description="d")
    compare = mb.Compare([mb.Measurement(1, [1e-6, 1e-6, 2e-6, 3e-6], mb.TaskSpec(**spec, sub_label="noisy")),
                          mb.Measurement(1, [1e-6] * 4, mb.TaskSpec(**spec, sub_label="steady"))])
    compare.highlight_warnings()
    text = str(compare)
    assert "1.5 (! 83%)" in text and text.endswith("where XX is the IQR / median * 100.\n")


def test_a_measurement_without_description_gets_an_empty_header():
    ours = str(mb.Compare([mb.Measurement(1, [1e-6], mb.TaskSpec("a", "pass"))]))
    assert ours.splitlines()[1] == "         |     "


@pytest.mark.slow
def test_no_description_renders_as_torch_renders_an_empty_one():
    # PyTorch 2.13 stops with a TypeError on description=None (len(None) in its layout); minitensor
    # shows what PyTorch shows for description="": an empty column header
    tb = torch_benchmark()
    ours = str(mb.Compare([mb.Measurement(1, [1e-6], mb.TaskSpec("a", "pass", sub_label=s)) for s in "xy"]))
    theirs = str(tb.Compare([tb.Measurement(1, [1e-6], tb.TaskSpec("a", "pass", sub_label=s, description=""))
                             for s in "xy"]))
    assert ours == theirs


def test_envs_set_and_unset_in_one_table_show_none():
    # (PyTorch 2.13 stops with a TypeError sorting None against a str; the unset env sorts first here)
    results = [mb.Measurement(1, [1e-6], mb.TaskSpec("a", "pass", description="d", env="E")),
               mb.Measurement(1, [2e-6], mb.TaskSpec("b", "pass", description="d"))]
    assert str(mb.Compare(results)).splitlines()[3:5] == ["  (None)  b  |  2.0", "  (E)     a  |  1.0"]


def test_compare_prints_its_text(capsys):
    compare = mb.Compare([mb.Measurement(1, [1e-6], mb.TaskSpec("a", "pass", description="d"))])
    compare.print()
    assert capsys.readouterr().out == str(compare) + "\n"
    assert str(mb.Compare([])) == ""


def test_extend_results_adds_measurements_and_refuses_anything_else():
    m = mb.Measurement(1, [1e-6], mb.TaskSpec("a", "pass", description="d"))
    compare = mb.Compare(iter([m]))  # (an iterator is read once, and kept)
    compare.extend_results([m])
    assert "1 threads" in str(compare)
    with pytest.raises(ValueError, match=r"^Expected an instance of `Measurement`, got <class 'int'> instead\.$"):
        compare.extend_results([m, 1])
    assert len(compare._results) == 2  # nothing of a refused batch is added


# ---- errors, against PyTorch -------------------------------------------------------------------------------

ERRORS = [
    ("Timer(stmt=123)", ValueError),
    ("Timer(stmt=lambda: 1)", ValueError),
    ("Timer(global_setup='#include <x>')", ValueError),
    ("Timer(language='rust')", ValueError),
    ("Timer(language='cpp', globals={'a': 1})", ValueError),
    ("Timer(stmt='x +')", SyntaxError),
    ("Timer(setup=None)", TypeError),
    ("Timer().collect_callgrind(repeats=0)", ValueError),
    ("trim_sigfig(1.0, 2.5)", AssertionError),
    ("trim_sigfig(0.0, 2)", OverflowError),
    ("trim_sigfig(float('nan'), 2)", ValueError),
    ("select_unit(0.0)", ValueError),
    ("select_unit(-1e-6)", ValueError),
    ("select_unit(float('inf'))", ValueError),
    ("unit_to_english('ks')", KeyError),
    ("Compare([1])", ValueError),
    ("Measurement(1, [], TaskSpec('x', 'pass')).median_", AttributeError),
    ("Measurement(1, [], TaskSpec('x', 'pass')).__repr__()", ValueError),  # no times: the unit of -1 s
    ("Timer('1 / 0').timeit(1)", ZeroDivisionError),
]


def raised(code, lib):
    with pytest.raises(Exception) as info:
        eval(code, vars(lib))
    return info.value


@pytest.mark.parametrize("code, error", ERRORS)
def test_errors(code, error):
    assert type(raised(code, mb)) is error


@pytest.mark.slow
@pytest.mark.parametrize("code, error", ERRORS)
def test_errors_match_torch(code, error):
    ours, theirs = raised(code, mb), raised(code, torch_benchmark())
    assert type(ours) is type(theirs) is error
    if not isinstance(ours, SyntaxError):
        assert str(ours) == str(theirs)


def test_cpp_statements_are_refused_clearly():
    with pytest.raises(NotImplementedError, match="C\\+\\+"):
        mb.Timer("x++;", language=mb.Language.CPP)
    with pytest.raises(NotImplementedError, match="Callgrind"):
        mb.Timer().collect_callgrind()


def test_copy_if_callgrind_is_unwrapped_for_the_clock():
    wrapped = mb.CopyIfCallgrind(3, setup="x = 3")
    assert (wrapped.value, wrapped.setup, wrapped.serialization) == (3, "x = 3", mb.Serialization.PICKLE)
    assert mb.CopyIfCallgrind(mt.nn.Linear(2, 2)).serialization == mb.Serialization.TORCH
    assert mb.Timer("assert x == 3", globals={"x": wrapped}).timeit(2).number_per_run == 2
    with pytest.raises(ValueError, match=r"^Unsupported type: <class 'object'>\n`collect_callgrind` restricts"):
        mb.CopyIfCallgrind(object())


# ---- real clock: structure only ----------------------------------------------------------------------------


def test_real_clock_measurements_have_their_structure():
    timer = mb.Timer("x * 2.0", setup="x = torch.ones(4)", label="mul", sub_label="ones(4)", description="cpu")
    once = timer.timeit(100)
    assert once.number_per_run == 100 and len(once.raw_times) == 1 and once.raw_times[0] > 0
    blocked = timer.blocked_autorange(min_run_time=0.05)
    assert sum(blocked.raw_times) >= 0.05 and str(blocked.number_per_run).strip("0") == "1"  # 1, 10, 100, ...
    adaptive = timer.adaptive_autorange(min_run_time=0.01, max_run_time=0.2)
    assert len(adaptive.raw_times) > 3 and sum(adaptive.raw_times) >= 0.01
    table = str(mb.Compare([once, blocked, adaptive]))
    assert table.startswith("[") and " mul " in table.splitlines()[0] and "ones(4)" in table


# ---- the runner: the SDPA tutorial's helper ----------------------------------------------------------------

SDPA_SCRIPT = '''
import torch
import torch.nn.functional as F
import torch.utils.benchmark as benchmark
from torch.utils import benchmark as same_module
from torch.nn.attention import SDPBackend, sdpa_kernel

device = "cuda" if torch.cuda.is_available() else "cpu"
query, key, value = (torch.rand(2, 4, 16, 8, device=device) for _ in range(3))


def benchmark_torch_function_in_microseconds(f, *args, **kwargs):
    t0 = benchmark.Timer(stmt="f(*args, **kwargs)", globals={"args": args, "kwargs": kwargs, "f": f})
    return t0.blocked_autorange().mean * 1e6


us = benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value)
print(f"The default implementation runs in {us:.3f} microseconds")
with sdpa_kernel(SDPBackend.MATH):
    us = benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value)
    print(f"The math implementation runs in {us:.3f} microseconds")
print(same_module is benchmark, type(benchmark.Timer("pass").timeit(10)).__name__)
'''


def test_the_sdpa_tutorial_helper_runs_under_the_runner(tmp_path):
    script = tmp_path / "sdpa_benchmark.py"
    script.write_text(SDPA_SCRIPT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runner.run(str(script))
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and lines[2] == "True Measurement"
    for line, kind in zip(lines, ("default", "math")):
        assert re.fullmatch(rf"The {kind} implementation runs in \d+\.\d{{3}} microseconds", line)
        assert float(line.split()[-2]) > 0


def test_the_runner_maps_the_module():
    assert runner.MODULES["torch.utils.benchmark"] == "minitensor.utils.benchmark"
    with runner.torch_is_minitensor():
        import torch.utils.benchmark as benchmark  # noqa: F401 (the runner's stand-in for minitensor's module)
        from torch.utils.benchmark import Compare, Timer

        assert benchmark.Timer is Timer is mb.Timer and Compare is mb.Compare
        assert mb.Timer("pass")._globals["torch"] is runner.torch_module("torch")  # the script's own torch
    assert mb.Timer("pass")._globals["torch"] is mt

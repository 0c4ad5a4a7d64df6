"""`torch.utils.benchmark` on minitensor: `Timer`, `Measurement` and `Compare`, with PyTorch's numbers and text.

A `Timer` runs a statement (Python source, as `timeit` takes it) with the standard library's
`timeit.Timer`, the way PyTorch's does: `setup` once per timed call, the statement `number`
times in a loop, the clock read before and after the loop. Its methods decide how many loops to
time and how often; each returns a `Measurement`, which keeps the raw times and gives the
statistics (median, mean, interquartile range) and a repr in PyTorch's layout. `Compare` prints
many measurements as PyTorch's table: one per label, a row per sub-label (or statement) and
thread count, a column per description.

PyTorch computes the unit of a time, the leading digits of a table cell and the number of
significant figures on 0-d tensors of the default dtype, that is in float32. The same steps run
here on numpy scalars of that dtype, so a value at the edge of a unit (a hair under 1 ms reads
"ms" once rounded to float32) gets PyTorch's unit, cell and figures, not float64's.

The tests time nothing: with a scripted clock passed as `timer`, the same statement gives the
same raw times, statistics, repr and table here and in PyTorch.

Left out: instruction counts under Valgrind (`Timer.collect_callgrind`, `CallgrindStats`,
`FunctionCounts`: PyTorch runs the statement in a child process under Callgrind), C++ statements
(`language="cpp"`: compiled against PyTorch's C++ library) and the fuzzers (`Fuzzer`,
`FuzzedTensor`, ...: random tensors from PyTorch's own generator and memory layouts).
`CopyIfCallgrind` is kept, since a script may wrap its globals in it and still time them with
the clock.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import enum
import math
import sys
import textwrap
import timeit
from typing import Any, Callable, Iterable, Iterator, NoReturn

import numpy as np

from .._dtype import get_default_dtype
from .._runtime import get_num_threads, set_num_threads

__all__ = ["Timer", "timer", "Language", "TaskSpec", "Measurement", "select_unit", "unit_to_english",
           "trim_sigfig", "ordered_unique", "set_torch_threads", "Compare", "Colorize", "CopyIfCallgrind"]

_MAX_FIGURES = 4  # a measurement is never shown with more significant figures than this
_MIN_CONFIDENCE_INTERVAL = 25e-9  # seconds: no clock resolves better, so no interval is taken as narrower
_IQR_WARNING = 0.1  # IQR / median above this: "system fluctuation"
_IQR_GROSS_WARNING = 0.25  # above this: "significant environmental influence"


# ---- numbers as PyTorch's 0-d tensors hold them -------------------------------------------------------------


def _as_torch_float(x: Any) -> np.floating:
    """`x` as `torch.tensor(x)` would hold it for a float op: a numpy float keeps its own dtype, anything else
    (a Python float or int) takes the default dtype, float32 unless a script changed it."""
    dtype = x.dtype if isinstance(x, np.floating) else get_default_dtype()
    with np.errstate(over="ignore"):  # (1e40 is inf in float32, as in PyTorch: no warning there either)
        return np.dtype(dtype).type(x)


def _log10(x: Any) -> float:
    """log10 of `x` in the dtype PyTorch computes it in; -inf for 0 and nan below, as a tensor gives.
    Computed in float64 and rounded once to that dtype: numpy's float32 log10 is a vector loop whose last bit
    depends on the processor (-6.0000005 for 1e-6 with AVX-512, where PyTorch's scalar log10 gives -6.0, so
    a microsecond printed as "1000.00 ns")."""
    v = _as_torch_float(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(v.dtype.type(np.log10(np.float64(v))))


# ---- units and figures --------------------------------------------------------------------------------------

_UNIT_OF_THOUSANDS = {-3: "ns", -2: "us", -1: "ms"}  # floor(log10(t) / 3) -> unit; anything else is "s"
_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}
_ENGLISH = {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}


def select_unit(t: float) -> tuple[str, float]:
    """The unit that shows `t` seconds with one to three digits before the point, and its size in seconds.

    As PyTorch picks it: from `log10(t) // 3` in float32, so exactly what rounds to 1e-3 in float32 is
    "ms"; a time under 1 ns, like one of 1 s or more, is in "s". Zero or a negative time raises
    ValueError (the logarithm is not a number), as in PyTorch.
    """
    unit = _UNIT_OF_THOUSANDS.get(int(_log10(t) // 3), "s")
    return unit, _SECONDS[unit]


def unit_to_english(u: str) -> str:
    """The English name of a unit `select_unit` returns ("us" -> "microsecond"); KeyError for any other."""
    return _ENGLISH[u]


def trim_sigfig(x: float, n: int) -> float:
    """`x` rounded to `n` significant figures (3.14159, 2 -> 3.1), rounding half to even.

    The rounding runs in the default dtype, as PyTorch's does, so the result is a float32 number
    (3.1 comes back as 3.1000001430511475). A non-integral `n` raises AssertionError; `x == 0` raises
    OverflowError (its logarithm is -inf), as in PyTorch.
    """
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    digits_before_point = int(math.ceil(_log10(abs(_as_torch_float(x)))))
    scale = 10 ** (digits_before_point - n)
    in_steps = _as_torch_float(x / scale)  # x in units of its last kept figure
    return float(np.rint(in_steps) * in_steps.dtype.type(scale))


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    """The distinct elements, each where it first appears."""
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """Inside, `get_num_threads()` is `n`; the count before is put back on the way out, also after an error.

    minitensor records the count without running ops in more threads (see `minitensor.set_num_threads`),
    so a measurement reports the thread count it was asked for, as PyTorch's does.
    """
    before = get_num_threads()
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(before)


# ---- what was timed, and the times --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, repr=False)  # (object's repr, as PyTorch's spec keeps)
class TaskSpec:
    """What a Timer times and the names it is shown under (all but its globals); equal specs are merged."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (else the one-line statement), with ": sub_label"; a statement of several lines is
        shown indented under "stmt:"."""
        if self.label is not None or "\n" not in self.stmt:
            name = self.stmt if self.label is None else self.label
            return f"{name}: {self.sub_label}" if self.sub_label else name
        head = f"stmt: ({self.sub_label})" if self.sub_label else "stmt:"
        return head + "\n" + textwrap.indent(self.stmt, "  ")

    def setup_str(self) -> str:
        """'setup: ...' (indented on its own lines if it has several), or '' for no setup."""
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return "setup:\n" + textwrap.indent(self.setup, "  ")
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The title, description and setup, one under the other; a part of several lines ends with a blank
        line."""
        parts = [self.title, self.description or "", self.setup_str()]
        return "\n".join(part + "\n" if "\n" in part else part for part in parts if part)


_TASK_FIELDS = frozenset(field.name for field in dataclasses.fields(TaskSpec))


def _quantile(ordered: list[float], q: float) -> float:
    """The `q` quantile of sorted values, interpolated linearly between the two nearest ranks, with the
    formula PyTorch's `quantile` uses (from the nearer end), so the float64 result is the same to the bit."""
    position = q * (len(ordered) - 1)
    below, above = ordered[math.floor(position)], ordered[math.ceil(position)]
    weight = position - math.floor(position)
    if weight < 0.5:
        return below + weight * (above - below)
    return above - (above - below) * (1 - weight)


def _float32_std(values: list[float]) -> float:
    """The population standard deviation of a tensor of `values` in the default dtype, as PyTorch reports
    it: the values rounded to that dtype, the result too."""
    held = np.array(values, dtype=get_default_dtype())
    return float(held.dtype.type(np.std(held.astype(np.float64))))


@dataclasses.dataclass(repr=False)
class Measurement:
    """The times of one statement: `raw_times[i]` seconds for `number_per_run` runs each.

    The statistics (`median`, `mean`, `iqr`, `significant_figures`, `has_warnings`) are per run and
    computed once, on first use. The fields of the `task_spec` read as attributes (`m.label`,
    `m.stmt`, `m.num_threads`). `metadata` is the user's, kept as it is.
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0  # (what PyTorch reports without times)
        self._warnings: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        # only called for a name not found otherwise: the TaskSpec's fields
        if name in _TASK_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def times(self) -> list[float]:
        """Seconds per run: each raw time divided by `number_per_run`."""
        return [t / self.number_per_run for t in self.raw_times]

    def _compute(self) -> None:
        """Sort the times, take the statistics and the warnings (once: later calls do nothing)."""
        if not self.raw_times or self._sorted_times:
            return
        ordered = sorted(self.times)
        self._sorted_times = tuple(ordered)
        self._median, self._p25, self._p75 = (_quantile(ordered, q) for q in (0.5, 0.25, 0.75))
        # (PyTorch's float64 sum adds in an order set by its SIMD width; this is the exactly rounded sum,
        # which can differ from it in the last bit)
        self._mean = math.fsum(ordered) / len(ordered)
        if not self.meets_confidence(_IQR_GROSS_WARNING):
            self._warn("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARNING):
            self._warn("This could indicate system fluctuation.")

    def _warn(self, why: str) -> None:
        spread = self.iqr / self.median * 100
        self._warnings += (f"  WARNING: Interquartile range is {spread:.1f}% of the median measurement.\n"
                           f"           {why}",)

    @property
    def median(self) -> float:
        self._compute()
        return self._median

    @property
    def mean(self) -> float:
        self._compute()
        return self._mean

    @property
    def iqr(self) -> float:
        """The interquartile range: 75th minus 25th percentile (linear interpolation, as `torch.quantile`)."""
        self._compute()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """How many figures of the median the spread supports, 1 to 4: `floor(log10(median / ci))` where ci is
        a 90% confidence half-width, 1.645 * std / sqrt(n), over the middle half of the sorted times (at least
        25 ns). A rough estimate, as PyTorch says of its own; `Compare` trims to it."""
        self._compute()
        n = len(self._sorted_times)
        middle = list(self._sorted_times[n // 4:math.ceil(3 * n / 4)])
        root_n = float(np.sqrt(_as_torch_float(len(middle))))
        interval = max(1.645 * _float32_std(middle) / root_n, _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(_log10(self._median / interval))
        return min(max(figures, 1), _MAX_FIGURES)

    @property
    def has_warnings(self) -> bool:
        """Whether the IQR is over 10% of the median (the repr then says so, and why)."""
        self._compute()
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = _IQR_WARNING) -> bool:
        """Whether iqr / median is under `threshold`."""
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str | None:
        """The TaskSpec's `env`, None if unset. (PyTorch's property means to say "Unspecified env" then, but
        it misspells `task_spec` and its attribute fallback returns the field: None, which is kept here.)"""
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        """The name of this measurement's row in `Compare`: its sub-label, else its statement."""
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        """Object line, task summary, median (and IQR from four measurements on), counts, warnings."""
        self._compute()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        threads = self.task_spec.num_threads
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})")
        per = "per measurement," if n > 1 else ","
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs {per} "
                     f"{threads} thread{'s' if threads > 1 else ''}")
        lines.append("\n".join(self._warnings))
        # (stripped and split as PyTorch's: an empty summary leaves its blank line, a stmt's \r\n becomes \n)
        return "\n".join("\n".join(lines).strip().splitlines())

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """One Measurement per distinct TaskSpec (in order of first appearance) holding all its per-run
        times, with `number_per_run=1` and no metadata (replicates may disagree on both)."""
        times: dict[TaskSpec, list[float]] = {}
        for m in measurements:
            times.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(number_per_run=1, raw_times=t, task_spec=spec, metadata=None)
                for spec, t in times.items()]


# ---- the Timer ----------------------------------------------------------------------------------------------


def timer() -> float:
    """The default clock: `timeit.default_timer`. (PyTorch's first synchronizes an accelerator, if one is
    present; minitensor runs on the CPU, so there is nothing to wait for.)"""
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Serialization(enum.Enum):
    """How `CopyIfCallgrind` would hand a global to PyTorch's Callgrind child process."""

    PICKLE = 0
    TORCH = 1
    TORCH_JIT = 2


def _copyable_types() -> dict[Serialization, tuple[type, ...]]:
    from ..nn import Module  # (here, not at the top: the layers are imported after the utilities)

    return {Serialization.PICKLE: (str, bytes, bool, int, float, complex), Serialization.TORCH: (Module,)}


class CopyIfCallgrind:
    """A global marked as one PyTorch may copy into its Callgrind process: builtin scalars and strings, or
    an `nn.Module`. The clock-based methods time `value` itself (the Timer unwraps it); `setup` is the code
    that would recreate it there. Callgrind itself is left out (`Timer.collect_callgrind`)."""

    def __init__(self, value: Any, *, setup: str | None = None) -> None:
        allowed = _copyable_types()
        for method, types in allowed.items():
            if isinstance(value, types):
                self._value, self._setup, self._serialization = value, setup, method
                return
        listed = textwrap.indent("\n".join(repr(types) for types in allowed.values()), "  ")
        raise ValueError(f"Unsupported type: {type(value)}\n"
                         f"`collect_callgrind` restricts globals to the following types:\n{listed}")

    @property
    def value(self) -> Any:
        return self._value

    @property
    def setup(self) -> str | None:
        return self._setup

    @property
    def serialization(self) -> Serialization:
        return self._serialization

    @staticmethod
    def unwrap_all(globals: dict[str, Any]) -> dict[str, Any]:
        """A copy of `globals` with each CopyIfCallgrind replaced by its value."""
        return {k: v.value if isinstance(v, CopyIfCallgrind) else v for k, v in globals.items()}


def _tidy(code: str) -> str:
    """Code as a Timer keeps it: dedented, without the newline that opens a triple-quoted string, nor
    trailing blanks (so a snippet indented in a function runs, and the repr shows it plainly)."""
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


def _torch_for_statements() -> Any:
    """What the name `torch` means in a statement when `globals` does not say: the script's `torch` under
    the runner (minitensor, reporting a missing name as the runner does), minitensor otherwise."""
    import minitensor
    from minitensor.run import TorchModule

    shown = sys.modules.get("torch")
    return shown if isinstance(shown, TorchModule) else minitensor


class Timer:
    """Time a Python statement; PyTorch's `torch.utils.benchmark.Timer`.

    `stmt` and `setup` are Python source, run with `globals` (copied; `torch` is added unless given);
    `timer` is the clock (seconds as a float). `label`, `sub_label`, `description` and `env` name the
    measurement in its repr and in `Compare`. `num_threads` is set (`set_num_threads`) while timing and
    put back after. Methods: `timeit(number)` times one loop of `number` runs after a warm-up;
    `blocked_autorange` picks a loop size and times loops until `min_run_time` seconds are spent;
    `adaptive_autorange` goes on until the IQR is under `threshold` of the median (or `max_run_time`).
    `repeat`, `autorange` and `collect_callgrind` are not provided (PyTorch has the first two only to
    refuse them; Callgrind is out of scope), and C++ statements (`language="cpp"`) are refused.
    """

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict[str, Any] | None = None,
                 label: str | None = None, sub_label: str | None = None, description: str | None = None,
                 env: str | None = None, num_threads: int = 1, language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})  # (a copy: exec adds __builtins__, and a statement may assign)
        if language in (Language.PYTHON, "py", "python"):
            self._globals.setdefault("torch", _torch_for_statements())
            if global_setup:
                raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can "
                                 "simply be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            if self._globals:
                raise ValueError("C++ timing does not support globals.")
            raise NotImplementedError("Timer(language='cpp') compiles the statement against PyTorch's C++ "
                                      "library, which minitensor does not have: time the Python statement.")
        else:
            raise ValueError(f"Invalid language `{language}`.")
        self._language = Language.PYTHON
        stmt, setup = _tidy(stmt), _tidy(setup)
        # the standard library's Timer compiles both now (a SyntaxError shows here, as in PyTorch)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer,
                                   globals=CopyIfCallgrind.unwrap_all(self._globals))
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env, num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        # (at least 1 ns: no real loop is faster, and a zero time would divide by zero below)
        return max(self._timer.timeit(number), 1e-9)

    def _measurement(self, number: int, times: list[float]) -> Measurement:
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One timed loop of `number` runs, after a warm-up loop of `number // 100` runs (at least 2)."""
        with set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(int(number // 100), 2))
            return self._measurement(number, [self._timeit(number)])

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        """Not provided, as in PyTorch: `blocked_autorange` takes replicates."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], NoReturn] | None = None) -> None:
        """Not provided, as in PyTorch: `blocked_autorange` picks the loop size."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _loop_size(self, min_run_time: float) -> int:
        """The number of runs per timed loop: 1, 10, 100, ... until the clock's own cost (the median of five
        empty loops) is at most 1e-4 of a loop lasting at least min_run_time / 1000, or a loop alone takes
        over min_run_time. Also the warm-up."""
        with set_torch_threads(self._task_spec.num_threads):
            # (the median of a float32 tensor in PyTorch: rounded to the default dtype)
            overhead = float(_as_torch_float(sorted(self._timeit(0) for _ in range(5))[2]))
            number = 1
            while True:
                took = self._timeit(number)
                if overhead / took <= 1e-4 and took >= min_run_time / 1000:
                    return number
                if took > min_run_time or number * 10 > 2147483647:  # (PyTorch's C++ int limit)
                    return number
                number *= 10

    def _timed_loops(self, number: int, enough: Callable[[list[float]], bool], min_run_time: float,
                     max_run_time: float | None, callback: Callable[[int, float], Any] | None) -> list[float]:
        """Time loops of `number` runs until `min_run_time` seconds are spent and `enough(times)` says so,
        or more than `max_run_time` seconds are; `callback(number, seconds)` after each loop."""
        times: list[float] = []
        total, done = 0.0, False
        with set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not done:
                took = self._timeit(number)
                times.append(took)
                total += took
                if callback:
                    callback(number, took)
                done = enough(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback: Callable[[int, float], NoReturn] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Loops of a size chosen so the clock's cost is negligible (see `_loop_size`), timed until they add
        up to `min_run_time` seconds: many replicates, each long enough to time well."""
        number = self._loop_size(min_run_time)
        times = self._timed_loops(number, lambda times: True, min_run_time, None, callback)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback: Callable[[int, float], NoReturn] | None = None) -> Measurement:
        """Like `blocked_autorange` (with the loop size chosen for 0.05 s), but timing on until there are more
        than three loops whose IQR is under `threshold` of their median, or `max_run_time` seconds are spent."""
        number = self._loop_size(0.05)

        def steady(times: list[float]) -> bool:
            return len(times) > 3 and self._measurement(number, list(times)).meets_confidence(threshold)

        times = self._timed_loops(number, steady, min_run_time, max_run_time, callback)
        return self._measurement(number, times)

    def collect_callgrind(self, number: int = 100, *, repeats: int | None = None, collect_baseline: bool = True,
                          retain_out_file: bool = False) -> Any:
        """Not provided: PyTorch counts instructions by running the statement under Valgrind's Callgrind."""
        if repeats is not None and repeats < 1:
            raise ValueError("If specified, `repeats` must be >= 1")
        raise NotImplementedError("Timer.collect_callgrind (instruction counts under Valgrind's Callgrind) is "
                                  "not available in minitensor: use timeit, blocked_autorange or "
                                  "adaptive_autorange.")


# ---- Compare: the table -------------------------------------------------------------------------------------


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


# terminal colours: the best time in green, within 10% blue, twice as slow dim red, five times red
_BEST, _GOOD, _BAD, _VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
_BOLD, _RESET = "\033[1m", "\033[0m"


def _colour(text: str, value: float, best: float) -> str:
    """`text` coloured by how `value` compares with the best value of its row or column."""
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + text + _RESET * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + text + _RESET * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + text + _RESET * 2
    if value >= best * 2:
        return _BAD + text + _RESET * 2
    return text


class _CellFormat:
    """How one column prints its medians: a shared number of digits before and after the point, and with
    warnings highlighted, a seven-wide "(! XX%)" slot after each."""

    def __init__(self, measurements: list[Measurement], scale: float, trim: bool, highlight: bool) -> None:
        self.trim = trim
        self.highlight = highlight and any(m.has_warnings for m in measurements)
        leading = [int(math.ceil(_log10(m.median / scale))) for m in measurements]
        self.decimals = min(max(m.significant_figures - d, 0) for m, d in zip(measurements, leading)) if trim else 1
        self.width = max(leading) + self.decimals + (1 if self.decimals else 0)

    def cell(self, value: float | None, figures: int, spread: float | None) -> str:
        if value is None:  # an empty cell as wide as a filled one
            return " " * len(self.cell(1, figures, None))
        if self.trim:
            value = trim_sigfig(value, figures)
        note = f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else ""
        # (f-string widths as PyTorch's: a negative one, for times under 1 ns shown in seconds, reads as a sign)
        return f"{value:>{self.width}.{self.decimals}f}" + f"{note:>{7 if self.highlight else 0}}"


class _Table:
    """The table of one label: a row per (threads, env, row name), a column per description."""

    def __init__(self, results: list[Measurement], colorize: Colorize, trim: bool, highlight: bool) -> None:
        self.results, self.colorize, self.highlight = results, colorize, highlight
        self.label = results[0].label
        self.unit, self.scale = select_unit(min(m.median for m in results))
        # rows in order of first appearance within a thread count and env (a stable sort keeps stmt order)
        self.rows = sorted(ordered_unique(self._row_key(m) for m in results), key=lambda k: (k[0], str(k[1] or "")))
        self.columns = ordered_unique(m.description for m in results)
        self.grid: list[list[Measurement | None]] = [[None] * len(self.columns) for _ in self.rows]
        for m in results:
            self.grid[self.rows.index(self._row_key(m))][self.columns.index(m.description)] = m
        self.formats = [_CellFormat([m for m in column if m is not None], self.scale, trim, highlight)
                        for column in zip(*self.grid)]

    @staticmethod
    def _row_key(m: Measurement) -> tuple[int, str | None, str]:
        return m.num_threads, m.env, m.as_row_name

    def _name_cells(self) -> list[str]:
        """Each row's first cell: its env in brackets where the env changes within a thread count (only if
        the table's envs differ), then its name."""
        envs = {env for _, env, _ in self.rows}
        env_width = max(len(str(env)) for env in envs) if len(envs) > 1 else 0
        cells: list[str] = []
        previous_threads, previous_env = None, ""
        for threads, env, name in self.rows:
            if threads != previous_threads:
                previous_threads, previous_env = threads, ""  # a new thread count shows its first env again
            shown = f"({env})" if len(envs) > 1 and env != previous_env else ""
            cells.append("  " + shown.ljust(env_width + 4) + name)
            previous_env = env
        return cells

    def _value_cells(self, row: list[Measurement | None]) -> list[str]:
        return [fmt.cell(None, 1, None) if m is None else
                fmt.cell(m.median / self.scale, m.significant_figures, m.iqr / m.median if m.has_warnings else None)
                for m, fmt in zip(row, self.formats)]

    def _best(self, i: int, j: int) -> float:
        """The time a cell's colour compares with: its row's best, or its column's within its thread count."""
        if self.colorize == Colorize.ROWWISE:
            return min(m.median for m in self.grid[i] if m is not None)
        threads = self.rows[i][0]
        column = [row[j] for k, row in enumerate(self.grid) if self.rows[k][0] == threads]
        return min(m.median for m in column if m is not None)

    def render(self) -> str:
        header = [""] + ["" if d is None else d for d in self.columns]
        body = [[name] + self._value_cells(row) for name, row in zip(self._name_cells(), self.grid)]
        widths = [max(len(cells[j]) for cells in [header] + body) for j in range(len(header))]
        lines = ["  |  ".join(text.center(w) for text, w in zip(header, widths))]
        full_width = len(lines[0])
        for i, cells in enumerate(body):
            threads = self.rows[i][0]
            if i == 0 or self.rows[i - 1][0] != threads:
                lines.append(f"{threads} threads: ".ljust(full_width, "-"))
            shown = [cells[0].ljust(widths[0])]
            for j, (text, w) in enumerate(zip(cells[1:], widths[1:])):
                m, text = self.grid[i][j], text.center(w)
                if self.colorize != Colorize.NONE and m is not None:
                    text = _colour(text, m.median, self._best(i, j))
                shown.append(text)
            lines.append("  |  ".join(shown))
        title = f" {self.label or ''} ".center(full_width - 2, "-")
        footer = f"Times are in {unit_to_english(self.unit)}s ({self.unit}).\n"
        if self.highlight and any(m.has_warnings for m in self.results):
            footer += "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
        return f"[{title}]\n" + "\n".join(lines) + "\n\n" + footer


class Compare:
    """Print many measurements as tables, PyTorch's `torch.utils.benchmark.Compare`.

    Replicates (equal TaskSpecs) are merged first. One table per `label`; in it a row per `sub_label` (or
    statement), grouped by `num_threads` under a "N threads:" rule, and shown with its `env` where the
    measurements' envs differ; a column per `description`. Cells are medians in the unit of the table's
    fastest time. `trim_significant_figures()`, `colorize()` and `highlight_warnings()` change what
    `print()` and `str()` show.
    """

    def __init__(self, results: list[Measurement]) -> None:
        self._results: list[Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        merged = Measurement.merge(self._results)
        by_label: dict[str | None, list[Measurement]] = collections.defaultdict(list)
        for m in merged:
            by_label[m.label].append(m)
        return "\n".join(_Table(group, self._colorize, self._trim_significant_figures,
                                self._highlight_warnings).render() for group in by_label.values())

    def extend_results(self, results: Iterable[Measurement]) -> None:
        """Add measurements; anything that is not a Measurement raises ValueError and adds nothing."""
        results = list(results)
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Show each time with only the figures its spread supports (`Measurement.significant_figures`)."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colour each time against the best of its column (within its thread count), or of its row."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Mark times whose IQR is over 10% of the median with "(! XX%)", XX the IQR as a percentage."""
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

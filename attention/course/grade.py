r"""The grader: points per case, each case under a time limit, reports for a student, Gradescope and a teacher.

    attention-grade softmax my_softmax.py              one exercise, one file
    attention-grade all my_work/                       every exercise, files my_work/<exercise>.py
    attention-grade all /autograder/submission --json /autograder/results/results.json
    attention-grade --folder submissions/ --csv grades.csv     one row per student (sub-folder), and
                                                       grades_feedback/<student>.txt for each
    attention-grade --hint 2 softmax                   the hints up to tier 2
    attention-grade --release handout/                 the students' files, without the solutions
    attention-grade --list                             the exercises, their cases and points

(`python -m attention.course ...` is the same command.) What is checked in a case is in
`check.py`. The student's code never runs in the grader's own process: each exercise is graded
in a child process (confined as `sandbox.py` says) that sends back values only, over the
channel of `channel.py`, whose messages are checked strictly and never unpickled; every verdict
is computed here from those values. A case that takes longer than --timeout seconds is
stopped (the child is killed, and the rest of that exercise skipped with one line); a crash
(os._exit, a segfault) or a malformed message costs its case, and a new child carries on. So
the other cases, and the other students of a --folder, are graded as usual. What this does not
protect against is in docs/course.md: the student's code runs as the grader's user.

Exit status: 0 when every case passes, 1 otherwise, 2 for a usage error.
"""
import argparse
import contextlib
import csv
import importlib.util
import json
import math
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import warnings

from . import check, release as _release, sandbox
from .channel import (
    CLOSED,
    MAX_PRINTED,
    TIMED_OUT,
    Malformed,
    Reader,
    clip,
    clip_lines,
    decode,
    expect_dict,
    expect_int,
    expect_lines,
    expect_text,
    send,
)
from .check import (
    describe_error,
    from_arguments,
    judge_case,
    run_forward,
    run_gradients,
    run_ninja,
    run_order,
    student_error,
)
from .exercises import EXERCISES, find

DEFAULT_TIMEOUT = 20.0
DEFAULT_MEMORY = 2048  # MB the student's code may allocate (address space beyond what the child starts with)
_PRINTED_LINES = 10  # of what the student's code printed, shown under its case
MAX_PRINTED_TOTAL = 20000  # characters of output shown for one exercise, whatever its cases printed


class CaseResult:
    def __init__(self, exercise, n, status, lines):
        case = exercise.cases[n]
        self.n, self.label, self.max_score = n, case.label, case.points
        self.status, self.lines = status, lines
        self.score = case.points if status == "pass" else 0


class ExerciseResult:
    """The cases of one exercise graded for one file (`path` None: the student has no such file)."""

    def __init__(self, exercise, path, cases):
        self.exercise, self.path, self.cases = exercise, path, cases

    @property
    def score(self):
        return sum(c.score for c in self.cases)

    @property
    def max_score(self):
        return self.exercise.max_score

    @property
    def passed(self):
        return all(c.status == "pass" for c in self.cases)

    def summary(self):
        """One word or so on how it went: 'passed', 'not implemented', '2 timed out' ..."""
        if self.path is None:
            return f"no {self.exercise.name}.py"
        counts = {}
        for c in self.cases:
            counts[c.status] = counts.get(c.status, 0) + 1
        if self.passed:
            return "passed"
        for whole in ("not implemented", "did not load"):
            if counts.get(whole):
                return whole
        return ", ".join(f"{k} {s}" for s, k in counts.items() if s not in ("pass", "not run"))


# ---- running the student's code in a child process -------------------------------------------------

def module_name(path):
    return "student_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")


def load_student(path, name=None):
    """Import the student's file as a module of its own."""
    name = name or module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # so the student's file may use dataclasses, pickling ...
    spec.loader.exec_module(module)
    return module


def _printed(text, dropped=0):
    """What the student's code printed, for the report (their prints are how they debug): at most
    _PRINTED_LINES lines, the first ones and the last ones (how far a case that timed out got)."""
    text = text.rstrip("\n")
    if not text:
        return []
    lines = ["  " + clip(x) for x in text.splitlines()]
    if len(lines) > _PRINTED_LINES:
        head, tail = _PRINTED_LINES - _PRINTED_LINES // 2, _PRINTED_LINES // 2
        lines = lines[:head] + [f"  ... ({len(lines) - head - tail} more lines)"] + lines[-tail:]
    if dropped:
        lines.append(f"  ... ({dropped} more characters not kept: the grader keeps {MAX_PRINTED} a case)")
    return ["your code printed:"] + lines


def _child(name, path, student, scratch, cpu_seconds, memory_bytes, requests, replies):
    """In the child: confine itself, load the student's file, then run what the grader asks (one
    case's forward, its gradients, an order) and send back the values, never a verdict. What the
    student's code prints goes to the grader as it is printed (a case that never ends still shows
    it), each piece a message of its own."""
    exercise = find(name)
    sandbox.limit(scratch, cpu_seconds, memory_bytes, keep_fds=(requests.fileno(), replies.fileno()))
    lock = threading.RLock()  # a student's thread may print while a reply is being sent

    def stream(text):
        with lock:
            send(replies, {"t": "printed", "text": text})

    captured = sandbox.Captured(MAX_PRINTED, stream)
    sys.stdout = sys.stderr = captured

    def reply(kind, case, record):
        with lock:
            send(replies, {"t": kind, "case": case, "dropped": captured.dropped, "record": record})
        captured.__init__(MAX_PRINTED, stream)

    try:
        module = load_student(path, student)
    except BaseException as e:  # noqa: BLE001 (a SyntaxError, an import error, sys.exit at the top ...)
        reply("load error", None, clip_lines(["could not load your file:"]
                                             + ["  " + x for x in student_error(e, path)]))
        return
    if not callable(getattr(module, exercise.entry, None)):
        reply("load error", None, [f"your file defines no function '{exercise.entry}': keep the name the "
                                   "exercise file uses"])
        return
    reply("loaded", None, None)
    args = None
    while True:
        request = requests.recv()  # from the grader: trusted
        if request[0] == "stop":
            return
        kind, n, payload = request
        try:
            if kind == "forward":
                args = from_arguments(payload)
                record = run_forward(module, path, exercise.entry, args)
            elif kind == "gradients":
                record = run_gradients(module, path, exercise.entry, args, *payload)
            elif kind in ("step", "train"):
                record = run_ninja(module, path, kind, payload)
            else:
                record = run_order(module, path, exercise.entry, exercise.cases[n], payload)
        except BaseException as e:  # noqa: BLE001 (sys.exit or KeyboardInterrupt raised by the student's code)
            kind, record = "error", describe_error(e, module, path, None)
        reply(kind, n, record)


_START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"


class _TimedOut(Exception):
    pass


class _Closed(Exception):
    pass


class _Child:
    """One child process grading one exercise's cases from `first` on, and the grader's end of it."""

    def __init__(self, exercise, path, first, timeout, memory):
        # fork: the child starts at once, with minitensor already imported. Elsewhere spawn, which
        # imports it again (slower, the same results): macOS has fork, but its system libraries
        # (Accelerate, numpy's BLAS there) are not safe to use in a forked child
        ctx = multiprocessing.get_context(_START_METHOD)
        self.path = path
        self.scratch = tempfile.mkdtemp(prefix="attention-grade-")
        receive_requests, self.requests = ctx.Pipe(duplex=False)
        self.replies, send_replies = ctx.Pipe(duplex=False)
        cpu_seconds = math.ceil(timeout * (len(exercise.cases) - first + 1))
        self.proc = ctx.Process(target=_child, daemon=True, args=(
            exercise.name, path, module_name(path), self.scratch, cpu_seconds, memory * 2 ** 20,
            receive_requests, send_replies))
        with warnings.catch_warnings():
            # Python 3.12+ warns that forking a process with threads (BLAS's) may deadlock; the child
            # runs only the grader and the student's code, and numpy's BLAS resets itself at fork
            warnings.simplefilter("ignore", DeprecationWarning)
            self.proc.start()
        receive_requests.close()
        send_replies.close()  # the child holds the only sending end now, so its death reads as end of file
        self.reader = Reader(self.replies)
        self.printed, self.kept, self.dropped = [], 0, 0  # what the student's code printed in this case

    def ask(self, request):
        try:
            self.requests.send(request)
        except OSError:
            pass  # a dead child: the reply that never comes says so

    def receive(self, kinds, case, seconds):
        """The record of the next reply, which must be of one of `kinds` for `case`; what the student's
        code prints meanwhile is kept (see `take_printed`). Raises _TimedOut, _Closed or Malformed."""
        deadline = time.monotonic() + seconds
        while True:
            raw = self.reader.receive(deadline)
            if raw is TIMED_OUT:
                raise _TimedOut
            if raw is CLOSED:
                raise _Closed
            msg = decode(raw)
            if isinstance(msg, dict) and msg.get("t") == "printed":
                self._keep(expect_text(expect_dict(msg, ("t", "text"))["text"], "printed", MAX_PRINTED))
                continue
            msg = expect_dict(msg, ("t", "case", "dropped", "record"))
            if msg["t"] not in kinds or msg["case"] != case or type(msg["case"]) is not type(case):
                raise Malformed(f"a reply ({clip(repr(msg['t']), 40)}, case {clip(repr(msg['case']), 40)}) where "
                                f"{kinds[0]!r}" + (f" of case {case + 1}" if case is not None else "") + " was due")
            self.dropped += expect_int(msg["dropped"], "dropped")
            return msg["t"], msg["record"]

    def _keep(self, text):
        room = MAX_PRINTED - self.kept
        self.printed.append(text[:max(room, 0)])
        self.kept += min(len(text), max(room, 0))
        self.dropped += max(0, len(text) - max(room, 0))

    def take_printed(self):
        """The lines showing what the student's code printed since the last call (their prints are
        how they debug; for a case that timed out, how far it got)."""
        lines = _printed("".join(self.printed), self.dropped)
        self.printed, self.kept, self.dropped = [], 0, 0
        return lines

    def stop(self):
        if self.proc.pid is not None and hasattr(os, "killpg"):
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # with whatever the student's code started
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.requests.close()
        self.replies.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def crash_lines(self):
        self.proc.join(5)
        code = self.proc.exitcode
        how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with status {code}"
        return [f"CRASHED: the process running your code {how} (os._exit? a crash inside numpy? out of memory?)"]


def _case(child, exercise, n, seed, timeout):
    """Grade case n with the student's side in `child`: (status, lines). Every verdict is reached
    here, from the values the child sends."""
    left = [timeout]  # the time limit counts the student's side only
    child.take_printed()  # (what the file printed as it loaded is not this case's)

    def call(kind, payload):
        child.ask((kind, n, payload))
        start = time.monotonic()
        try:
            got, record = child.receive((kind, "error"), n, left[0])
        finally:
            left[0] -= time.monotonic() - start
        if got == "error":
            raise _StudentExit(record)
        return record

    try:
        status, lines = judge_case(exercise, exercise.cases[n], seed + n, module_name(child.path), call)
    except _StudentExit as e:
        status, lines = check._error_verdict(e.record, "", "record")
        lines[0] = "ERROR in your code:"
    return status, lines + child.take_printed()


class _StudentExit(Exception):
    """The student's code raised what no case catches (sys.exit ...): the child's record of it."""

    def __init__(self, record):
        super().__init__()
        self.record = record


def _malformed(e):
    return [f"MALFORMED: the process running your code sent the grader a message it cannot use ({e}); "
            "this case scores 0"]


def grade_exercise(exercise, path, seed=0, timeout=DEFAULT_TIMEOUT, memory=DEFAULT_MEMORY):
    """Grade the file at `path` on every case of `exercise`; return an ExerciseResult.

    The student's code runs in a child process (limits in `sandbox.py`) that sends back values
    only; each case's verdict is computed here. A case that runs out of time skips the rest of the
    exercise; a crash or a malformed message costs its case, and a new child goes on."""
    path = os.path.abspath(path)
    cases, done, n, shown = exercise.cases, {}, 0, 0

    def skip(first, line):
        for k in range(first, len(cases)):
            done[k] = CaseResult(exercise, k, "not run", [line])

    while n < len(cases):
        child = _Child(exercise, path, n, timeout, memory)
        try:
            try:
                kind, record = child.receive(("loaded", "load error"), None, timeout)
                lines = None if kind == "loaded" else expect_lines(record, "record") + child.take_printed()
            except _TimedOut:
                lines = ([f"TIMED OUT after {timeout:g} s while loading your file (an endless loop at its top level?)"]
                         + child.take_printed())
            except _Closed:
                lines = child.crash_lines() + child.take_printed()
            except Malformed as e:
                done[n] = CaseResult(exercise, n, "malformed", _malformed(e))
                n += 1
                continue
            if lines is not None:
                done[n] = CaseResult(exercise, n, "did not load", lines)
                skip(n + 1, "not run: your file did not load")
                break
            while n < len(cases):
                rest = None  # why the rest of the exercise is not run, if it is not
                try:
                    status, lines = _case(child, exercise, n, seed, timeout)
                except _TimedOut:  # what it printed before it ran out of time shows how far it got
                    status = "timed out"
                    lines = [f"TIMED OUT after {timeout:g} s ({exercise.timeout_note})"] + child.take_printed()
                    rest = f"not run: case {n + 1} timed out, so the rest of '{exercise.name}' is skipped"
                except _Closed:
                    status, lines = "crashed", child.crash_lines() + child.take_printed()
                except Malformed as e:
                    status, lines = "malformed", _malformed(e)
                except Exception as e:  # noqa: BLE001 (a bug of the grader's own must not stop a class)
                    status, lines = "error", [f"GRADER ERROR: {type(e).__name__}: {clip(str(e))} (please report it)"]
                if shown + sum(map(len, lines)) > MAX_PRINTED_TOTAL:  # the first line is the grader's verdict
                    lines = lines[:1] + [f"(the rest is not shown: the grader shows at most {MAX_PRINTED_TOTAL} "
                                         "characters of output for one exercise)"]
                shown += sum(map(len, lines))
                done[n] = CaseResult(exercise, n, status, lines)
                n += 1
                if status == "not implemented":
                    rest = "not run: not implemented yet"
                if rest is not None:
                    skip(n, rest)
                    n = len(cases)
                if status in ("crashed", "malformed"):
                    break  # a new child carries on with the next case
        finally:
            if n >= len(cases):
                child.ask(("stop",))
            child.stop()
    return ExerciseResult(exercise, path, [done[k] for k in range(len(cases))])


def missing(exercise):
    """The result of a student who handed in no file for `exercise`."""
    return ExerciseResult(exercise, None, [CaseResult(exercise, k, "missing", [f"no file {exercise.name}.py"])
                                           for k in range(len(exercise.cases))])


def find_file(folder, name):
    """`<name>.py` in `folder` or below it (the first in sorted order), or None."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        if f"{name}.py" in files:
            return os.path.join(root, f"{name}.py")
    return None


def grade_submission(folder, exercises, seed=0, timeout=DEFAULT_TIMEOUT, memory=DEFAULT_MEMORY):
    """One student's folder: each exercise's file graded (or scored 0 when it is missing)."""
    results = []
    for e in exercises:
        path = find_file(folder, e.name)
        results.append(missing(e) if path is None else grade_exercise(e, path, seed, timeout, memory))
    return results


# ---- reports ---------------------------------------------------------------------------------------

def _status_word(c):
    return "ok" if c.status == "pass" else c.status.upper()


def hint_lines(exercise, tier):
    lines = [f"hint {k}: {h}" for k, h in enumerate(exercise.hints[:tier], 1)]
    if tier < len(exercise.hints):
        lines.append(f"(next hint: attention-grade --hint {tier + 1} {exercise.name})")
    return lines


def _new_hints(exercise, tier, shown):
    """The hint lines up to `tier`, less those the output already holds (a stub raises with hint 1)."""
    text = "\n".join(shown)
    return [h for h in hint_lines(exercise, tier) if h.split(": ", 1)[-1] not in text]


def report(result, hint_tier=1):
    """The text a student reads for one exercise."""
    e = result.exercise
    if result.path is None:
        return [f"'{e.name}': no file {e.name}.py, 0/{e.max_score} points"]
    out = [f"grading '{e.name}' ({e.title}) in {result.path}"]
    skipped = [c for c in result.cases if c.status == "not run"]
    said = {}  # an error that every case hits is shown once
    for c in result.cases:
        if c.status != "not run":
            out.append(f"  case {c.n + 1}/{len(result.cases)}: {c.label:<50} "
                       f"{_status_word(c):<16} {c.score}/{c.max_score}")
            key = "\n".join(c.lines)
            out += [f"    the same as case {said[key]}"] if key and key in said else ["    " + x for x in c.lines]
            said.setdefault(key, c.n + 1)
    if skipped:
        first, last = skipped[0].n + 1, skipped[-1].n + 1
        out.append(f"  case{'s' if last > first else ''} {first}{f'-{last}' if last > first else ''}: "
                   + skipped[0].lines[0])
    if not result.passed:
        out += _new_hints(e, hint_tier, out)
    n_pass = sum(c.status == "pass" for c in result.cases)
    points = f"{result.score}/{result.max_score} points"
    if result.passed:
        out.append(f"result: PASSED, {n_pass}/{len(result.cases)} cases, {points}")
    elif any(c.status == "not implemented" for c in result.cases):
        out.append(f"result: not implemented yet (write it, then run the grader again), {points}")
    else:
        out.append(f"result: FAILED, {n_pass}/{len(result.cases)} cases pass, {points}")
    return out


def gradescope(results, visibility="visible", hint_tier=1):
    """Gradescope's results.json: the total, and one test per case with its points and output."""
    tests = []
    for r in results:
        failing = not r.passed and r.path is not None
        for c in r.cases:
            output = list(c.lines)
            if failing and c.status not in ("pass", "not run"):
                output += _new_hints(r.exercise, hint_tier, output)
            tests.append({"name": f"{r.exercise.name} {c.n + 1}/{len(r.cases)}: {c.label}", "score": c.score,
                          "max_score": c.max_score, "output": "\n".join(output), "visibility": visibility})
    return {"score": sum(r.score for r in results), "max_score": sum(r.max_score for r in results),
            "output": "\n".join(f"{r.exercise.name}: {r.score}/{r.max_score} ({r.summary()})" for r in results),
            "tests": tests}


def grade_folder(folder, exercises, seed=0, timeout=DEFAULT_TIMEOUT, out=print, memory=DEFAULT_MEMORY):
    """Every sub-folder of `folder` is one student: {student: [ExerciseResult]}, in name order."""
    grades = {}
    for student in sorted(d for d in os.listdir(folder)
                          if os.path.isdir(os.path.join(folder, d)) and not d.startswith((".", "__"))):
        grades[student] = grade_submission(os.path.join(folder, student), exercises, seed, timeout, memory)
        rs = grades[student]
        out(f"{student}: {sum(r.score for r in rs)}/{sum(r.max_score for r in rs)} ("
            + ", ".join(f"{r.exercise.name} {r.score}/{r.max_score}"
                        + ("" if r.passed else f" {r.summary()}") for r in rs) + ")")
    return grades


def write_csv(path, grades, exercises):
    """One row per student: the points of each exercise, the total, the maximum, and notes."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", *(e.name for e in exercises), "total", "max_score", "notes"])
        for student, rs in grades.items():
            notes = "; ".join(f"{r.exercise.name}: {r.summary()}" for r in rs if not r.passed)
            w.writerow([student, *(r.score for r in rs), sum(r.score for r in rs), sum(r.max_score for r in rs), notes])


def feedback_folder(csv_path):
    """Where --folder writes the students' feedback files: beside the CSV, named after it."""
    return os.path.splitext(csv_path)[0] + "_feedback"


def feedback_text(student, results, hint_tier=1):
    """One student's feedback: each exercise's report, as `attention-grade` prints it, and the total."""
    lines = [f"feedback for {student}: {sum(r.score for r in results)}/{sum(r.max_score for r in results)} points", ""]
    for r in results:
        lines += report(r, hint_tier) + [""]
    return "\n".join(lines)


def write_feedback(folder, grades, hint_tier=1):
    """One text file per student, `<folder>/<student>.txt`: what they would read grading their own
    files. Returns the paths written."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for student, results in grades.items():
        path = os.path.join(folder, f"{student}.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(feedback_text(student, results, hint_tier))
        paths.append(path)
    return paths


# ---- the command line ------------------------------------------------------------------------------

def _positive(kind, name):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a{'n integer' if kind is int else ' number'}, got {text!r}")
        if not 0 < value < math.inf:
            raise argparse.ArgumentTypeError(f"must be a number above 0, got {text}")
        return value
    parse.__name__ = name
    return parse


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


_TIERS = max(len(e.hints) for e in EXERCISES.values())


def _tier(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    if not 1 <= value <= _TIERS:
        raise argparse.ArgumentTypeError(f"hints come in tiers 1 to {_TIERS}, got {value}")
    return value


def parser():
    prog = ("attention-grade" if os.path.basename(sys.argv[0]).startswith("attention-grade")
            else "python -m attention.course")
    ap = argparse.ArgumentParser(
        prog=prog, description="Grade exercises of the attention course (backward passes by hand), write "
        "Gradescope results or a class's CSV, or release the students' files.",
        epilog=f"exercises: {', '.join(EXERCISES)}. Exit status: 0 every case passes, 1 some fail, 2 usage error.")
    ap.add_argument("exercise", nargs="?", help="an exercise, several joined by commas, or 'all' "
                    "(default with --folder and --release: all)")
    ap.add_argument("path", nargs="?", help="the student's file, or a folder holding <exercise>.py files")
    ap.add_argument("--list", action="store_true", help="list the exercises with their cases and points")
    ap.add_argument("--hint", type=_tier, default=None, metavar="N",
                    help=f"show hints up to tier N (1 to {_TIERS}) on a failure, or alone "
                         "with an exercise (default: 1)")
    ap.add_argument("--json", metavar="FILE", default=None,
                    help="also write Gradescope's results.json to FILE (default: none)")
    ap.add_argument("--visibility", default="visible",
                    choices=["visible", "hidden", "after_due_date", "after_published"],
                    help="visibility of each test in --json (default: visible)")
    ap.add_argument("--folder", metavar="DIR", default=None,
                    help="grade every sub-folder of DIR as one student's submission (default: none)")
    ap.add_argument("--csv", metavar="FILE", default=None,
                    help="with --folder: write one row per student to FILE, and each student's feedback to "
                         "FILE's name without .csv + _feedback/<student>.txt (default: none)")
    ap.add_argument("--release", metavar="DIR", default=None,
                    help="write the students' files, without solutions, into DIR (default: none)")
    ap.add_argument("--force", action="store_true", help="with --release: overwrite files that exist")
    ap.add_argument("--timeout", type=_positive(float, "float"), default=DEFAULT_TIMEOUT, metavar="S",
                    help=f"seconds each case may take (default: {DEFAULT_TIMEOUT:g})")
    ap.add_argument("--memory", type=_positive(int, "int"), default=DEFAULT_MEMORY, metavar="MB",
                    help=f"megabytes the student's code may allocate, on POSIX (default: {DEFAULT_MEMORY})")
    ap.add_argument("--seed", type=_seed, default=0, help="seed of the random inputs (default: 0)")
    return ap


def _exercises(ap, text):
    if text is None or text == "all":
        return list(EXERCISES.values())
    names = [n.strip() for n in text.split(",")]
    unknown = [n for n in names if n not in EXERCISES]
    if unknown:
        ap.error(f"argument exercise: unknown exercise {unknown[0]!r}; choose from {', '.join(EXERCISES)} or all")
    return [EXERCISES[n] for n in dict.fromkeys(names)]


def _writable(ap, flag, path):
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        ap.error(f"argument {flag}: no folder {folder} to write {os.path.basename(path)} in")
    if os.path.isdir(path):
        ap.error(f"argument {flag}: {path} is a folder, not a file")


def _check_args(ap, a):
    """Refuse combinations that mean nothing, with one line each (argparse's `error:`, exit 2)."""
    modes = [flag for flag, on in (("--list", a.list), ("--folder", a.folder), ("--release", a.release)) if on]
    if len(modes) > 1:
        ap.error(f"argument {modes[1]}: not allowed with {modes[0]}")
    if a.csv and not a.folder:
        ap.error("argument --csv: needs --folder (the students' submissions)")
    if a.force and not a.release:
        ap.error("argument --force: only with --release")
    if a.json and (a.folder or a.release or a.list):
        ap.error("argument --json: grades one submission (a file, or a folder with 'all'); with --folder use --csv")
    if (a.folder or a.release or a.list) and a.path:
        ap.error(f"argument path: not used with {modes[0]}: name the exercises only")
    exercises = _exercises(ap, a.exercise)
    if a.folder and not os.path.isdir(a.folder):
        ap.error(f"argument --folder: no folder {a.folder}")
    if a.release and os.path.exists(a.release) and not os.path.isdir(a.release):
        ap.error(f"argument --release: {a.release} is a file, not a folder")
    for flag, path in (("--csv", a.csv), ("--json", a.json)):
        if path:
            _writable(ap, flag, path)
    if a.csv and os.path.exists(feedback_folder(a.csv)) and not os.path.isdir(feedback_folder(a.csv)):
        ap.error(f"argument --csv: {feedback_folder(a.csv)}, where the feedback files go, is a file")
    if modes or (a.exercise and not a.path and a.hint is not None):
        return exercises
    if not a.exercise or not a.path:
        ap.error("the following arguments are required: exercise, path (or one of --list, --folder, --release, "
                 "or --hint N with an exercise)")
    if not os.path.exists(a.path):
        ap.error(f"argument path: no file or folder {a.path}")
    if os.path.isfile(a.path) and len(exercises) != 1:
        ap.error("argument path: a file holds one exercise; give a folder to grade several")
    return exercises


def main(argv=None):
    """`attention-grade` and `python -m attention.course`."""
    ap = parser()
    a = ap.parse_args(argv)
    exercises = _check_args(ap, a)
    tier = a.hint or 1
    if a.list:
        for e in exercises:
            print(f"{e.name}: {e.title}; your file defines {e.entry}({', '.join(e.arg_names)}); {e.max_score} points")
            for c in e.cases:
                print(f"    {c.points} point{'s' if c.points > 1 else ' '}  {c.label}")
        return 0
    if a.release:
        try:
            paths = _release.release(a.release, [e.name for e in exercises], force=a.force)
        except (FileExistsError, _release.MarkerError) as e:
            ap.error(f"argument --release: {e}")
        for p in paths:
            print(f"wrote {p}")
        return 0
    if a.folder:
        grades = grade_folder(a.folder, exercises, a.seed, a.timeout, memory=a.memory)
        if not grades:
            print(f"{a.folder} has no sub-folders: put each student's files in a folder of their own")
        if a.csv:
            write_csv(a.csv, grades, exercises)
            print(f"wrote {a.csv}")
            if grades:
                paths = write_feedback(feedback_folder(a.csv), grades, tier)
                print(f"wrote {len(paths)} feedback file{'s' if len(paths) != 1 else ''} in {feedback_folder(a.csv)}")
        return 0 if grades and all(r.passed for rs in grades.values() for r in rs) else 1
    if not a.path:  # --hint N exercise: the hints, no grading
        for ex in exercises:
            print(f"{ex.name} ({ex.title}):")
            print("\n".join("  " + h for h in hint_lines(ex, tier)))
        return 0
    if os.path.isdir(a.path):
        results = grade_submission(a.path, exercises, a.seed, a.timeout, a.memory)
    else:
        results = [grade_exercise(exercises[0], a.path, a.seed, a.timeout, a.memory)]
    for r in results:
        print("\n".join(report(r, tier)))
    if len(results) > 1:
        print(f"total: {sum(r.score for r in results)}/{sum(r.max_score for r in results)} points")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(gradescope(results, a.visibility, tier), f, indent=1)
    return 0 if all(r.passed for r in results) else 1

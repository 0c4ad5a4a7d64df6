r"""Writing the students' files: each teacher source with its solutions cut out.

In a teacher source (attention/course/source/<exercise>.py) a solution sits between two marker
lines, indented like the code:

        # BEGIN SOLUTION
        return p * (g - (g * p).sum(dim=-1, keepdim=True))
        # END SOLUTION

The release replaces the block with a stub at the marker's indentation: by default
`raise NotImplementedError("<the task>. Hint 1: ...")`, or, when a stub block follows the
solution, its lines with their leading "# " removed:

        # BEGIN STUB
        # order = []
        # raise NotImplementedError("...")
        # END STUB

Nothing else changes, so a student's file reads like the teacher's. A marker out of place stops
the release before any file is written, naming the source and line.
"""
import importlib.resources
import json
import os
import textwrap

from .exercises import EXERCISES

BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
STUB_BEGIN, STUB_END = "# BEGIN STUB", "# END STUB"
MARKERS = (BEGIN, END, STUB_BEGIN, STUB_END)


class MarkerError(ValueError):
    """A teacher source whose solution or stub markers don't pair up."""


def source_text(name):
    """The teacher's source of exercise `name` (with its solutions)."""
    return (importlib.resources.files("attention.course.source") / f"{name}.py").read_text(encoding="utf-8")


def _raise_stub(indent, message):
    """`raise NotImplementedError(message)`, the message split over lines of at most ~100 characters."""
    width = max(40, 100 - len(indent) - 6)
    parts = textwrap.wrap(message, width, drop_whitespace=False, break_on_hyphens=False)
    if "".join(parts) != message:  # (wrap keeps every character here; if it ever didn't, one long line)
        parts = [message]
    body = "".join(f"{indent}    {json.dumps(part)}\n" for part in parts)  # a Python literal, in double quotes
    return [f"{indent}raise NotImplementedError(\n", body, f"{indent})\n"]


def _find(lines, start, marker, filename, opened_at):
    """The index of the line `marker` after `start`; no other marker may come first."""
    for k in range(start, len(lines)):
        s = lines[k].strip()
        if s == marker:
            return k
        if s in MARKERS:
            raise MarkerError(f"{filename}, line {k + 1}: {s!r} inside the block opened at line {opened_at + 1}; "
                              f"close it with {marker!r} first")
    raise MarkerError(f"{filename}, line {opened_at + 1}: the block it opens has no {marker!r}")


def _uncomment(line, filename, number):
    body = line.lstrip()
    indent = line[:len(line) - len(body)]
    if body.rstrip("\n") == "#":
        return "\n"
    if not body.startswith("# "):
        raise MarkerError(f"{filename}, line {number}: a stub line must be commented out with '# ' "
                          "(the release removes it)")
    return indent + body[2:]


def strip_solutions(text, stub_message, filename="<source>"):
    """`text` with every solution block replaced by its stub (see the module docstring)."""
    lines = text.splitlines(keepends=True)
    out, i, found = [], 0, False
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s == BEGIN:
            found = True
            indent = line[:len(line) - len(line.lstrip())]
            end = _find(lines, i + 1, END, filename, i)
            i = end + 1
            if i < len(lines) and lines[i].strip() == STUB_BEGIN:
                stub_end = _find(lines, i + 1, STUB_END, filename, i)
                out += [_uncomment(x, filename, i + 2 + k) for k, x in enumerate(lines[i + 1:stub_end])]
                i = stub_end + 1
            else:
                out += _raise_stub(indent, stub_message)
        elif s in MARKERS:
            raise MarkerError(f"{filename}, line {i + 1}: {s!r} without a {BEGIN!r} block before it")
        else:
            out.append(line)
            i += 1
    if not found:
        raise MarkerError(f"{filename}: no {BEGIN!r} block, so the student's file would hold the solution")
    released = "".join(out)
    try:
        compile(released, filename, "exec")
    except SyntaxError as e:
        raise MarkerError(f"{filename}: the released file does not compile (line {e.lineno}: {e.msg}); "
                          "check the indentation of the markers") from None
    return released


def released_text(name):
    """The student's file of exercise `name`."""
    return strip_solutions(source_text(name), EXERCISES[name].stub_message(), f"source/{name}.py")


def release(folder, names=None, force=False):
    """Write the student file of each exercise in `names` (all by default) into `folder`; return
    their paths. Refuses, before writing anything, to overwrite a file unless `force`."""
    names = list(EXERCISES) if names is None else list(names)
    texts = {name: released_text(name) for name in names}  # every source is checked first
    paths = {name: os.path.join(folder, f"{name}.py") for name in names}
    existing = [p for p in paths.values() if os.path.exists(p)]
    if existing and not force:
        raise FileExistsError(f"{existing[0]} exists (a student's work?); choose another folder or pass --force")
    os.makedirs(folder, exist_ok=True)
    for name, path in paths.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(texts[name])
    return list(paths.values())

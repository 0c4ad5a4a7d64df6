r"""What the child running a student's code is allowed: limits set before the student's file loads.

- POSIX `resource` limits: CPU seconds (then SIGKILL), address space (a MemoryError past
  `memory` bytes more than the child started with), the size of any file it writes, no core
  file. The grader sets the hard limits too, so the student's code can't raise them back
  (unless the grader runs as root: don't).
- Its own process group, so the grader kills whatever it may have started along with it.
- A fresh scratch folder as its current and temporary folder; its standard input, output and
  error on /dev/null (what it prints through `sys.stdout` is captured, clipped, and sent to the
  grader as it is printed, so even a case that never finishes shows what it printed).
- An audit hook (`sys.addaudithook`) refusing: to open for writing, create, remove, rename or
  chmod anything outside the scratch folder; to fork, exec, spawn or start a subprocess; to send
  signals; to load a C library through ctypes; to change resource limits. This is a speed bump
  for an honest mistake or a casual attack, not a sandbox: code that reaches C (an extension
  module, a path relative to a directory descriptor) goes around it. Hostile classes need a
  container, or Gradescope's own sandbox (docs/course.md says so).
"""
import io
import os
import signal
import sys
import tempfile

try:
    import resource
except ImportError:  # Windows: no POSIX limits (docs/course.md says what that leaves)
    resource = None  # type: ignore[assignment]

FILE_BYTES = 1 << 20  # the largest file the student's code may write (in the scratch folder)

_FORBIDDEN = {
    "os.fork": "start a process", "os.forkpty": "start a process", "os.system": "run a command",
    "os.exec": "run a program", "os.posix_spawn": "run a program", "os.spawn": "run a program",
    "subprocess.Popen": "run a program", "os.kill": "send a signal", "os.killpg": "send a signal",
    "signal.pthread_kill": "send a signal", "ctypes.dlopen": "load a C library", "ctypes.dlsym": "load a C library",
    "resource.setrlimit": "change its limits", "resource.prlimit": "change its limits",
}
# events whose arguments start with paths written to (a rename writes both)
_PATH_EVENTS = {"os.remove": 1, "os.rmdir": 1, "os.mkdir": 1, "os.chmod": 1, "os.chown": 1, "os.rename": 2,
                "os.link": 2, "os.symlink": 2, "os.truncate": 1, "os.utime": 1, "shutil.rmtree": 1, "os.chflags": 1}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


class GuardError(PermissionError):
    """What the audit hook raises in the student's code."""


def _inside(path, root):
    if isinstance(path, int):
        return True  # an open file descriptor: what it is was decided when it was opened
    try:
        full = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return False
    return full == root or full.startswith(root + os.sep) or full == os.devnull


def install_guard(scratch):
    """The audit hook: from now on this process may write only inside `scratch`."""
    root = os.path.realpath(scratch)

    def hook(event, args):
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, 0))[:3]
            writes = bool((flags or 0) & _WRITE_FLAGS) or any(c in (mode or "") for c in "wax+")
            if writes and not _inside(path, root):
                raise GuardError(f"the grader lets your code write only in its scratch folder, not to {path!r}")
        elif event in _PATH_EVENTS:
            for path in list(args)[:_PATH_EVENTS[event]]:
                if not _inside(path, root):
                    raise GuardError(f"the grader lets your code change files only in its scratch folder, "
                                     f"not {path!r}")
        elif event in _FORBIDDEN:
            raise GuardError(f"the grader does not let your code {_FORBIDDEN[event]} ({event})")

    sys.addaudithook(hook)


def _set(limit, value):
    try:
        resource.setrlimit(limit, (value, value))
    except (ValueError, OSError):
        pass  # macOS ignores RLIMIT_AS and may refuse it; the grader's wall-clock timeout still holds


def _address_space():
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def limit(scratch, cpu_seconds, memory_bytes, keep_fds=()):
    """Confine this (child) process; the student's file is loaded after this returns."""
    if hasattr(os, "setpgid"):
        os.setpgid(0, 0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    if hasattr(os, "closerange"):  # every descriptor inherited from the grader, but the channel's
        fds = sorted(set(keep_fds) | {devnull})
        start = 3
        for fd in fds:
            os.closerange(start, fd)
            start = fd + 1
        os.closerange(start, 1 << 16)
    os.chdir(scratch)
    os.environ["TMPDIR"] = tempfile.tempdir = scratch
    sys.dont_write_bytecode = True  # importing the student's file writes no __pycache__ next to it
    if resource is not None:
        _set(resource.RLIMIT_CPU, max(1, int(cpu_seconds) + 1))
        _set(resource.RLIMIT_FSIZE, FILE_BYTES)
        _set(resource.RLIMIT_CORE, 0)
        used = _address_space()
        if used is not None:
            _set(resource.RLIMIT_AS, used + int(memory_bytes))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file too big is an OSError, not a dead child
    install_guard(scratch)


class Captured(io.TextIOBase):
    """sys.stdout and sys.stderr while the student's code runs: the first `cap` characters kept
    (and handed to `sink` as they are written, so the grader has them even if a case never
    finishes), the rest counted."""

    def __init__(self, cap, sink=None):
        self.cap, self.sink, self.parts, self.kept, self.dropped = cap, sink, [], 0, 0

    def writable(self):
        return True

    def write(self, text):
        text = str(text)
        room = self.cap - self.kept
        if room > 0 and text:
            kept = text[:room]
            self.parts.append(kept)
            self.kept += len(kept)
            if self.sink is not None:
                try:
                    self.sink(kept)
                except Exception:  # noqa: BLE001 (a closed pipe: the grader has stopped listening)
                    pass
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def text(self):
        return "".join(self.parts)

r"""The one way the child running a student's code talks to the grader: values, never verdicts.

The child sends each reply as one message: JSON text, whose arrays are float64 bytes in base64,
framed like `multiprocessing.Connection.send_bytes` (a 4-byte big-endian length, then the
bytes). Nothing the child sends is ever unpickled: a pickle from the child could run code in
the grader. The student's code can write on the same pipe (it runs in that process), so the
grader trusts nothing in a message: the reader refuses a message over `MAX_MESSAGE` bytes or one
that stalls half-written past the case's time limit, `decode` refuses anything that is not JSON,
and the `expect_*` checks below refuse any value that is not exactly what was asked for (keys,
types, array shapes, text lengths). A refused message is `Malformed`: its case scores 0 and the
grader carries on with a new child.

Text from the child (what the student's code printed, their error's lines) is clipped to
`MAX_LINE` characters a line, `MAX_LINES` lines and `MAX_PRINTED` characters of printed output,
with control characters replaced, so no submission can swell a report or a results.json, or
send escape sequences to the teacher's terminal.
"""
import base64
import json
import math
import os
import select
import sys
import time

import numpy as np

MAX_MESSAGE = 4 << 20  # bytes: a case's arrays are a few hundred numbers; its order at most ~10k entries
MAX_LINE, MAX_LINES = 400, 60
MAX_PRINTED = 4000  # characters of printed output kept per case (the child counts the rest)
MAX_ELEMENTS = 1 << 16  # of one array
MAX_DIMS = 8


class Malformed(Exception):
    """A message from the child that is not exactly what the grader asked for."""


TIMED_OUT = "timed out"
CLOSED = "closed"


# ---- encoding (the child) --------------------------------------------------------------------------

def clip(text, limit=MAX_LINE):
    text = str(text)
    return text if len(text) <= limit else text[:limit - 5] + " ..."


def clip_lines(lines):
    lines = [clip(x) for x in lines]
    if len(lines) <= MAX_LINES:
        return lines
    return lines[:MAX_LINES - 1] + [f"... ({len(lines) - MAX_LINES + 1} more lines)"]


def _jsonable(value):
    if isinstance(value, np.ndarray):
        data = np.asarray(value, dtype="<f8", order="C")  # (ascontiguousarray would make a scalar 1-d)
        return {"shape": list(data.shape), "f8": base64.b64encode(data.tobytes()).decode("ascii")}
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def encode(value):
    """The bytes of one message: dicts, lists, str, int, float, bool, None and float64 arrays."""
    return json.dumps(_jsonable(value)).encode("utf-8")


def send(conn, value):
    """Write one framed message on `conn` (the child's end of the pipe; never pickled)."""
    conn.send_bytes(encode(value))


# ---- reading and checking (the grader) -------------------------------------------------------------

def decode(payload):
    try:
        return json.loads(payload.decode("utf-8"))
    except Exception as e:  # noqa: BLE001 (bad UTF-8, bad JSON, nesting too deep, a huge integer ...)
        raise Malformed(f"not a message ({type(e).__name__})") from None


class Reader:
    """Framed messages from a pipe, each awaited until a deadline (POSIX: select on the raw pipe).

    A message's length comes first; one longer than MAX_MESSAGE is refused unread, and a message
    that arrives in part and then stalls times out like a silent child."""

    def __init__(self, conn):
        self.conn, self.buffer = conn, b""

    def receive(self, deadline):
        """The next message's payload, TIMED_OUT, or CLOSED (the child died, or closed its end)."""
        if sys.platform == "win32":  # no select on pipes: multiprocessing's own framing, with a size cap
            if not self.conn.poll(max(0.0, deadline - time.monotonic())):
                return TIMED_OUT
            try:
                return self.conn.recv_bytes(MAX_MESSAGE)
            except (EOFError, OSError):
                return CLOSED
        fd = self.conn.fileno()
        while True:
            if len(self.buffer) >= 4:
                n = int.from_bytes(self.buffer[:4], "big", signed=True)
                if not 0 <= n <= MAX_MESSAGE:
                    raise Malformed(f"a message of {n} bytes (at most {MAX_MESSAGE})")
                if len(self.buffer) >= 4 + n:
                    payload, self.buffer = self.buffer[4:4 + n], self.buffer[4 + n:]
                    return payload
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return TIMED_OUT
            try:
                data = os.read(fd, 1 << 16)
            except OSError:
                data = b""
            if not data:
                return CLOSED
            self.buffer += data


def _where(path):
    return "the message" if not path else path


def expect_dict(value, keys, path=""):
    if not isinstance(value, dict) or set(value) != set(keys):
        got = sorted(value) if isinstance(value, dict) else type(value).__name__
        raise Malformed(f"{_where(path)} should have the keys {sorted(keys)}, has {got}")
    return value


def expect_bool(value, path):
    if not isinstance(value, bool):
        raise Malformed(f"{path} should be true or false")
    return value


def expect_int(value, path, low=0, high=1 << 31):
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Malformed(f"{path} should be a whole number from {low} to {high}")
    return value


def _printable(text):
    # control characters (terminal escapes, NUL ...) and lone surrogates become '?', tabs stay
    text = text.encode("utf-8", "replace").decode("utf-8")
    return "".join(c if c == "\t" or c == "\n" or (" " <= c and not 0x7f <= ord(c) < 0xa0) else "?" for c in text)


def expect_text(value, path, limit=MAX_LINE):
    if not isinstance(value, str) or len(value) > limit:
        raise Malformed(f"{path} should be text of at most {limit} characters")
    return _printable(value) if limit > MAX_LINE else _printable(value).replace("\n", " ")


def expect_lines(value, path):
    if not isinstance(value, list) or len(value) > MAX_LINES:
        raise Malformed(f"{path} should be a list of at most {MAX_LINES} lines")
    return [expect_text(x, f"{path}[{i}]") for i, x in enumerate(value)]


def expect_shape(value, path):
    if not isinstance(value, list) or len(value) > MAX_DIMS:
        raise Malformed(f"{path} should be a shape (a list of at most {MAX_DIMS} sizes)")
    shape = tuple(expect_int(d, f"{path}[{i}]", 0, MAX_ELEMENTS) for i, d in enumerate(value))
    if math.prod(shape) > MAX_ELEMENTS:
        raise Malformed(f"{path} should have at most {MAX_ELEMENTS} elements")
    return shape


def expect_array(value, path, shape=None):
    """A float64 array (of exactly `shape`, when given)."""
    expect_dict(value, ("shape", "f8"), path)
    got = expect_shape(value["shape"], f"{path}.shape")
    if shape is not None and got != tuple(shape):
        raise Malformed(f"{path} should have shape {tuple(shape)}, has {got}")
    if not isinstance(value["f8"], str):
        raise Malformed(f"{path}.f8 should be base64 text")
    try:
        data = base64.b64decode(value["f8"], validate=True)
    except ValueError:
        raise Malformed(f"{path}.f8 is not base64") from None
    if len(data) != 8 * math.prod(got):
        raise Malformed(f"{path} holds {len(data)} bytes, its shape {got} needs {8 * math.prod(got)}")
    return np.frombuffer(data, dtype="<f8").reshape(got).astype(np.float64)

"""Keep freed array memory for reuse instead of handing it back to the OS after every op.

Autograd at toy scale makes and drops many arrays of a few hundred kB per op. glibc serves each
such block with a fresh mmap and unmaps it on free, so every new array pays a page fault per 4 kB
page, which costs more than the arithmetic in it (a GELU backward on 135k floats: 1.1 ms with
the default, 0.23 ms without the faults). Raising glibc's mmap and trim thresholds keeps these
blocks in the heap and reuses them. This changes allocation for the whole process, so it is
skipped when MINITENSOR_KEEP_MALLOC=1 is set, and it does nothing outside glibc.
"""
import ctypes
import ctypes.util
import os
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def tune():
    """Apply the thresholds once; return True when they were applied."""
    if os.environ.get("MINITENSOR_KEEP_MALLOC") == "1" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl or another libc: nothing to tune
        return False
    ok = mallopt(_M_MMAP_THRESHOLD, 16 * 1024 * 1024) == 1
    return mallopt(_M_TRIM_THRESHOLD, 128 * 1024 * 1024) == 1 and ok

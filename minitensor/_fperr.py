"""numpy's floating-point warnings, switched off around one call, or once around a whole backward pass.

Ops such as exp, log and division make inf and nan on purpose (PyTorch does so silently) where
numpy would warn. `quiet(fn, "over", ...)` is `fn` run inside `np.errstate` with those categories
ignored; every other category keeps the caller's own setting. Entering that context costs more
than a small op's arithmetic, so the engine enters one for its whole backward pass instead
(`silenced`): inside it every category is ignored already, and `quiet` calls `fn` as it is.
"""
import contextlib
import functools
import threading

import numpy as np


class _Silenced(threading.local):
    on = False  # inside `silenced()` on this thread: numpy ignores every category already


_silenced = _Silenced()


def quiet(fn, *categories):
    """`fn` as a function that runs with numpy's warnings of `categories` ("over", "divide", ...) ignored."""
    # numpy's errstate as a decorator: each call sets the state and restores it (thread-safe, as the
    # `with` form) without making and entering a context object per call, which costs twice as much
    ignoring = np.errstate(**dict.fromkeys(categories, "ignore"))(fn)

    @functools.wraps(fn)
    def run(*args):
        if _silenced.on:
            return fn(*args)
        return ignoring(*args)

    return run


def quietly(*categories):
    """`quiet` as a decorator: `@quietly("over", "invalid")` above a function (or an op's forward)."""
    return lambda fn: quiet(fn, *categories)


@contextlib.contextmanager
def silenced():
    """Every category ignored inside: the engine's backward pass, where minitensor's VJPs make inf and
    NaN silently, as PyTorch's do. The user's own code run there goes through `as_the_user_set`."""
    if _silenced.on:  # (a backward inside a backward)
        yield
        return
    _silenced.users = np.geterr()
    with np.errstate(all="ignore"):
        _silenced.on = True
        try:
            yield
        finally:
            _silenced.on = False


@contextlib.contextmanager
def as_the_user_set():
    """Inside `silenced`, numpy's warnings as the user had set them: for a custom Function's backward
    or a hook, where numpy warns as it would under PyTorch."""
    if not _silenced.on:
        yield
        return
    with np.errstate(**_silenced.users):
        _silenced.on = False
        try:
            yield
        finally:
            _silenced.on = True


# The quiet ufuncs the ops share: division makes inf and nan on purpose (x/0, 0/0), log of 0 and of
# negatives gives -inf and nan, exp overflows to inf, as in PyTorch.
divide = quiet(np.true_divide, "divide", "invalid", "over")
log = quiet(np.log, "divide", "invalid")
exp = quiet(np.exp, "over")

"""numpy's floating-point warnings, switched off cheaply around one call.

Ops such as exp, log and division make inf and nan on purpose (PyTorch does so silently) where
numpy would warn. `np.errstate` costs about as much as a small ufunc call itself, which doubles
the time of an op on tiny arrays, so ops use `quiet(fn, "over", ...)` instead: the same call with
those warnings ignored, by setting numpy's error-state context variable to a state made once per
state the caller had (so a caller's own `np.seterr` or `np.errstate` settings still hold for
every other category). On a numpy without that variable it falls back to `np.errstate`.
"""
import numpy as np

try:  # numpy >= 2.0 keeps its error state in this context variable (np.errstate sets it)
    from numpy._core._ufunc_config import _extobj_contextvar as _state
except ImportError:  # pragma: no cover - older numpy
    _state = None


def quiet(fn, *categories):
    """`fn` as a function that runs with numpy's warnings of `categories` ("over", "divide", ...) ignored."""
    ignore = dict.fromkeys(categories, "ignore")
    if _state is None:
        def run(*args):
            with np.errstate(**ignore):
                return fn(*args)
    else:
        get, set_state, reset = _state.get, _state.set, _state.reset
        quieted = {}  # the caller's state -> the same state with `categories` ignored

        def run(*args):
            current = get()
            state = quieted.get(current)
            if state is None:
                state = _with_ignored(current, ignore, quieted)
            token = set_state(state)
            try:
                return fn(*args)
            finally:
                reset(token)

    run.__name__ = f"quiet_{getattr(fn, '__name__', 'fn')}"
    return run


# The quiet ufuncs the ops share: division makes inf and nan on purpose (x/0, 0/0), log of 0 and of
# negatives gives -inf and nan, exp overflows to inf, as in PyTorch.
divide = quiet(np.true_divide, "divide", "invalid", "over")
log = quiet(np.log, "divide", "invalid")
exp = quiet(np.exp, "over")


def _with_ignored(current, ignore, quieted):
    with np.errstate(**ignore):  # builds on `current`, the state in effect now
        state = _state.get()
    if len(quieted) >= 16:  # a caller that keeps making new states: don't keep them all
        quieted.clear()
    quieted[current] = state
    return state

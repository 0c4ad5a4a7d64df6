"""numpy's floating-point warnings, switched off around one call.

Ops such as exp, log and division make inf and nan on purpose (PyTorch does so silently) where
numpy would warn. `quiet(fn, "over", ...)` is `fn` run inside `np.errstate` with those categories
ignored; every other category keeps the caller's own setting.
"""
import functools

import numpy as np


def quiet(fn, *categories):
    """`fn` as a function that runs with numpy's warnings of `categories` ("over", "divide", ...) ignored."""
    ignore = dict.fromkeys(categories, "ignore")

    @functools.wraps(fn)
    def run(*args):
        with np.errstate(**ignore):
            return fn(*args)

    return run


def quietly(*categories):
    """`quiet` as a decorator: `@quietly("over", "invalid")` above a function (or an op's forward)."""
    return lambda fn: quiet(fn, *categories)


# The quiet ufuncs the ops share: division makes inf and nan on purpose (x/0, 0/0), log of 0 and of
# negatives gives -inf and nan, exp overflows to inf, as in PyTorch.
divide = quiet(np.true_divide, "divide", "invalid", "over")
log = quiet(np.log, "divide", "invalid")
exp = quiet(np.exp, "over")

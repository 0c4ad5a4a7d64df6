"""Switching graph recording on and off: `no_grad`, `enable_grad`, `set_grad_enabled`.

Each works as a context manager and as a decorator, as in PyTorch. The flag is one module-level
boolean read by `Function.apply` before it records a node.
"""
import functools

_enabled = True


def is_grad_enabled():
    return _enabled


class _Switch:
    """Set recording to `self.mode` inside a `with` block or a decorated function; restore after."""

    mode = True

    def __enter__(self):
        global _enabled
        self.prev = _enabled
        _enabled = self.mode
        return self

    def __exit__(self, *exc):
        global _enabled
        _enabled = self.prev
        return False

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _Fixed(mode):  # a fresh switch per call, so a nested or recursive call restores its own `prev`
                return fn(*args, **kwargs)

        return wrapper


class _Fixed(_Switch):
    def __init__(self, mode):
        self.mode = mode


class no_grad(_Switch):
    """Ops inside record no graph: results have `requires_grad=False`. Use for evaluation and updates."""

    mode = False


class enable_grad(_Switch):
    """Turn recording back on inside a `no_grad` region."""

    mode = True


class set_grad_enabled(_Switch):
    """Set recording to `mode`: in a `with` block, as a decorator, or (called plainly) from now on."""

    def __init__(self, mode=True):
        global _enabled
        self.mode = bool(mode)
        self.prev = _enabled
        _enabled = self.mode  # as in PyTorch, the plain call `set_grad_enabled(False)` takes effect

    def __enter__(self):
        return self  # __init__ already switched; __exit__ restores `prev`

    def __call__(self, fn):
        global _enabled
        _enabled = self.prev  # used as a decorator, the switch must not outlive decoration
        return super().__call__(fn)

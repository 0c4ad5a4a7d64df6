r"""Learning-rate schedules that step like PyTorch's.

Call `scheduler.step()` once after each `optimizer.step()`. Constructing a scheduler already
applies its value for step 0 (so `LinearLR` lowers the lr at once) and records each group's
starting lr as `group['initial_lr']`; `last_epoch` counts the steps taken. As in PyTorch, most
schedules are computed *recursively* from the current `group['lr']` (so they compose with other
schedulers and with lr edits); each class documents the closed form that this recursion follows.
"""
from __future__ import annotations

import bisect
import math
import types
import warnings
from typing import Any, Callable, Mapping, Sequence

from .optimizer import Optimizer


class LRScheduler:
    """Base class: subclasses implement `get_lr()` (the lrs for `self.last_epoch`)."""

    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a scheduler "
                        f"with last_epoch={last_epoch}: load the optimizer's state_dict first"
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the latest step, one per param group."""
        return list(self._last_lr)

    def step(self, epoch: int | None = None) -> None:
        """Advance one step (call after optimizer.step()) and write the new lrs into the param groups."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`: call them in the order "
                "optimizer.step(), then lr_scheduler.step(), or the first value of the schedule is skipped",
                UserWarning, stacklevel=2,
            )
        self._step_count += 1
        if epoch is not None:
            warnings.warn("passing an epoch to scheduler.step() is deprecated (as in PyTorch)", UserWarning,
                          stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = self._current_lrs()

    def _current_lrs(self):
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer: ints, floats and lists, so `minitensor.save` can store it."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """lr_t = initial_lr * lr_lambda(t); `lr_lambda` is one function or a list, one per group."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict[str, Any]:
        # Functions cannot be saved; a callable object's attributes can (as in PyTorch).
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        out["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                             for fn in self.lr_lambdas]
        return out

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        state_dict = dict(state_dict)
        saved = state_dict.pop("lr_lambdas", [None] * len(self.lr_lambdas))
        self.__dict__.update(state_dict)
        for fn, attrs in zip(self.lr_lambdas, saved):
            if attrs is not None:
                fn.__dict__.update(attrs)


class StepLR(LRScheduler):
    """Multiply the lr by `gamma` every `step_size` steps: lr_t = initial_lr * gamma ** (t // step_size)."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr_t = initial_lr * gamma ** t."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Half a cosine from initial_lr down to eta_min over T_max steps:

        lr_t = eta_min + (initial_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2

    Computed recursively like PyTorch's, lr_t = eta_min + (lr_{t-1} - eta_min) * (1 + cos(pi t / T)) /
    (1 + cos(pi (t - 1) / T)), which equals the closed form when nothing else edits the lr. Past
    T_max it climbs back up (a cosine of period 2 T_max), as PyTorch's does.
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, T, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current_lrs()
        if self._step_count == 1 and t > 0:
            return [lo + (base - lo) * (1 + math.cos(t * math.pi / T)) / 2 for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            # At the bottom of the cosine the ratio below is 0/0: step up by the first increment instead.
            return [lr + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for base, lr in zip(self.base_lrs, self._current_lrs())]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (lr - lo) + lo for lr in self._current_lrs()]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    r"""Linear warmup (or decay) of the lr's factor from `start_factor` to `end_factor` over `total_iters` steps:

        lr_t = initial_lr * (start + (end - start) * min(t, total_iters) / total_iters)

    With start_factor < 1 = end_factor this is PyTorch's linear warmup. Computed recursively like
    PyTorch's (each step multiplies by the ratio of consecutive factors).
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1.0:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1.0:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, a, b, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
        if t == 0:
            return [lr * a for lr in self._current_lrs()]
        if self._is_initial or t > n:
            return self._current_lrs()
        # factor_t / factor_{t-1} with factor_t = a + (b - a) t / n, written as in PyTorch.
        ratio = 1.0 + (b - a) / (n * a + (t - 1) * (b - a))
        return [lr * ratio for lr in self._current_lrs()]

    def _get_closed_form_lr(self):
        a, b, n = self.start_factor, self.end_factor, self.total_iters
        return [base * (a + (b - a) * min(n, self.last_epoch) / n) for base in self.base_lrs]


class SequentialLR(LRScheduler):
    """Run `schedulers[0]` until `milestones[0]`, then `schedulers[1]` (restarted at its step 0), ...

    E.g. warmup then cosine: SequentialLR(opt, [LinearLR(opt, 0.01, total_iters=w),
    CosineAnnealingLR(opt, T_max=n - w)], milestones=[w]).
    """

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler], milestones: Sequence[int],
                 last_epoch: int = -1) -> None:
        if not schedulers:
            raise ValueError("SequentialLR expects at least one scheduler")
        for i, s in enumerate(schedulers):
            if getattr(s, "optimizer", None) is not optimizer:
                raise ValueError(f"SequentialLR: scheduler {i} ({type(s).__name__}) belongs to a different optimizer")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"SequentialLR expects one milestone fewer than schedulers, got {len(schedulers)} schedulers "
                f"and {len(milestones)} milestones"
            )
        self.optimizer = optimizer
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch = last_epoch + 1
        # Building each child scheduler already stepped it once; undo that, then start the first one.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for s in self._schedulers:
            _undo_step(s)
        first = self._schedulers[bisect.bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:  # type: ignore[override]  # (no epoch: as PyTorch's)
        self.last_epoch += 1
        i = bisect.bisect_right(self._milestones, self.last_epoch)
        s = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            s._update_lr(0)
        else:
            s.step()
        self._last_lr = s.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        out["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return out

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        state_dict = dict(state_dict)
        children = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for s, sd in zip(self._schedulers, children):
            s.load_state_dict(sd)


def _undo_step(s):
    if hasattr(s, "_schedulers"):
        for child in s._schedulers:
            _undo_step(child)
    else:
        s.last_epoch -= 1


def linear_warmup(optimizer: Optimizer, warmup_steps: int, total_steps: int | None = None,
                  last_epoch: int = -1) -> LambdaLR:
    r"""A LambdaLR for linear warmup, optionally followed by linear decay to 0:

        factor(t) = (t + 1) / warmup_steps                            for t < warmup_steps
        factor(t) = 1                                                 after, if total_steps is None
        factor(t) = max(0, (total_steps - t) / (total_steps - warmup_steps))   after, otherwise

    so the first update already uses initial_lr / warmup_steps (never 0), update warmup_steps - 1
    uses the full lr, and with total_steps the lr reaches 0 at step total_steps.
    """
    if warmup_steps < 1:
        raise ValueError(f"linear_warmup: warmup_steps must be >= 1, got {warmup_steps}")
    if total_steps is not None and total_steps <= warmup_steps:
        raise ValueError(f"linear_warmup: total_steps ({total_steps}) must exceed warmup_steps ({warmup_steps})")

    def factor(t):
        if t < warmup_steps:
            return (t + 1) / warmup_steps
        if total_steps is None:
            return 1.0
        return max(0.0, (total_steps - t) / (total_steps - warmup_steps))

    return LambdaLR(optimizer, factor, last_epoch)


_LRScheduler = LRScheduler

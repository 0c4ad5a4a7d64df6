r"""Weight averaging: Stochastic Weight Averaging (SWA) and exponential moving averages (EMA), as PyTorch's
`torch.optim.swa_utils`.

SWA (Izmailov et al., 2018) trains as usual, then averages the weights visited over the last epochs,
usually at a constant or cyclic learning rate (`SWALR`): the average sits nearer the centre of a wide
minimum than any single iterate. After n models the running mean is

    W_avg <- W_avg + (W - W_avg) / (n + 1)

EMA instead keeps W_ema <- decay * W_ema + (1 - decay) * W. `AveragedModel` holds a copy of the model
and applies either rule in `update_parameters(model)`; the first call copies the model's weights.
Averaged weights never saw a forward pass, so a BatchNorm's running statistics do not match them:
`update_bn(loader, model)` runs the data through once to recompute them (or `use_buffers=True`
averages the buffers too).
"""
from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy
from typing import Any, Callable, Iterable, Literal, Sequence, Union

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..nn.module import Module
from ..nn.normalization import _BatchNorm
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _per_group
from .optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]

PARAM_LIST = Union[Sequence[Tensor], list[Tensor]]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """An in-place EMA over lists of tensors: W_ema <- W_ema + (1 - decay)(W - W_ema) (a lerp for floats;
    other dtypes as decay * W_ema + (1 - decay) * W, written back into W_ema's dtype)."""
    _check_decay(decay)

    @grad_mode.no_grad()
    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _: Any) -> None:
        if _dtype.is_floating(ema_param_list[0].dtype):
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """An in-place running mean over lists of tensors: W_avg <- W_avg + (W - W_avg) / (n + 1) (a lerp with
    weight 1 / (n + 1) for floats; for integers an addcdiv, which PyTorch refuses for a tensor n as here)."""

    @grad_mode.no_grad()
    def swa_update(averaged_param_list: PARAM_LIST, current_param_list: PARAM_LIST,
                   num_averaged: Tensor | int) -> None:
        if _dtype.is_floating(averaged_param_list[0].dtype):
            weight = 1 / (num_averaged + 1)
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.lerp_(p_model, weight)
            return
        diffs = [p_model - p_avg for p_avg, p_model in zip(averaged_param_list, current_param_list)]
        for p_avg, diff in zip(averaged_param_list, diffs):
            if isinstance(num_averaged, Tensor):
                p_avg.addcdiv_(diff, num_averaged + 1)
            else:
                p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The EMA of one tensor, returned: decay * W_ema + (1 - decay) * W."""
    _check_decay(decay)

    @grad_mode.no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The running mean of one tensor, returned: W_avg + (W - W_avg) / (n + 1)."""

    @grad_mode.no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters (and, with `use_buffers=True`, buffers) are a running average of
    the models passed to `update_parameters`.

    avg_fn(averaged, current, n) returns one averaged tensor; multi_avg_fn(averaged_list, current_list, n)
    updates lists in place (called once per dtype). Neither given: the equal-weight running mean (SWA),
    computed tensor by tensor as PyTorch does on the CPU. `n_averaged` (a long buffer, in the state dict)
    counts the models averaged. Without `use_buffers` the buffers are copied from the latest model.
    """

    n_averaged: Tensor

    def __init__(self, model: Module, device: Any = None, avg_fn: Callable[[Tensor, Tensor, Any], Tensor] | None = None,
                 multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Any], None] | None = None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", Tensor._make(np.array(0, dtype=np.int64)))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> Iterable[Tensor]:
        return itertools.chain(model.parameters(), model.buffers()) if self.use_buffers else model.parameters()

    def update_parameters(self, model: Module) -> None:
        """Fold `model`'s current weights into the average (the first call copies them)."""
        mine = [p.detach() for p in (self._tensors(self.module) if self.use_buffers else self.parameters())]
        theirs = [p.detach() for p in self._tensors(model)]
        pairs = list(zip(mine, theirs))  # (the shorter list decides, as PyTorch's zip)
        first = int(self.n_averaged.item()) == 0
        if first:
            for p_avg, p_model in pairs:
                p_avg.copy_(p_model)
        else:
            self._average(pairs)
        if not self.use_buffers:
            for b_avg, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_avg.detach().copy_(b_model.detach())
        with grad_mode.no_grad():
            self.n_averaged.add_(1)

    def _average(self, pairs: list[tuple[Tensor, Tensor]]) -> None:
        if self.multi_avg_fn is None:  # tensor by tensor: the user's avg_fn, or the running mean
            avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
            for p_avg, p_model in pairs:
                p_avg.copy_(avg_fn(p_avg, p_model, self.n_averaged))
            return
        groups: dict[Any, tuple[list[Tensor], list[Tensor]]] = {}  # dtype -> (averaged, current), PyTorch's grouping
        for p_avg, p_model in pairs:
            mine, theirs = groups.setdefault(p_avg.dtype, ([], []))
            mine.append(p_avg)
            theirs.append(p_model)
        for mine, theirs in groups.values():
            self.multi_avg_fn(mine, theirs, self.n_averaged)


@grad_mode.no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute every BatchNorm's running mean and variance with one pass over `loader` (each batch a tensor, or
    a list/tuple whose first item is the input): the statistics are reset, averaged over all batches
    (momentum None), and the momenta and the model's train/eval mode put back."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to `swa_lr` over `anneal_epochs` steps, then hold it there.

    With t = min(1, step / anneal_epochs) and alpha = t ('linear') or (1 - cos(pi t)) / 2 ('cos'), the lr is
    swa_lr * alpha + lr_0 * (1 - alpha), lr_0 being recovered from the previous step's lr (PyTorch's
    recurrence, so another scheduler may have changed the lr before SWA starts).
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | Sequence[float], anneal_epochs: int = 10,
                 anneal_strategy: Literal["cos", "linear"] = "cos", last_epoch: int = -1) -> None:
        for value, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The lr_0 that lr = swa_lr * alpha + lr_0 * (1 - alpha) came from."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self) -> list[float]:
        if not getattr(self, "_get_lr_called_within_step", False):
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        groups = self.optimizer.param_groups
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs, strict=True)]

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer and the anneal function (rebuilt from the strategy's name on load)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: Any) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)

r"""L-BFGS with PyTorch's iteration, history and optional strong-Wolfe line search (one closure per step)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..autograd import grad_mode
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, clamped to `bounds`
    (the midpoint of the bounds when the cubic has no minimum)."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(evaluate, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Find a step t along d meeting the strong Wolfe conditions: first bracket one, then zoom in by cubic
    interpolation. `evaluate(x, t, d)` gives (loss, flat gradient) at x + t d. Returns (f, g, t, evaluations)."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = evaluate(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:  # bracketing phase
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    insufficient = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:  # zoom phase
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # keep t away from the ends of the bracket, or the bracket may shrink too slowly
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = t, f_new, g_new.copy(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low] = t, f_new, g_new.copy(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    r"""L-BFGS as `torch.optim.LBFGS`: `optimizer.step(closure)` runs up to `max_iter` iterations, each

        d = -H g     (H: the inverse Hessian estimate from the last `history_size` pairs
                      s = t d, y = g_new - g_old with y.s > 1e-10, by the two-loop recursion, scaled by y.s / y.y)
        t = lr       (the very first iteration: min(1, 1 / sum|g|) * lr)
        p = p + t d  (or the step a strong-Wolfe line search picks, with line_search_fn='strong_wolfe')

    stopping early when max|g| <= tolerance_grad, when the step or the loss change falls below
    tolerance_change, or after `max_eval` closure calls. `closure()` must clear the gradients, compute
    the loss, call backward and return the loss. One parameter group only, as PyTorch's. The state
    (under the first parameter, as PyTorch's) holds `func_evals`, `n_iter`, the direction `d`, the step `t`,
    the history `old_dirs`, `old_stps`, `ro`, `H_diag`, `prev_flat_grad`, `prev_loss` and `al`; the scalars
    among them are Python floats here (PyTorch keeps 0-dim tensors).
    """

    def __init__(self, params: ParamsT, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _state_spec(self, group):
        return None  # free-form: the history's length varies

    # ---- the parameters as one flat vector ---------------------------------------------------
    def _flat_grad(self):
        dtype = self._params[0]._array.dtype
        return np.concatenate([
            np.zeros(p._array.size, dtype) if p.grad is None else p.grad._array.astype(dtype, copy=False).ravel()
            for p in self._params])

    def _add_to_params(self, step, direction):
        offset = 0
        for p in self._params:
            n = p._array.size
            p._array += step * direction[offset:offset + n].reshape(p._array.shape)
            p._bump_version()
            offset += n

    def _set_params(self, values):
        for p, v in zip(self._params, values):
            p._array[...] = v
            p._bump_version()

    def _loss(self, closure):
        with grad_mode.enable_grad():
            loss = closure()
        return loss

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to max_iter L-BFGS iterations; `closure` (required) recomputes the loss and gradients."""
        if closure is None:
            raise RuntimeError("LBFGS.step needs a closure that recomputes the loss (it evaluates it many times)")
        self._opt_called = True
        with grad_mode.no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = float(group["lr"]), group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = self._loss(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if np.abs(flat_grad).max() <= tol_grad:
            return orig_loss

        def arr(v):
            return v._array if isinstance(v, Tensor) else v

        d, t = arr(state.get("d")), state.get("t")
        old_dirs = [arr(v) for v in state.get("old_dirs", [])]
        old_stps = [arr(v) for v in state.get("old_stps", [])]
        ro, H_diag = list(state.get("ro", [])), state.get("H_diag")
        prev_flat_grad, prev_loss = arr(state.get("prev_flat_grad")), state.get("prev_loss")
        al = state.get("al")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, H_diag = [], [], [], 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only if it keeps H positive definite
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                if al is None:
                    al = [None] * history_size
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q = q + -al[i] * old_dirs[i]
                r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r = r + (al[i] - be_i) * old_stps[i]
                d = r
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tol_change:  # not a descent direction
                break
            ls_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._array.copy() for p in self._params]

                def evaluate(x, step, direction):
                    self._add_to_params(step, direction)
                    value = float(self._loss(closure))
                    grad = self._flat_grad()
                    self._set_params(x)
                    return value, grad

                loss, flat_grad, t, ls_evals = _strong_wolfe(evaluate, x_init, t, d, loss, flat_grad, gtd,
                                                             max_ls=max_eval - current_evals)
                self._add_to_params(t, d)
                opt_cond = np.abs(flat_grad).max() <= tol_grad
            else:
                self._add_to_params(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(self._loss(closure))
                    flat_grad = self._flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tol_grad
                    ls_evals = 1
            current_evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tol_change or abs(loss - prev_loss) < tol_change:
                break

        def tensor(v):
            return Tensor._make(v)

        state["d"] = tensor(d)
        state["t"] = float(t)
        state["old_dirs"] = [tensor(v) for v in old_dirs]
        state["old_stps"] = [tensor(v) for v in old_stps]
        state["ro"] = [float(v) for v in ro]
        state["H_diag"] = float(H_diag)
        state["prev_flat_grad"] = tensor(prev_flat_grad)
        state["prev_loss"] = prev_loss
        if al is not None:
            state["al"] = [None if v is None else float(v) for v in al]
        return orig_loss

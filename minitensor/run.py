"""Run an unmodified PyTorch script on minitensor: `python -m minitensor.run script.py [args ...]`.

How it works. While the script runs, an import hook (a finder at the front of `sys.meta_path`)
answers every `import torch...` with minitensor's module of the same role, listed in `MODULES`
(`torch` -> `minitensor`, `torch.nn.functional` -> `minitensor.nn.functional`,
`torch.utils.data` -> `minitensor.utils.data`, ...). The script gets each one wrapped in a
`TorchModule`: an empty module whose `__getattr__` looks every name up in minitensor's module.
So a name minitensor lacks (`torch.fft`, `F.unfold`) stops the script with one line naming it and
the script's line that used it, and exit status 2:

    minitensor.run: torch.fft is not available in minitensor (used at script.py:12)

instead of an AttributeError from deep inside. The missing name is raised as an AttributeError
(an ImportError for `import torch.xyz`), so a script's own `hasattr(F, "...")` or
`try: import ... except ImportError` fallbacks still work; only an error the script leaves
uncaught ends the run.

The script runs as `__main__` with `sys.argv = [script, *args]`, as `python script.py args` would
run it, and meanwhile reprs name the library "torch" (`torch.Size([2, 3])`, see `Size.shown_as`)
so the output reads as the tutorial's text. Nothing of this happens at `import minitensor`: the
hook exists only inside `torch_is_minitensor()`, which `run` enters.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys
import types

from .tensor import Size

USAGE = """usage: python -m minitensor.run script.py [args ...]   (or: minitensor-run script.py [args ...])

Run a PyTorch script on minitensor, unmodified: its `import torch...` statements get minitensor's
modules. A name minitensor lacks stops the script with a message naming it and the line that used
it (exit status 2). Everything after script.py goes to the script as sys.argv[1:].
"""

# Each torch module a script may import, and the minitensor module (or attribute) that plays its part.
MODULES = {
    "torch": "minitensor",
    "torch.nn": "minitensor.nn",
    "torch.nn.functional": "minitensor.nn.functional",
    "torch.nn.init": "minitensor.nn.init",
    "torch.nn.utils": "minitensor.nn.utils",
    "torch.nn.parameter": "minitensor.nn.parameter",
    "torch.nn.attention": "minitensor.nn.attention",
    "torch.nn.attention.bias": "minitensor.nn.attention_bias",
    "torch.optim": "minitensor.optim",
    "torch.optim.lr_scheduler": "minitensor.optim.lr_scheduler",
    "torch.optim.optimizer": "minitensor.optim.optimizer",
    "torch.utils": "minitensor.utils",
    "torch.utils.data": "minitensor.utils.data",
    # the data package's modules, by the paths tutorials import them from (h-optimdata)
    "torch.utils.data.dataloader": "minitensor.utils.data.dataloader",
    "torch.utils.data.dataset": "minitensor.utils.data.dataset",
    "torch.utils.data.sampler": "minitensor.utils.data.sampler",
    "torch.utils.data._utils": "minitensor.utils.data._utils",
    "torch.utils.data._utils.collate": "minitensor.utils.data._utils.collate",
    "torch.autograd": "minitensor.autograd",
    "torch.autograd.functional": "minitensor.autograd.functional",  # (autograd helper: jacobian, hessian ...)
    "torch.autograd.profiler": "minitensor.autograd.profiler",
    "torch.autograd.graph": "minitensor.autograd.graph",
    "torch.autograd.forward_ad": "minitensor.autograd.forward_ad",
    "torch.profiler": "minitensor.profiler",
    "torch.autograd.function": "minitensor.autograd.custom",  # (Function, once_differentiable)
    "torch.func": "minitensor.func",  # (grad, vmap, jacrev, functional_call ...)
    "torch.random": "minitensor.random",
    "torch.cuda": "minitensor.cuda",
    "torch.backends": "minitensor.backends",
    "torch.backends.mps": "minitensor.backends.mps",
    "torch.backends.cudnn": "minitensor.backends.cudnn",
    "torch.linalg": "minitensor.linalg",  # issue 29
    "torch.special": "minitensor.special",  # issue 29
    # ---- h-misc: the stand-ins of minitensor/_runtime.py
    "torch.backends.cuda": "minitensor.backends.cuda",
    "torch.amp": "minitensor.amp",
    # ---- torch.distributions (minitensor/distributions) ----
    "torch.distributions": "minitensor.distributions",
    "torch.distributions.distribution": "minitensor.distributions.distribution",
    "torch.distributions.constraints": "minitensor.distributions.constraints",
    "torch.distributions.categorical": "minitensor.distributions.categorical",
    "torch.distributions.one_hot_categorical": "minitensor.distributions.one_hot_categorical",
    "torch.distributions.normal": "minitensor.distributions.normal",
    "torch.distributions.bernoulli": "minitensor.distributions.bernoulli",
    "torch.distributions.uniform": "minitensor.distributions.uniform",
    "torch.distributions.multivariate_normal": "minitensor.distributions.multivariate_normal",
    "torch.distributions.beta": "minitensor.distributions.beta",
    "torch.distributions.gamma": "minitensor.distributions.gamma",
    "torch.distributions.exponential": "minitensor.distributions.exponential",
    "torch.distributions.laplace": "minitensor.distributions.laplace",
    "torch.distributions.poisson": "minitensor.distributions.poisson",
    "torch.distributions.binomial": "minitensor.distributions.binomial",
    "torch.distributions.geometric": "minitensor.distributions.geometric",
    "torch.distributions.dirichlet": "minitensor.distributions.dirichlet",
    "torch.distributions.log_normal": "minitensor.distributions.log_normal",
    "torch.distributions.independent": "minitensor.distributions.independent",
    "torch.distributions.gumbel": "minitensor.distributions.gumbel",
    "torch.distributions.kl": "minitensor.distributions.kl",
    "torch.distributions.utils": "minitensor.distributions.utils",
    # ---- h-nnrest: packed sequences (minitensor/nn/utils/rnn.py)
    "torch.nn.utils.rnn": "minitensor.nn.utils.rnn",
    # ---- h-prune: pruning (minitensor/nn/utils/prune.py)
    "torch.nn.utils.prune": "minitensor.nn.utils.prune",
    # ---- h-param: parametrizations (minitensor/nn/utils/parametrize.py, parametrizations.py)
    "torch.nn.utils.parametrize": "minitensor.nn.utils.parametrize",
    "torch.nn.utils.parametrizations": "minitensor.nn.utils.parametrizations",
    # ---- h-modules: whole-model checkpoints, module hooks, and modules scripts import at the top
    "torch.serialization": "minitensor.serialization",
    "torch.nn.modules": "minitensor.nn",
    "torch.nn.modules.module": "minitensor.nn.module",
    "torch.utils.hooks": "minitensor.utils.hooks",
    "torch.onnx": "minitensor.onnx",
    "torch.utils.tensorboard": "minitensor.utils.tensorboard",  # (only with the tensorboard package installed)
    # ---- h-mods: modules tutorials import that minitensor already serves, and the stand-ins made for them
    "torch.testing": "minitensor.testing",
    "torch.types": "minitensor.types",
    "torch.cuda.amp": "minitensor.cuda_amp",  # (deprecated spellings of torch.amp, disabled as without CUDA)
    "torch.utils.checkpoint": "minitensor.utils.checkpoint",  # (a stand-in: the function runs as it is)
    "torch.utils.benchmark": "minitensor.utils.benchmark",  # (Timer, Measurement, Compare: no Callgrind, no fuzzers)
    "torch.optim.swa_utils": "minitensor.optim.swa_utils",
    "torch.nn.utils.clip_grad": "minitensor.nn.utils",
    "torch.nn.utils.stateless": "minitensor.nn.utils.stateless",
    # ---- h-fusion: batch-norm fusion and the window functions
    "torch.nn.utils.fusion": "minitensor.nn.utils.fusion",
    "torch.nn.grad": "minitensor.nn.grad",  # (h-tut2: conv{1,2,3}d_input / _weight)
    "torch.signal": "minitensor.signal",
    "torch.signal.windows": "minitensor.signal.windows",
    "torch.distributions.cauchy": "minitensor.distributions.cauchy",
    "torch.distributions.chi2": "minitensor.distributions.chi2",
    "torch.distributions.constraint_registry": "minitensor.distributions.constraint_registry",
    "torch.distributions.continuous_bernoulli": "minitensor.distributions.continuous_bernoulli",
    "torch.distributions.exp_family": "minitensor.distributions.exp_family",
    "torch.distributions.fishersnedecor": "minitensor.distributions.fishersnedecor",
    "torch.distributions.generalized_pareto": "minitensor.distributions.generalized_pareto",
    "torch.distributions.half_cauchy": "minitensor.distributions.half_cauchy",
    "torch.distributions.half_normal": "minitensor.distributions.half_normal",
    "torch.distributions.inverse_gamma": "minitensor.distributions.inverse_gamma",
    "torch.distributions.kumaraswamy": "minitensor.distributions.kumaraswamy",
    "torch.distributions.lkj_cholesky": "minitensor.distributions.lkj_cholesky",
    "torch.distributions.logistic_normal": "minitensor.distributions.logistic_normal",
    "torch.distributions.lowrank_multivariate_normal": "minitensor.distributions.lowrank_multivariate_normal",
    "torch.distributions.mixture_same_family": "minitensor.distributions.mixture_same_family",
    "torch.distributions.multinomial": "minitensor.distributions.multinomial",
    "torch.distributions.negative_binomial": "minitensor.distributions.negative_binomial",
    "torch.distributions.pareto": "minitensor.distributions.pareto",
    "torch.distributions.relaxed_bernoulli": "minitensor.distributions.relaxed_bernoulli",
    "torch.distributions.relaxed_categorical": "minitensor.distributions.relaxed_categorical",
    "torch.distributions.studentT": "minitensor.distributions.studentT",
    "torch.distributions.transformed_distribution": "minitensor.distributions.transformed_distribution",
    "torch.distributions.transforms": "minitensor.distributions.transforms",
    "torch.distributions.von_mises": "minitensor.distributions.von_mises",
    "torch.distributions.weibull": "minitensor.distributions.weibull",
    "torch.distributions.wishart": "minitensor.distributions.wishart",
    # torch.nn.modules.<file>: the classes PyTorch defines in each file (minitensor/nn/modules/ re-exports them)
    "torch.nn.modules.activation": "minitensor.nn.modules.activation",
    "torch.nn.modules.adaptive": "minitensor.nn.modules.adaptive",
    "torch.nn.modules.batchnorm": "minitensor.nn.modules.batchnorm",
    "torch.nn.modules.channelshuffle": "minitensor.nn.modules.channelshuffle",
    "torch.nn.modules.container": "minitensor.nn.modules.container",
    "torch.nn.modules.conv": "minitensor.nn.modules.conv",
    "torch.nn.modules.distance": "minitensor.nn.modules.distance",
    "torch.nn.modules.dropout": "minitensor.nn.modules.dropout",
    "torch.nn.modules.flatten": "minitensor.nn.modules.flatten",
    "torch.nn.modules.fold": "minitensor.nn.modules.fold",
    "torch.nn.modules.instancenorm": "minitensor.nn.modules.instancenorm",
    "torch.nn.modules.linear": "minitensor.nn.modules.linear",
    "torch.nn.modules.loss": "minitensor.nn.modules.loss",
    "torch.nn.modules.normalization": "minitensor.nn.modules.normalization",
    "torch.nn.modules.padding": "minitensor.nn.modules.padding",
    "torch.nn.modules.pixelshuffle": "minitensor.nn.modules.pixelshuffle",
    "torch.nn.modules.pooling": "minitensor.nn.modules.pooling",
    "torch.nn.modules.rnn": "minitensor.nn.modules.rnn",
    "torch.nn.modules.sparse": "minitensor.nn.modules.sparse",
    "torch.nn.modules.transformer": "minitensor.nn.modules.transformer",
    "torch.nn.modules.upsampling": "minitensor.nn.modules.upsampling",
}


class NotInMinitensor(Exception):
    """Mixed into the errors for a torch name minitensor lacks; says where the script used it."""

    last: NotInMinitensor | None  # (set below)

    def __init__(self, name):
        self.torch_name = name
        self.used_at = _script_location()
        where = f" (used at {self.used_at})" if self.used_at else ""
        super().__init__(f"{name} is not available in minitensor{where}")
        NotInMinitensor.last = self


NotInMinitensor.last = None  # the latest one: `from torch import fft` replaces it by a bare ImportError


class MissingAttribute(NotInMinitensor, AttributeError):
    pass


class MissingModule(NotInMinitensor, ModuleNotFoundError):
    def __init__(self, name):
        super().__init__(name)
        self.name = name  # ModuleNotFoundError's field: import machinery compares it


def _script_location():
    """file:line of the innermost frame that is the user's code (not this file, not importlib)."""
    frame = sys._getframe(1)
    importlib_dir = os.path.dirname(importlib.__file__)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename != __file__ and not filename.startswith("<frozen") and os.path.dirname(filename) != importlib_dir:
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def _minitensor_object(target):
    """The module (or, for a namespace minitensor keeps as an attribute, the object) named `target`."""
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        if e.name != target:
            raise
    parent, _, attr = target.rpartition(".")
    return getattr(importlib.import_module(parent), attr, None)


class TorchModule(types.ModuleType):
    """What `import torch.xyz` gives the script: each name is looked up in minitensor's module."""

    def __init__(self, name, real):
        super().__init__(name, getattr(real, "__doc__", None))
        self.__path__ = []  # a package, so `import torch.nn` comes back to the finder
        self._real = real

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):  # __version__, __all__; and Python's own probes
            return getattr(self._real, attr)
        name = f"{self.__name__}.{attr}"
        if name in MODULES:  # a submodule not imported yet, e.g. torch.utils.data
            try:
                return torch_module(name)  # not through `import`: a module kept after the run stays minitensor's
            except MissingModule:
                raise MissingAttribute(name) from None
        try:
            value = getattr(self._real, attr)
        except AttributeError:
            raise MissingAttribute(name) from None
        if isinstance(value, types.ModuleType):  # minitensor's own submodules are not torch's
            raise MissingAttribute(name)
        return value

    def __dir__(self):
        return dir(self._real)

    def __repr__(self):
        return f"<module '{self.__name__}' (minitensor's {getattr(self._real, '__name__', '')})>"


_STAND_INS: dict[str, TorchModule] = {}  # torch module name -> its TorchModule: one each, whoever asks


def torch_module(name):
    """The TorchModule that stands for the torch module `name`, or MissingModule."""
    if name not in _STAND_INS:
        real = _minitensor_object(MODULES[name]) if name in MODULES else None
        if real is None:
            raise MissingModule(name)
        _STAND_INS[name] = TorchModule(name, real)
    return _STAND_INS[name]


class _TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The import hook: `torch` and `torch.*` come from `MODULES`, anything else is not ours."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        torch_module(fullname)  # MissingModule for a torch module minitensor has no part for
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        return torch_module(spec.name)

    def exec_module(self, module):
        pass  # nothing to run: the module is minitensor's, already imported


@contextlib.contextmanager
def torch_is_minitensor():
    """Inside, `import torch` (and its submodules in `MODULES`) gives minitensor, and reprs say torch.

    A real torch imported before is set aside and put back after, as are the repr name and
    `sys.meta_path` (inside, real torch's own lazy `import torch._xyz` would fail: don't call it there).
    """
    finder = _TorchFinder()
    aside = {n: sys.modules.pop(n) for n in list(sys.modules) if n == "torch" or n.startswith("torch.")}
    shown_as = Size.shown_as
    sys.meta_path.insert(0, finder)
    Size.shown_as = "torch"
    try:
        yield
    finally:
        Size.shown_as = shown_as
        sys.meta_path.remove(finder)
        for n in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
            del sys.modules[n]
        sys.modules.update(aside)


def run(path, args=()):
    """Run the script at `path` as `__main__` with `sys.argv = [path, *args]`, torch being minitensor.

    Returns the script's globals. `sys.argv` and `sys.path` are restored afterwards.
    """
    argv, search_path = sys.argv, list(sys.path)
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # as `python script.py`: its folder first
    try:
        with torch_is_minitensor():
            return runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = argv
        sys.path[:] = search_path


def _missing_in(exc):
    """The NotInMinitensor error behind `exc`, if any: `exc` itself, or one it was explicitly raised
    `from`. Not one it was raised while handling (`__context__`): a script that caught the missing name
    (`except ImportError:` with a fallback) dealt with it, and an error in its fallback is the script's own."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, NotInMinitensor):
            return exc
        last = NotInMinitensor.last
        if isinstance(exc, ImportError) and last is not None and exc.name and exc.name.startswith("torch"):
            module, _, attr = last.torch_name.rpartition(".")
            if module == exc.name and f"cannot import name '{attr}'" in str(exc):  # from torch import fft
                return last
        seen.add(id(exc))
        exc = exc.__cause__
    return None


def main(argv=None):
    """The command line; returns the exit status (0 ok, 2 a torch name minitensor lacks or bad usage)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    script, *script_args = args
    if not os.path.isfile(script):
        print(f"minitensor.run: can't open file {script!r}: no such file", file=sys.stderr)
        return 2
    try:
        run(script, script_args)
    except BaseException as e:
        missing = _missing_in(e)
        if missing is None:
            raise
        print(f"minitensor.run: {missing}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

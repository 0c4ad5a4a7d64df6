"""The public API carries its types: every public function and method is fully annotated, the
packages that a type checker reads as typed say so (`py.typed`), and each namespace's `__all__`
(what a strict checker takes as its exports) lists exactly its public names.

`Tensor`'s methods are declared in minitensor/tensor.pyi and checked against the runtime class by
tests/minitensor/test_tensor_stub.py; the forward/backward of the ops (`Function` subclasses) are
left unannotated on purpose, so they read as the formulas they are.
"""
import configparser
import importlib
import inspect
import os
import types

import pytest

import minitensor
from minitensor.autograd.function import Function

NAMESPACES = [
    "minitensor", "minitensor.nn", "minitensor.nn.functional", "minitensor.nn.init", "minitensor.nn.utils",
    "minitensor.optim", "minitensor.optim.lr_scheduler", "minitensor.utils", "minitensor.utils.data",
    "minitensor.autograd", "minitensor.testing", "minitensor.cuda", "minitensor.backends",
    "minitensor.backends.mps", "minitensor.backends.cudnn", "minitensor.types", "minitensor.viz",
    "attention", "attention.chars", "attention.lm", "attention.tasks", "attention.trainer", "attention.pictures",
]
WITH_ALL = ["minitensor", "minitensor.nn", "minitensor.nn.functional", "minitensor.optim", "minitensor.utils",
            "minitensor.autograd", "minitensor.testing", "minitensor.backends", "minitensor.types", "attention"]


def _module(name):
    return importlib.import_module(name)


def _ours(obj):
    return (getattr(obj, "__module__", None) or "").split(".")[0] in ("minitensor", "attention")


def _public(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [k for k, v in vars(module).items() if not k.startswith("_") and _ours(v)]
    return {k: getattr(module, k) for k in names}


def _unannotated(fn, skip_first):
    """The parameters of `fn` (and 'return') that have no annotation."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())[1 if skip_first else 0:]
    missing = [p.name for p in params if p.annotation is p.empty]
    if sig.return_annotation is sig.empty and fn.__name__ != "__init__":
        missing.append("return")
    return missing


def _methods(cls):
    """(name, function, skip_first) for what a class itself defines and a user calls."""
    for name, value in vars(cls).items():
        if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
            continue
        if issubclass(cls, Function) and name in ("forward", "backward"):
            continue  # an op's formulas, unannotated on purpose
        if isinstance(value, property):
            yield name, value.fget, True
        elif isinstance(value, staticmethod):
            yield name, value.__func__, name == "__new__"  # (__new__'s first parameter is cls)
        elif isinstance(value, classmethod):
            yield name, value.__func__, True
        elif isinstance(value, types.FunctionType) and not inspect.unwrap(value).__code__.co_filename.startswith("<"):
            yield name, value, True  # (not what dataclasses write, such as Config.__eq__)


def _problems():
    out = []
    seen = set()
    for ns in NAMESPACES:
        for name, obj in _public(_module(ns)).items():
            if id(obj) in seen or isinstance(obj, types.ModuleType) or not _ours(obj):
                continue
            seen.add(id(obj))
            if getattr(obj, "__module__", None) == "minitensor.tensor":
                continue  # Tensor, Size, device: declared in tensor.pyi (tests/minitensor/test_tensor_stub.py)
            if isinstance(obj, type):
                classes = [obj, type(obj)] if _ours(type(obj)) else [obj]  # LongTensor & co: their metaclass
                for cls in classes:
                    for mname, fn, skip_first in _methods(cls):
                        if cls.__name__ == "Module" and mname == "__call__":
                            continue  # checkers read the typed `__call__` declared under TYPE_CHECKING
                        missing = _unannotated(fn, skip_first)
                        if missing:
                            out.append(f"{ns}.{name}.{mname}: {missing}")
            elif callable(obj):
                missing = _unannotated(obj, False)
                if missing:
                    out.append(f"{ns}.{name}: {missing}")
    return out


def test_every_public_function_and_method_is_fully_annotated():
    assert _problems() == []


def test_the_check_finds_an_unannotated_function(monkeypatch):
    def shout(text, times=2):
        return text * times

    shout.__module__ = "minitensor.nn.functional"
    monkeypatch.setattr(minitensor.nn.functional, "__all__", minitensor.nn.functional.__all__ + ["shout"])
    monkeypatch.setattr(minitensor.nn.functional, "shout", shout, raising=False)
    assert "minitensor.nn.functional.shout: ['text', 'times', 'return']" in _problems()


@pytest.mark.parametrize("ns", WITH_ALL)
def test_all_lists_exactly_the_public_names(ns):
    module = _module(ns)
    listed = set(module.__all__)
    assert [n for n in listed if not hasattr(module, n)] == []
    # what the module or package defines (a package re-exports its submodules' names); an op's
    # Function class is an implementation detail of its function
    public = {k for k, v in vars(module).items()
              if not k.startswith("_") and not isinstance(v, types.ModuleType) and _ours(v)
              and (v.__module__ == ns or v.__module__.startswith(ns + "."))
              and not (isinstance(v, type) and issubclass(v, Function))}
    assert public - listed == set(), f"public in {ns} but not in its __all__"


@pytest.mark.parametrize("package", ["minitensor", "attention"])
def test_both_packages_are_marked_typed(package):
    folder = os.path.dirname(_module(package).__file__)
    assert os.path.isfile(os.path.join(folder, "py.typed"))


def test_the_distribution_ships_the_type_information():
    # (a wheel built from this setup.cfg holds minitensor/py.typed, minitensor/tensor.pyi, attention/py.typed)
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "setup.cfg"))
    data = {k: {p.strip() for p in v.split(",")} for k, v in cfg["options.package_data"].items()}
    assert {"py.typed", "*.pyi"} <= data["minitensor"] and "py.typed" in data["attention"]
    assert cfg["options.extras_require"]["typecheck"].split() == ["mypy==2.4.1"]

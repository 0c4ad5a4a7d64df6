"""The allocator tweak is opt-in: applied by tune_malloc() or the environment switch, never silently."""
import ctypes.util
import os
import subprocess
import sys

import pytest

import minitensor
from minitensor.fast import allocator as _allocator

glibc = pytest.mark.skipif(not sys.platform.startswith("linux") or not ctypes.util.find_library("c"),
                           reason="glibc only")


@glibc
def test_tune_malloc_applies_on_glibc():
    assert minitensor.tune_malloc() is True


def test_import_leaves_the_allocator_alone_without_the_switch(monkeypatch):
    monkeypatch.delenv(_allocator.ENV_SWITCH, raising=False)
    calls = []
    monkeypatch.setattr(_allocator, "tune_malloc", lambda *a, **k: calls.append(1) or True)
    assert not _allocator.tune_if_asked()
    assert calls == []


def test_the_switch_applies_it(monkeypatch):
    calls = []
    monkeypatch.setenv(_allocator.ENV_SWITCH, "1")
    monkeypatch.setattr(_allocator, "tune_malloc", lambda *a, **k: calls.append(1) or True)
    assert _allocator.tune_if_asked()
    assert calls == [1]


_SPY = (
    "import ctypes\n"
    "loaded = []\n"
    "real = ctypes.CDLL\n"
    "ctypes.CDLL = lambda name, *a, **k: loaded.append(str(name)) or real(name, *a, **k)\n"
    "import minitensor\n"
    "print(sum('libc' in n for n in loaded))\n"
)


@glibc
@pytest.mark.parametrize("switch, expected", [(None, "0"), ("1", "1")])
def test_a_fresh_import_touches_malloc_only_with_the_switch(switch, expected):
    env = {k: v for k, v in os.environ.items() if k != _allocator.ENV_SWITCH}
    if switch is not None:
        env[_allocator.ENV_SWITCH] = switch
    out = subprocess.run([sys.executable, "-c", _SPY], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == expected

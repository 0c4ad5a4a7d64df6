"""The allocator tweak applies on glibc Linux and can be switched off."""
import ctypes.util
import sys

import pytest

from minitensor import _allocator


@pytest.mark.skipif(not sys.platform.startswith("linux") or not ctypes.util.find_library("c"), reason="glibc only")
def test_tune_applies_on_glibc():
    assert _allocator.tune() is True


def test_tune_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("MINITENSOR_KEEP_MALLOC", "1")
    assert _allocator.tune() is False

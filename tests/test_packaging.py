"""What an installed copy tells about itself: versions, license, optional dependencies, tab completion."""
import importlib.metadata
import os
import subprocess
import sys

import pytest

import attention
import minitensor
import minitensor.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_both_packages_carry_the_distributions_version():
    assert attention.__version__ == minitensor.__version__
    try:
        installed = importlib.metadata.version("minitensor-attention")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("this checkout is not installed under its distribution name")
    assert installed == minitensor.__version__


def test_the_license_file_says_what_setup_cfg_says():
    with open(os.path.join(ROOT, "LICENSE"), encoding="utf-8") as f:
        assert f.readline().strip() == "MIT License"
    with open(os.path.join(ROOT, "setup.cfg"), encoding="utf-8") as f:
        cfg = f.read()
    assert "license = MIT" in cfg and "license_files = LICENSE" in cfg


def test_strategies_without_hypothesis_say_how_to_install_it():
    code = ("import sys; sys.modules['hypothesis'] = None\n"
            "try:\n    import minitensor.testing.strategies\n"
            "except ImportError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": ROOT}, check=True).stdout
    assert "needs the hypothesis package: pip install hypothesis" in out


def test_tab_completion_of_functional_shows_its_functions_only():
    names = dir(F)
    assert "linear" in names and "cross_entropy" in names
    assert not {"np", "math", "Tensor", "Linear"} & set(names)
    assert not [n for n in names if n.startswith("_")]

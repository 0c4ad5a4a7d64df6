"""The files scripts/gen_api.py writes from the op table are what it would write now: the type stub
minitensor/tensor.pyi and the op imports and __all__ of minitensor/__init__.py. A row added to
minitensor/ops/table.py without running the script fails here, naming the stale file."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow  # runs the generator in a subprocess (`make check-generated` runs it too)
def test_the_generated_stub_and_init_are_up_to_date():
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_api.py"), "--check"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.slow  # copies the package and runs the generator
def test_the_check_fails_on_a_stale_stub(tmp_path):
    # a copy of the package whose stub lost a method: --check must say so (the test above can fail)
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(os.path.join(ROOT, "minitensor"), copy / "minitensor")
    shutil.copytree(os.path.join(ROOT, "scripts"), copy / "scripts")
    stub = copy / "minitensor" / "tensor.pyi"
    stub.write_text(stub.read_text().replace("    def exp(self) -> Tensor: ...\n", "", 1))
    run = subprocess.run([sys.executable, str(copy / "scripts" / "gen_api.py"), "--check"],
                         capture_output=True, text=True, cwd=copy, env={**os.environ, "PYTHONPATH": str(copy)})
    assert run.returncode == 1 and "minitensor/tensor.pyi" in run.stdout, run.stdout + run.stderr

"""mypy over the packages and over code a user writes (setup.cfg's `typecheck` extra installs it;
without mypy these tests skip).

- the packages: `python -m mypy` at the top, with the settings in setup.cfg ([mypy]): zero errors;
- a user's script (sample_user_script.py) and the types an editor must infer (expected_types.py),
  checked with `--strict` against the packages as an installed copy is seen (their own errors
  silenced, their exports as declared): zero errors;
- mistakes (type_errors.py): each marked line gets its error, no other line gets one.
"""
import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # mypy over the whole tree, three times

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture(scope="module")
def mypy(tmp_path_factory):
    """Run mypy from the top of the checkout; returns (exit status, output)."""
    pytest.importorskip("mypy")
    cache = str(tmp_path_factory.mktemp("mypy_cache"))
    user_config = tmp_path_factory.mktemp("user") / "mypy.ini"
    user_config.write_text("[mypy]\n")  # a user's own settings, not this project's

    def run(*args, as_user=False):
        cmd = [sys.executable, "-m", "mypy", "--cache-dir", cache, "--no-color-output", "--no-error-summary"]
        if as_user:
            # what `mypy --strict my_script.py` sees with minitensor installed: the packages are
            # followed for their types, errors inside them are not the user's to see
            cmd += ["--config-file", str(user_config), "--strict", "--follow-imports=silent"]
        env = {**os.environ, "MYPYPATH": ROOT}  # this checkout, not an installed copy
        done = subprocess.run(cmd + list(args), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        return done.returncode, done.stdout + done.stderr

    return run


def test_the_packages_type_check_with_no_errors(mypy):
    status, out = mypy()
    assert status == 0, out


def test_a_strictly_typed_user_script_and_the_expected_types_check_with_no_errors(mypy):
    status, out = mypy(os.path.join(HERE, "sample_user_script.py"), os.path.join(HERE, "expected_types.py"),
                       as_user=True)
    assert status == 0, out


def test_each_deliberate_mistake_is_reported_and_nothing_else(mypy):
    path = os.path.join(HERE, "type_errors.py")
    with open(path, encoding="utf-8") as f:
        marks = {i: re.search(r"\S  # E: (.+)$", line) for i, line in enumerate(f, 1)}
    expected = {i: m.group(1).strip() for i, m in marks.items() if m}
    assert len(expected) >= 10
    status, out = mypy(path, as_user=True)
    assert status == 1, out
    reported = {}
    for line in out.splitlines():
        m = re.match(r".*type_errors\.py:(\d+): error: (.*)", line)
        if m:
            reported.setdefault(int(m.group(1)), []).append(m.group(2))
    assert sorted(reported) == sorted(expected), out
    for line, text in expected.items():
        assert any(text in message for message in reported[line]), (line, text, reported[line])


def test_the_sample_script_runs(tmp_path):
    checkpoint = tmp_path / "classifier.ckpt"
    env = {**os.environ, "PYTHONPATH": ROOT}
    done = subprocess.run([sys.executable, os.path.join(HERE, "sample_user_script.py"), str(checkpoint)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "restored after epoch 2: accuracy" in done.stdout
    assert checkpoint.is_file()

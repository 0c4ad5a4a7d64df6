"""examples/train_toy_model.py as a user runs it: a malformed checkpoint given to --resume is one
`error: ...` line on stderr and exit status 2, never a traceback."""
import os
import subprocess
import sys

import pytest

import minitensor as mt

pytestmark = pytest.mark.slow  # each test trains in a subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "train_toy_model.py")
TINY = ["--layers", "1", "--heads", "2", "--d-model", "16", "--batch", "8", "--eval-n", "20", "--no-pictures"]


def _run(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    done = _run("--out", str(out), "--steps", "2", "--eval-every", "2", *TINY)
    assert done.returncode == 0, done.stderr
    return (out / "checkpoint.npz").read_bytes()


def _bare_state_dict(path):
    mt.save(mt.load(str(path))["model"], str(path))


def _missing_optimizer(path):
    ck = mt.load(str(path))
    del ck["optimizer"]
    mt.save(ck, str(path))


def _flipped_version_bit(path):
    data = bytearray(path.read_bytes())
    data[data.rindex(b"PK\x01\x02") + 6] ^= 1 << 6  # 'version needed to extract' of a central header
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("spoil", [_bare_state_dict, _missing_optimizer, _flipped_version_bit],
                         ids=["bare_state_dict", "missing_optimizer", "flipped_bit"])
def test_resume_from_a_malformed_checkpoint_is_one_error_line_and_exit_2(tmp_path, checkpoint, spoil):
    path = tmp_path / "checkpoint.npz"
    path.write_bytes(checkpoint)
    spoil(path)
    done = _run("--out", str(tmp_path), "--resume", "--steps", "4", *TINY)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and str(path) in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_the_thread_count_asked_for_is_the_one_the_run_uses(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = ROOT
    for asked, want in (([], "1"), (["--threads", "2"], "2")):
        done = subprocess.run([sys.executable, "-m", "attention", "--steps", "1", "--eval-every", "1", "--out",
                               str(tmp_path / want), *asked, *TINY], capture_output=True, text=True, env=env,
                              timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert f"BLAS threads: {want}\n" in done.stdout, done.stdout


def test_python_m_attention_help_shows_defaults():
    done = subprocess.run([sys.executable, "-m", "attention", "--help"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m attention")
    text = " ".join(done.stdout.split())
    assert "(default: 2000; chars: " in text and "--threads" in text


def test_a_chars_run_from_the_command_line_samples_text_and_refuses_a_missing_file(tmp_path):
    """python -m attention --task chars as a user types it: a missing --data file is one error line
    and exit 2; a short run on a file prints its samples, and --generate-only prints text again."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    tiny = ["--task", "chars", "--block-size", "16", "--layers", "1", "--heads", "2", "--d-model", "16",
            "--batch", "8", "--no-pictures", "--sample", "30"]
    done = subprocess.run([sys.executable, "-m", "attention", *tiny, "--data", str(tmp_path / "missing.txt")],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].endswith(
        f"error: argument --data: cannot read {tmp_path / 'missing.txt'}: No such file or directory")
    text = tmp_path / "t.txt"
    text.write_text("the cat sat on the mat.\n" * 40, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "attention", *tiny, "--data", str(text), "--steps", "4",
                           "--eval-every", "2", "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "--- sample at step 2 (30 characters) ---" in done.stdout and "bits per character" in done.stdout
    final = done.stdout.split("--- sample after training (30 characters) ---\n", 1)[1].split("\n---", 1)[0]
    again = subprocess.run([sys.executable, "-m", "attention", "--generate-only", "--out", str(tmp_path / "run"),
                            "--sample", "30"], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == "\n" + final + "\n"

"""README's promises: its Quickstart has exactly two commands, CI runs the test one, and every
Python snippet in it runs."""
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()


def test_quickstart_has_two_commands_and_ci_runs_the_test_one():
    quick = README.split("## Quickstart", 1)[1].split("##", 1)[0]
    block = re.search(r"```bash\n(.*?)```", quick, re.S).group(1)
    commands = [line for line in block.splitlines() if line.strip()]
    assert len(commands) == 2
    assert "examples/train_toy_model.py" in commands[0]
    ci = open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read()
    assert commands[1] in ci


SNIPPETS = re.findall(r"```python\n(.*?)```", README, re.S)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_python_snippets_run(snippet):
    if "import torch\n" in snippet:
        pytest.importorskip("torch")  # the PyTorch round trip runs only where PyTorch is installed
    exec(compile(snippet, "README.md", "exec"), {})

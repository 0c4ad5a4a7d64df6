"""README's promises: its Quickstart has exactly two commands, CI runs the test one, and the facts it
states (test count, model size) are what scripts/readme_facts.py measures. Its Python snippets run in
tests/docs/test_code_blocks.py, with those of docs/."""
import importlib.util
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


def _facts():
    """scripts/readme_facts.py, the script that measures what README states."""
    spec = importlib.util.spec_from_file_location("readme_facts", os.path.join(ROOT, "scripts", "readme_facts.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _numbers_before(word):
    """Every number README writes right before `word` ("about 2,650 tests" gives 2650)."""
    return [int(n.replace(",", "")) for n in re.findall(rf"(\d[\d,]*) {word}\b", README)]


@pytest.mark.slow  # collects the whole suite in a subprocess, unless this session is the whole suite
def test_readme_test_count_is_roughly_true(whole_suite_test_count):
    """README's "about N tests" stays within 15 % of what pytest collects. The count is of the
    whole suite, PyTorch's comparison modules included, so it is checked only where they load."""
    pytest.importorskip("torch")
    claims = _numbers_before("tests")
    if not claims:
        pytest.skip("README states no test count")
    collected = whole_suite_test_count or _facts().count_tests()
    for claim in claims:
        assert abs(claim - collected) <= 0.15 * collected, (
            f"README says about {claim:,} tests, pytest collects {collected:,}: "
            "update README with `python scripts/readme_facts.py`")


def test_readme_parameter_count_is_the_default_models():
    claims = _numbers_before("parameters")
    assert claims, "README no longer states the default model's size; drop this test if that is meant"
    counts = {_facts().default_parameters(), _facts().default_parameters("chars")}
    assert all(claim in counts for claim in claims), (claims, counts)

"""examples/exercises: what is left there points at the course kit, and its old command still grades."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLDER = os.path.join(ROOT, "examples", "exercises")


def test_the_pointer_links_resolve():
    text = open(os.path.join(FOLDER, "README.md"), encoding="utf-8").read()
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert links and all(os.path.exists(os.path.join(FOLDER, link)) for link in links)


def test_the_old_command_runs_the_packages_grader():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "examples.exercises.grade", "--list"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "topo_sort: the engine's topological sort" in done.stdout, done.stderr

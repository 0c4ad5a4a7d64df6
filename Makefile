# Everyday commands. Each runs in the current Python environment (the one you installed the
# checkout into with `pip install -e '.[test]'`; .ci/run makes a fresh one with every extra, runs the
# whole suite once (typecheck, docs and notebooks included) and calls lint, check-generated and wheel).
#
#   make lint            ruff: lint and import order (settings in ruff.toml)
#   make test-fast       the suite without the tests marked slow and without PyTorch, 3 examples per property
#   make test            the whole suite
#   make typecheck       mypy over both packages and a strict user script (needs '.[typecheck]')
#   make docs            the documentation site, built with mkdocs --strict (needs '.[docs]')
#   make notebooks       every notebook run top to bottom in a fresh kernel (needs '.[notebooks]')
#   make wheel           the built wheel installed in a fresh venv and used from another folder
#   make check-generated files written by a script are up to date with their sources
#   make coverage        how much of PyTorch's API minitensor has, per namespace (needs PyTorch)
#
# PYTHON=... picks another interpreter; JOBS=1 runs the suite in one process (JOBS=2 is the
# default: pytest-xdist, which the test extra installs, pays on this project's 2-core machines).
PYTHON ?= python
JOBS ?= 2
# compiled bytecode cached, as Python does by default (an environment with PYTHONDONTWRITEBYTECODE set
# makes each xdist worker and each of the suite's subprocesses compile the sources again)
export PYTHONDONTWRITEBYTECODE :=
PYTEST = $(PYTHON) -m pytest $(if $(filter 1,$(JOBS)),,-n $(JOBS))

.PHONY: help lint test-fast test typecheck docs notebooks wheel check-generated coverage

help:
	@sed -n 's/^#   make /make /p' $(firstword $(MAKEFILE_LIST))

lint:
	$(PYTHON) -m ruff check .

# the fast profile (tests/conftest.py): each property test on fewer examples
test-fast:
	HYPOTHESIS_PROFILE=fast $(PYTEST) -m "not slow"

test:
	$(PYTEST)

# these run mypy in subprocesses over the whole tree: one process is enough
typecheck:
	$(PYTHON) -m pytest tests/typing tests/minitensor/test_tensor_stub.py

docs:
	$(PYTHON) -m pytest tests/docs/test_docsite.py

notebooks:
	$(PYTHON) -m pytest tests/notebooks

wheel:
	bash .ci/check_wheel

# files a script writes from other sources: the exercise notebooks (from attention/course), and
# the type stub and minitensor's op imports and __all__ (from the op table, minitensor/ops/table.py)
check-generated:
	$(PYTHON) notebooks/make_exercise_notebooks.py --check
	$(PYTHON) scripts/gen_api.py --check

# PyTorch's public names per namespace, and how many of them minitensor has (scripts/api_coverage.py;
# the out-of-scope names are the table in docs/pytorch_compatibility.md); fails below 90 % in any namespace
coverage:
	$(PYTHON) scripts/api_coverage.py --min 90

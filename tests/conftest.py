"""Hypothesis profiles: 'ci' (derandomized, the default), 'fast' (ci with fewer examples, for
`make test-fast`) and 'dev' (more examples, random).

Choose with HYPOTHESIS_PROFILE=dev pytest.
"""
import os
import sys

# The test tensors are tiny: one BLAS thread is fastest, and CI has only 2 cores (set before numpy loads).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

import minitensor as mt  # noqa: E402

settings.register_profile(
    "ci", derandomize=True, max_examples=25, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# `make test-fast`: every property test still runs, each on 3 examples (the op table's forward,
# gradient, float32 and double-backward checks of every op stay in the fast suite)
settings.register_profile("fast", parent=settings.get_profile("ci"), max_examples=3)
settings.register_profile(
    "dev", max_examples=200, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# Words of how an op is computed, not of its math. The first line's were in what `explain()`
# printed as the formulas of the fused ops (Linear, LayerNorm, CrossEntropy, Gelu, the two
# attention nodes) before their docstrings were cut down to the math; the rest are their kin.
# tests/minitensor/test_explain.py and tests/attention/test_fused.py check that none comes back.
IMPLEMENTATION_WORDS = (
    "argument", "tensors", "dtype", "constant", "preparedmask", "sharedweights", "graph input",
    "node", "reuse", "compute p here", "computed", "flattened", "in place", "two-pass", "in one op",
    "overflow", "row max", "instead of",
    "numpy", "array", "einsum", "gemm", "blas", "memory", "copy", "faster",
)


@pytest.fixture
def implementation_words_in():
    """A function: the words of IMPLEMENTATION_WORDS in a text (case-insensitive)."""
    def find(text):
        low = text.lower()
        return [w for w in IMPLEMENTATION_WORDS if w in low]
    return find


def _graph_node_names(t):
    """The name of every node of the graph that made `t`, walking the nodes' edges."""
    names, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name())
        stack.extend(child for _, child, _, _ in node.edges if not isinstance(child, mt.Tensor))
    return names


@pytest.fixture
def node_names():
    """A function: the names of the nodes of the graph that made a tensor."""
    return _graph_node_names


def pytest_configure(config):
    """`make test-fast` leaves PyTorch out: its comparisons skip as on a machine without it (the
    whole suite and CI run them). Importing it alone costs each xdist worker about 4 s of CPU, a
    tenth of the fast suite. MINITENSOR_FAST_WITH_TORCH=1 keeps it."""
    if config.getoption("markexpr") == "not slow" and os.environ.get("MINITENSOR_FAST_WITH_TORCH") != "1":
        sys.modules.setdefault("torch", None)  # `import torch` raises ImportError; importorskip skips


def pytest_ignore_collect(collection_path, config):
    """With `-m "not slow"` (`make test-fast`), a test file marked slow as a whole is not even
    imported: its collection (PyTorch, long parametrized sweeps) would cost more than the rest."""
    if config.getoption("markexpr") != "not slow" or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    return "\npytestmark = pytest.mark.slow" in collection_path.read_text() or None


_COLLECTED = pytest.StashKey[int]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Remember how many tests this session collected, before `-m`/`-k` deselect any."""
    config.stash[_COLLECTED] = len(items)


@pytest.fixture
def whole_suite_test_count(request):
    """The number of tests this session collected when it collected the whole suite (`pytest`
    with no paths, `-k` or `-m`), else None: README's test count is checked against it without
    collecting the suite a second time."""
    config = request.config
    whole = not config.args or [os.path.abspath(a) for a in config.args] == [str(config.rootpath / "tests")]
    if whole and not config.getoption("keyword") and not config.getoption("markexpr"):
        return config.stash.get(_COLLECTED, None)
    return None

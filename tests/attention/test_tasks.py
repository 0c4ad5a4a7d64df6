import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from attention.tasks import (
    IGNORE_INDEX,
    TASKS,
    AddTask,
    CopyTask,
    ReverseTask,
    SortTask,
    get_task,
    stable_hash,
)

# Every registered task plus non-default sizes.
TASK_FACTORIES = {
    "sort": SortTask,
    "reverse": ReverseTask,
    "copy": CopyTask,
    "add": AddTask,
    "add3": lambda: AddTask(num_digits=3),
    "sort4x5": lambda: SortTask(length=4, num_digits=5),
}


@pytest.fixture(params=sorted(TASK_FACTORIES))
def task(request):
    return TASK_FACTORIES[request.param]()


def decode_number(digits):
    # Most-significant-first digit rows -> integers.
    return digits @ (10 ** np.arange(digits.shape[1] - 1, -1, -1, dtype=np.int64))


# -- sizes, shapes, targets -----------------------------------------------


def test_sizes():
    s, a = SortTask(), AddTask()
    assert (s.vocab_size, s.prompt_len, s.answer_len, s.block_size) == (3, 6, 6, 11)
    assert (a.vocab_size, a.prompt_len, a.answer_len, a.block_size) == (10, 4, 3, 6)
    r = ReverseTask()
    assert (r.vocab_size, r.prompt_len, r.answer_len, r.block_size) == (10, 6, 6, 11)


@pytest.mark.parametrize("split", ["train", "heldout"])
def test_batch_shapes_and_targets(task, split):
    x, y = task.batch(64, np.random.default_rng(1), split)
    assert x.shape == y.shape == (64, task.block_size)
    assert x.dtype == y.dtype == np.int64
    assert x.min() >= 0 and x.max() < task.vocab_size

    n_ignored = task.prompt_len - 1
    assert np.all(y[:, :n_ignored] == IGNORE_INDEX)
    assert np.all(y[:, n_ignored:] != IGNORE_INDEX)
    # Unmasked targets are the next input token, and the final one is the last answer token.
    assert np.array_equal(y[:, n_ignored:-1], x[:, n_ignored + 1 :])

    prompts = x[:, : task.prompt_len]
    assert np.array_equal(y[:, n_ignored:], task.answer(prompts))
    assert np.all(task.split_of(prompts) == (split == "heldout"))


def test_sample_prompts_shape_dtype(task):
    p = task.sample_prompts(10, np.random.default_rng(0))
    assert p.shape == (10, task.prompt_len) and p.dtype == np.int64
    assert task.answer(p).shape == (10, task.answer_len)


# -- answers ----------------------------------------------------------------


def test_answers_match_reference():
    rng = np.random.default_rng(2)
    s = SortTask()
    p = s.sample_prompts(500, rng)
    assert np.array_equal(s.answer(p), np.sort(p, axis=1))

    r, c = ReverseTask(), CopyTask()
    p = r.sample_prompts(500, rng)
    assert np.array_equal(r.answer(p), p[:, ::-1])
    assert np.array_equal(c.answer(p), p)


def test_add_known_example():
    # 47 + 85 = 132, emitted least significant digit first.
    assert AddTask().answer([[4, 7, 8, 5]]).tolist() == [[2, 3, 1]]
    assert AddTask().answer([[0, 0, 0, 0]]).tolist() == [[0, 0, 0]]
    assert AddTask().answer([[9, 9, 9, 9]]).tolist() == [[8, 9, 1]]


@pytest.mark.parametrize("d", [1, 2, 3])
def test_add_matches_integer_arithmetic(d):
    t = AddTask(num_digits=d)
    p = t.sample_prompts(2000, np.random.default_rng(d))
    a, b = decode_number(p[:, :d]), decode_number(p[:, d:])
    got = decode_number(t.answer(p)[:, ::-1])
    assert np.array_equal(got, a + b)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 99), st.integers(0, 99))
def test_add_property(a, b):
    prompt = [[a // 10, a % 10, b // 10, b % 10]]
    ans = AddTask().answer(prompt)[0]
    assert int(ans[0] + 10 * ans[1] + 100 * ans[2]) == a + b


def test_exact_match():
    t = ReverseTask()
    p = t.sample_prompts(10, np.random.default_rng(0))
    pred = t.answer(p)
    assert t.exact_match(p, pred) == 1.0
    pred[3, -1] = (pred[3, -1] + 1) % 10
    assert t.exact_match(p, pred) == pytest.approx(0.9)
    with pytest.raises(ValueError):
        t.exact_match(p, pred[:, :-1])


# -- splits ------------------------------------------------------------------


def sort_space():
    t = SortTask()
    grids = np.meshgrid(*[np.arange(3)] * 6, indexing="ij")
    return t, np.stack([g.ravel() for g in grids], axis=1)


def test_sort_full_space_split():
    t, everything = sort_space()
    assert len(everything) == 729
    held = t.split_of(everything)
    assert held.sum() == t.num_heldout()
    assert 0.12 * 729 < held.sum() < 0.28 * 729

    hp = t.heldout_prompts()
    assert len(hp) == t.num_heldout()
    assert {tuple(r) for r in hp} == {tuple(r) for r in everything[held]}
    assert np.array_equal(t.heldout_prompts(5), hp[:5])


def test_sort_samples_stay_in_split_and_cover_it():
    t, everything = sort_space()
    held = t.split_of(everything)
    rng = np.random.default_rng(3)
    for split, mask in [("train", ~held), ("heldout", held)]:
        seen = {tuple(r) for r in t.sample_prompts(20_000, rng, split)}
        # Exactly the split: nothing from the other side, and (with ~30+ draws
        # per prompt) every prompt of this side shows up.
        assert seen == {tuple(r) for r in everything[mask]}


@pytest.mark.parametrize("name", ["reverse", "add"])
def test_samples_never_cross_split(name):
    t = get_task(name)
    rng = np.random.default_rng(4)
    for _ in range(5):
        assert not t.split_of(t.sample_prompts(5000, rng, "train")).any()
        assert t.split_of(t.sample_prompts(5000, rng, "heldout")).all()


def test_split_independent_of_seed_and_row_context():
    t = ReverseTask()
    prompts = np.random.default_rng(5).integers(0, 10, size=(2000, 6))
    held = t.split_of(prompts)
    perm = np.random.default_rng(6).permutation(len(prompts))
    assert np.array_equal(t.split_of(prompts[perm]), held[perm])
    assert np.array_equal(ReverseTask().split_of(prompts), held)
    for seed in range(5):
        p = t.sample_prompts(300, np.random.default_rng(seed), "heldout")
        assert t.split_of(p).all()


def test_split_is_pinned():
    # The split must never change between runs, platforms or releases,
    # otherwise old checkpoints may have trained on today's held-out set.
    assert stable_hash(np.array([[0, 1, 2], [0, 0, 0]])).tolist() == [7153102061725206237, 3746585686858627171]
    assert SortTask().num_heldout() == 137
    assert AddTask().num_heldout() == 1981
    assert SortTask().heldout_prompts(3).tolist() == [[0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 2, 1], [0, 0, 0, 1, 0, 0]]
    assert ReverseTask().heldout_prompts(2).tolist() == [[0, 1, 0, 6, 5, 6], [5, 3, 6, 5, 2, 3]]


@pytest.mark.parametrize("name", ["reverse", "copy", "add"])
def test_heldout_fraction_band(name):
    t = get_task(name)
    p = np.random.default_rng(7).integers(0, t.vocab_size, size=(20_000, t.prompt_len))
    assert 0.18 < t.split_of(p).mean() < 0.22


def test_heldout_fraction_is_configurable():
    t = ReverseTask(heldout_fraction=0.5)
    p = np.random.default_rng(8).integers(0, 10, size=(20_000, 6))
    assert 0.47 < t.split_of(p).mean() < 0.53
    # A larger fraction only adds prompts to the held-out set.
    assert np.all(t.split_of(p) >= ReverseTask().split_of(p))
    for bad in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError):
            ReverseTask(heldout_fraction=bad)


def test_heldout_prompts_sampled_for_large_space():
    t = ReverseTask()
    hp = t.heldout_prompts()
    assert hp.shape == (1000, 6) and hp.dtype == np.int64
    assert t.split_of(hp).all()
    assert len(np.unique(hp, axis=0)) == 1000
    assert np.array_equal(ReverseTask().heldout_prompts(), hp)
    assert np.array_equal(t.heldout_prompts(10), hp[:10])


# -- determinism and registry -------------------------------------------------


def test_same_seed_same_batches(task):
    a = task.batch(32, np.random.default_rng(9))
    b = task.batch(32, np.random.default_rng(9))
    c = task.batch(32, np.random.default_rng(10))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


def test_get_task():
    assert set(TASKS) == {"sort", "reverse", "copy", "add", "chars"}
    t = get_task("sort", length=4)
    assert isinstance(t, SortTask) and t.prompt_len == 4
    assert all(isinstance(get_task(n).describe(), str) for n in TASKS)
    with pytest.raises(ValueError) as err:
        get_task("multiply")
    msg = str(err.value)
    assert "multiply" in msg and all(n in msg for n in TASKS)


def test_rejects_bad_prompts_and_split():
    t = SortTask()
    with pytest.raises(ValueError):
        t.answer(np.zeros((2, 5), dtype=np.int64))
    with pytest.raises(ValueError):
        t.sample_prompts(2, np.random.default_rng(0), "test")


def test_empty_split_raises_instead_of_hanging(monkeypatch):
    t = ReverseTask()
    monkeypatch.setattr(t, "split_of", lambda p: np.zeros(len(p), dtype=bool))
    with pytest.raises(RuntimeError):
        t.sample_prompts(10, np.random.default_rng(0), "heldout")

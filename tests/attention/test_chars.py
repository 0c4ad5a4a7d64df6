"""attention.chars: the character task's vocabulary, splits, windows and file checks, and the shipped text."""
import configparser
import os

import numpy as np
import pytest

from attention.chars import CharsTask, default_text_path, read_text
from attention.tasks import get_task

TEXT = "the cat sat on the mat.\nthe dog sat on the log.\n" * 3  # 144 characters


def test_vocabulary_is_the_sorted_distinct_characters_and_decode_inverts_encode():
    task = CharsTask(TEXT, block_size=8)
    assert task.chars == sorted(set(TEXT)) and task.vocab_size == len(set(TEXT))
    assert task.decode(task.encode(TEXT)) == TEXT
    assert task.encode("cat").tolist() == [task.chars.index(c) for c in "cat"]
    assert task.data.dtype == np.int64 and len(task.data) == len(TEXT)
    with pytest.raises(ValueError, match=r"characters not in the vocabulary of text: 'XZ'"):
        task.encode("a ZX")


def test_the_last_tenth_is_held_out_and_the_splits_cover_the_text():
    text = "".join(chr(97 + i % 26) for i in range(1000))
    task = CharsTask(text, block_size=16)
    assert len(task.heldout_ids) == 100 and len(task.train_ids) == 900
    assert np.array_equal(np.concatenate([task.train_ids, task.heldout_ids]), task.data)
    assert task.decode(task.heldout_ids) == text[900:]


def test_a_short_text_still_keeps_one_whole_window_on_each_side():
    task = CharsTask(TEXT, block_size=30)  # 10 % of 144 is 14, less than a window of 31
    assert len(task.heldout_ids) == 31 and len(task.train_ids) == 113
    task = CharsTask("ab" * 9, block_size=8)  # exactly two windows of 9
    assert len(task.heldout_ids) == len(task.train_ids) == 9


def test_batches_are_windows_of_their_split_with_targets_one_character_on():
    task = CharsTask(TEXT * 10, block_size=12)
    rng = np.random.default_rng(0)
    for split, ids in (("train", task.train_ids), ("heldout", task.heldout_ids)):
        x, y = task.batch(200, rng, split)
        assert x.shape == y.shape == (200, 12) and x.dtype == y.dtype == np.int64
        np.testing.assert_array_equal(x[:, 1:], y[:, :-1])  # y is x one character on
        text = task.decode(ids)
        for row_x, row_y in zip(x, y):
            window = task.decode(row_x) + task.decode(row_y[-1:])
            assert window in text  # every window lies inside its own split
    with pytest.raises(ValueError, match="split must be 'train' or 'heldout'"):
        task.batch(2, rng, "test")


def test_every_training_window_can_be_drawn_from_the_first_to_the_last():
    text = "".join(np.random.default_rng(5).choice(list("abcdefgh"), size=400))  # windows of 6 are all distinct
    task = CharsTask(text, block_size=6)
    x, y = task.batch(20000, np.random.default_rng(2))
    starts = {text.index(task.decode(r) + task.decode(t[-1:])) for r, t in zip(x, y)}
    assert starts == set(range(len(task.train_ids) - 6))  # the last window ends on the last training character


def test_same_seed_same_batches():
    task = CharsTask(TEXT * 5, block_size=8)
    a, b = task.batch(16, np.random.default_rng(3)), task.batch(16, np.random.default_rng(3))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], task.batch(16, np.random.default_rng(4))[0])


def test_heldout_windows_score_every_heldout_character_once_and_sampling_them_is_fixed():
    text = "".join(chr(97 + (i * 7) % 26) for i in range(2000))
    task = CharsTask(text, block_size=16)  # 200 held out: 12 windows of 16 predict characters 1..192
    x, y = task.heldout_windows()
    assert x.shape == y.shape == (12, 16)
    assert task.decode(y.reshape(-1)) == task.decode(task.heldout_ids[1:193])
    assert task.decode(x.reshape(-1)) == task.decode(task.heldout_ids[:192])
    xs, ys = task.heldout_windows(5)
    assert xs.shape == (5, 16)
    rows = [next(i for i in range(12) if np.array_equal(x[i], r)) for r in xs]
    assert rows == sorted(set(rows)) and rows[0] == 0 and rows[-1] == 11  # evenly spaced, both ends
    np.testing.assert_array_equal(task.heldout_windows(5)[0], xs)


@pytest.mark.parametrize("text, block, message", [
    ("abc", 1, r"text has 3 characters; block_size 1 needs at least 4: 2 to train on and 2 held out"),
    (TEXT, 100, r"text has 144 characters; block_size 100 needs at least 202"),
])
def test_too_short_a_text_is_refused(text, block, message):
    with pytest.raises(ValueError, match=message):
        CharsTask(text, block_size=block)


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="heldout_fraction must be in"):
        CharsTask(TEXT, heldout_fraction=1.0)
    with pytest.raises(ValueError, match="block_size must be at least 1"):
        CharsTask(TEXT, block_size=0)


# ---- files --------------------------------------------------------------------------------------

def test_read_text_decodes_utf8_and_reads_windows_line_ends_as_newlines(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes("\ufeffcafé\r\nnaïve\rend\n".encode("utf-8"))
    assert read_text(path) == "café\nnaïve\nend\n"


def test_read_text_refuses_an_empty_file_and_one_that_is_not_utf8(tmp_path):
    empty, latin = tmp_path / "empty.txt", tmp_path / "latin.txt"
    empty.write_bytes(b"")
    latin.write_bytes("naïve".encode("latin-1"))
    with pytest.raises(ValueError, match=r"empty.txt is empty"):
        read_text(empty)
    with pytest.raises(ValueError, match=r"latin.txt is not UTF-8 text \(byte 2: invalid"):
        read_text(latin)
    with pytest.raises(FileNotFoundError):
        read_text(tmp_path / "missing.txt")


def test_from_file_names_the_file_it_read(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text(TEXT, encoding="utf-8")
    task = CharsTask.from_file(path, block_size=8)
    assert task.source == str(path) and task.decode(task.data) == TEXT
    assert "mine.txt" in task.describe() and "144 characters" in task.describe()
    path.write_text("short", encoding="utf-8")
    with pytest.raises(ValueError, match=r"mine.txt has 5 characters; block_size 8 needs at least 18"):
        CharsTask.from_file(path, block_size=8)


# ---- the shipped text ---------------------------------------------------------------------------

def test_the_shipped_text_is_the_default_and_is_pride_and_prejudice():
    path = default_text_path()
    assert os.path.basename(path) == "pride_and_prejudice.txt" and os.path.exists(path)
    task = get_task("chars")
    assert task.source == path and task.block_size == 64
    text = task.decode(task.data)
    assert text.startswith("PRIDE AND PREJUDICE\n\nBy Jane Austen\n")
    assert "It is a truth universally acknowledged" in text
    assert "gutenberg" not in text.lower()  # no licence header or footer
    assert 50_000 <= len(text) <= 200_000 and task.vocab_size == 74


def test_the_shipped_text_is_declared_package_data_with_its_readme():
    """setup.cfg must carry attention/data into the wheel; its README says where the text is from."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(root, "setup.cfg"))
    patterns = cfg["options.package_data"]["attention"].replace(",", " ").split()  # (a list of either form)
    assert "data/*.txt" in patterns and "data/README.md" in patterns
    with open(os.path.join(os.path.dirname(default_text_path()), "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert "pride_and_prejudice.txt" in readme and "public domain" in readme.lower()

"""show_heatmaps: any (T, S), (H, T, S) or (L, H, T, S) weights or gradients as a matplotlib Figure.

The drawing tests need matplotlib and skip without it; the checks of the input, and the message
that says what to install, run everywhere.
"""
import subprocess
import sys

import numpy as np
import pytest

import attention
import minitensor as mt
from attention.heatmaps import show_heatmaps, unicode_heatmap


def weights(shape, seed=0):
    w = np.random.default_rng(seed).random(shape)
    return w / w.sum(axis=-1, keepdims=True)


def images(fig):
    """The heatmap panels of the figure (not its colorbar), in drawing order."""
    return [ax.images[0] for ax in fig.axes if ax.images]


@pytest.fixture
def mpl():
    return pytest.importorskip("matplotlib")


@pytest.mark.parametrize("shape, panels", [((4, 5), 1), ((3, 4, 5), 3), ((2, 3, 4, 5), 6)])
def test_one_panel_per_head_of_each_layer_holding_its_weights(mpl, shape, panels):
    w = weights(shape)
    fig = show_heatmaps(w)
    shown = images(fig)
    assert len(shown) == panels
    np.testing.assert_array_equal(np.stack([im.get_array() for im in shown]), w.reshape(-1, 4, 5))


def test_weights_get_a_sequential_colormap_from_0_to_1(mpl):
    fig = show_heatmaps(weights((2, 3, 3)))
    for im in images(fig):
        assert im.get_cmap().name == "viridis" and im.get_clim() == (0.0, 1.0)


def test_signed_data_gets_a_diverging_colormap_centred_at_zero(mpl):
    g = np.array([[0.5, -2.0], [1.0, 0.0]])
    (im,) = images(show_heatmaps(g))
    assert im.get_cmap().name == "RdBu_r" and im.get_clim() == (-2.0, 2.0)


def test_the_gradient_of_the_scores_of_real_attention_is_drawn_signed(mpl):
    mt.manual_seed(0)
    q = mt.randn(1, 2, 4, 8, dtype=mt.float64, requires_grad=True)
    k = mt.randn(1, 2, 4, 8, dtype=mt.float64)
    scores = q @ k.mT / 8 ** 0.5
    scores.retain_grad()
    weights_ = scores.softmax(dim=-1)
    (weights_ * mt.randn(1, 2, 4, 4, dtype=mt.float64)).sum().backward()
    d_s = scores.grad[0]  # dS: each row sums to 0, so it has both signs
    (im0, im1) = images(show_heatmaps(d_s, title="dS"))
    m = float(d_s.abs().max())
    assert im0.get_cmap().name == "RdBu_r" and im0.get_clim() == pytest.approx((-m, m))
    np.testing.assert_array_equal(im1.get_array(), d_s.numpy()[1])


def test_a_colormap_may_be_chosen(mpl):
    (im,) = images(show_heatmaps(weights((3, 3)), cmap="magma"))
    assert im.get_cmap().name == "magma"


def test_labels_title_and_axes(mpl):
    fig = show_heatmaps(weights((2, 3, 4)), ["a", "b", "c"], ["w", "x", "y", "z"], title="my title")
    ax = [a for a in fig.axes if a.images][0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["w", "x", "y", "z"]
    assert fig.get_suptitle() == "my title" and ax.get_title() == "head 0"


def test_a_tensor_that_requires_grad_is_accepted(mpl):
    w = mt.tensor(weights((2, 3, 3)), requires_grad=True)
    shown = images(show_heatmaps(w))
    np.testing.assert_array_equal(shown[1].get_array(), w.detach().numpy()[1])


def test_path_saves_a_png_and_the_figure_shows_itself_in_jupyter_as_one(mpl, tmp_path):
    path = tmp_path / "maps.png"
    fig = show_heatmaps(weights((2, 2, 3, 3)), path=str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert fig._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"  # what IPython shows for the cell's value


def test_the_figure_is_not_left_open_in_pyplot(mpl):
    plt = pytest.importorskip("matplotlib.pyplot")
    before = plt.get_fignums()
    show_heatmaps(weights((3, 3)))
    assert plt.get_fignums() == before  # so Jupyter shows it once, and a loop of them leaks nothing


@pytest.mark.parametrize("bad, match", [
    (np.zeros(5),
     r"show_heatmaps: expected numbers of shape \(T, S\), \(H, T, S\) or \(L, H, T, S\), got shape \(5,\)"),
    (np.zeros((1, 1, 1, 2, 2)), r"got shape \(1, 1, 1, 2, 2\)"),
    (np.array([["a", "b"]]), "dtype <U1"),
    ([np.zeros((2, 3, 3)), np.zeros((2, 4, 4))], r"the layers must have one shape \(H, T, S\), got shapes "
                                                 r"\[\(2, 3, 3\), \(2, 4, 4\)\]"),
])
def test_bad_shapes_are_refused_naming_the_function_and_the_shape(bad, match):
    with pytest.raises(ValueError, match=match):
        show_heatmaps(bad)


def test_labels_of_the_wrong_length_are_refused():
    with pytest.raises(ValueError, match=r"show_heatmaps: 3 queries but 2 labels: \['a', 'b'\]"):
        show_heatmaps(weights((3, 3)), ["a", "b"])
    with pytest.raises(ValueError, match="show_heatmaps: 3 keys but 4 labels"):
        show_heatmaps(weights((3, 3)), None, list("abcd"))


def test_without_matplotlib_the_error_says_what_to_install_and_what_works_without_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if matplotlib were not installed
    with pytest.raises(ImportError) as info:
        show_heatmaps(weights((3, 3)))
    text = str(info.value)
    assert "pip install matplotlib" in text and "attention.unicode_heatmap" in text
    assert "attention.attention_viewer_html" in text


def test_the_unicode_heatmap_is_the_one_attention_exports():
    assert attention.unicode_heatmap is unicode_heatmap and attention.show_heatmaps is show_heatmaps
    text = unicode_heatmap(np.array([[1.0, 0.0], [0.5, 0.5]]), ["a", "b"])
    assert text.splitlines()[1] == "  a ██  "


def test_importing_attention_does_not_import_matplotlib():
    # matplotlib takes seconds to import: only drawing may pay for it
    code = "import sys, attention, minitensor.viz; print('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "False", done.stderr

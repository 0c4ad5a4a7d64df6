"""`fast.add_rows` (an embedding's backward as a one-hot matrix product) equals `np.add.at`."""
import numpy as np
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from minitensor import fast


@given(rows=st.integers(1, 6), width=st.sampled_from([(), (3,), (2, 2)]), data=st.data())
def test_equals_np_add_at_with_repeated_and_negative_indices(rows, width, data):
    idx = data.draw(hnp.arrays(np.int64, data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=5)),
                               elements=st.integers(-rows, rows - 1)))
    src = data.draw(hnp.arrays(np.float64, idx.shape + width, elements=st.floats(-3, 3)))
    got, want = np.zeros((rows,) + width), np.zeros((rows,) + width)
    fast.add_rows(got, idx, src)
    np.add.at(want, idx.reshape(-1), src.reshape((idx.size,) + width))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_large_table_takes_np_add_at_itself_for_a_batch_of_sequences():
    out = np.zeros((1 << 16, 4))
    fast.add_rows(out, np.array([[3, 3], [5, 3]]), np.ones((2, 2, 4)))  # (B, T) indices, as an embedding
    assert out[3].tolist() == [3.0] * 4 and out[5].tolist() == [1.0] * 4 and out.sum() == 16

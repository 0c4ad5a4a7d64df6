r"""minitensor against PyTorch for the shape, joining, indexing and counting ops of issue 29.

One table of cases: each runs the same call `fn(lib, *inputs)` with lib = torch and lib = minitensor
on the same small inputs, and compares every output's values and dtype, then (where an output can
carry a gradient) each float input's gradient under one random upstream weight per output. A table
of bad calls checks that both raise, with the same exception type. Skipped without PyTorch.
"""
import math
import warnings

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

RNG = np.random.default_rng(29)


def R(*shape, dtype="float64"):
    """Random values of `shape` (distinct, so max/min and sorting have no ties)."""
    n = math.prod(shape)
    return (RNG.permutation(n) + RNG.uniform(0.1, 0.9, n)).reshape(shape).astype(dtype) - n / 2


def I(values, dtype="int64"):  # noqa: E743  (an integer array, as the tests' constant indices)
    return np.asarray(values, dtype=dtype)


def T(lib, values, dtype="int64"):
    """A constant tensor of `values` in lib."""
    return lib.tensor(np.asarray(values).tolist(), dtype=getattr(lib, dtype))


# (id, fn(lib, *tensors), inputs): float inputs require grad; integer and bool inputs don't
CASES = [
    # -- shape --
    ("roll_dims", lambda L, x: L.roll(x, (1, -2), (0, 1)), [R(3, 4)]),
    ("roll_flat", lambda L, x: x.roll(2), [R(2, 3)]),
    ("roll_empty", lambda L, x: L.roll(x, 1, 0), [R(0, 2)]),
    ("roll_int", lambda L, x: L.roll(x, -1, -1), [I([[1, 2, 3], [4, 5, 6]])]),
    ("rot90_k1", lambda L, x: L.rot90(x), [R(2, 3)]),
    ("rot90_k3_dims", lambda L, x: L.rot90(x, 3, (2, 0)), [R(2, 3, 4)]),
    ("rot90_k2_neg", lambda L, x: x.rot90(-2, [0, 1]), [R(2, 3)]),
    ("fliplr", lambda L, x: L.fliplr(x), [R(2, 3, 2)]),
    ("flipud", lambda L, x: x.flipud(), [R(3)]),
    ("tile_fewer", lambda L, x: L.tile(x, (2,)), [R(2, 3)]),
    ("tile_more", lambda L, x: x.tile((2, 1, 2)), [R(2, 3)]),
    ("tile_0d", lambda L, x: L.tile(x, (3,)), [R()]),
    ("repeat_interleave_int", lambda L, x: L.repeat_interleave(x, 2), [R(2, 3)]),
    ("repeat_interleave_dim", lambda L, x: x.repeat_interleave(T(L, [1, 0, 3]), dim=1), [R(2, 3)]),
    ("repeat_interleave_0d_tensor", lambda L, x: L.repeat_interleave(x, T(L, 2), dim=0, output_size=4), [R(2, 3)]),
    ("repeat_interleave_counts", lambda L: L.repeat_interleave(T(L, [2, 0, 1])), []),
    ("repeat_interleave_counts_int32", lambda L: L.repeat_interleave(T(L, [1, 3], "int32")), []),
    ("ravel", lambda L, x: x.t().ravel(), [R(2, 3)]),
    ("ravel_0d", lambda L, x: L.ravel(x), [R()]),
    ("narrow_copy", lambda L, x: L.narrow_copy(x, 1, 1, 2), [R(2, 4)]),
    ("select", lambda L, x: L.select(x, 1, -1), [R(2, 3, 2)]),
    ("select_method", lambda L, x: x.select(0, 1), [R(2, 3)]),
    ("diagonal", lambda L, x: L.diagonal(x), [R(3, 4)]),
    ("diagonal_offset_dims", lambda L, x: x.diagonal(-1, 2, 0), [R(3, 2, 4)]),
    ("diagonal_offset_past", lambda L, x: L.diagonal(x, 5), [R(3, 4)]),
    ("diag_vector", lambda L, x: L.diag(x), [R(3)]),
    ("diag_vector_offset", lambda L, x: L.diag(x, -2), [R(3)]),
    ("diag_matrix", lambda L, x: x.diag(1), [R(3, 4)]),
    ("diag_embed", lambda L, x: L.diag_embed(x), [R(2, 3)]),
    ("diag_embed_dims", lambda L, x: L.diag_embed(x, 1, 0, 2), [R(2, 3)]),
    ("diagflat", lambda L, x: L.diagflat(x, -1), [R(2, 2)]),
    ("diagflat_int", lambda L, x: x.diagflat(), [I([1, 2])]),
    ("unfold", lambda L, x: x.unfold(1, 2, 1), [R(2, 4)]),
    ("unfold_step", lambda L, x: x.unfold(0, 2, 3), [R(7, 2)]),
    ("unfold_0d", lambda L, x: x.unfold(0, 1, 1), [R()]),
    ("as_strided", lambda L, x: L.as_strided(x, (3, 2), (1, 2)), [R(6)]),
    ("as_strided_offset", lambda L, x: x.as_strided((2, 2), (3, 1), 1), [R(2, 3)]),
    ("moveaxis", lambda L, x: L.moveaxis(x, 0, -1), [R(2, 3, 4)]),
    ("swapdims", lambda L, x: x.swapdims(0, 2), [R(2, 3, 4)]),
    ("broadcast_to_method", lambda L, x: x.broadcast_to((2, 3, 2)), [R(3, 1)]),
    ("broadcast_tensors", lambda L, x, y: L.broadcast_tensors(x, y), [R(3, 1), R(2, 1, 4)]),
    # -- joining and splitting --
    ("atleast_1d", lambda L, x: L.atleast_1d(x), [R()]),
    ("atleast_2d_many", lambda L, x, y: L.atleast_2d(x, y), [R(), R(3)]),
    ("atleast_3d_list", lambda L, x, y, z: L.atleast_3d([x, y, z]), [R(3), R(2, 3), R(1, 2, 3, 1)]),
    ("hstack_1d", lambda L, x, y: L.hstack([x, y]), [R(2), R(3)]),
    ("hstack_2d", lambda L, x, y: L.hstack((x, y)), [R(2, 1), R(2, 3)]),
    ("vstack", lambda L, x, y: L.vstack([x, y]), [R(3), R(2, 3)]),
    ("row_stack", lambda L, x, y: L.row_stack([x, y]), [R(3), R(3)]),
    ("dstack", lambda L, x, y: L.dstack([x, y]), [R(2, 3), R(2, 3, 2)]),
    ("column_stack", lambda L, x, y, z: L.column_stack([x, y, z]), [R(2), R(2, 2), R(2)]),
    ("hstack_promotes", lambda L, x, y: L.hstack([x, y]), [R(2, dtype="float32"), I([1, 2])]),
    ("tensor_split_sections", lambda L, x: L.tensor_split(x, 3, 1), [R(2, 7)]),
    ("tensor_split_indices", lambda L, x: x.tensor_split([1, 5, -1, 2], dim=0), [R(6, 2)]),
    ("tensor_split_tensor", lambda L, x: L.tensor_split(x, T(L, [1, 2])), [R(4)]),
    ("tensor_split_0d_tensor", lambda L, x: L.tensor_split(x, T(L, 2)), [R(5)]),
    ("hsplit", lambda L, x: L.hsplit(x, 2), [R(3, 4)]),
    ("hsplit_1d_list", lambda L, x: x.hsplit([1, 3]), [R(5)]),
    ("vsplit", lambda L, x: L.vsplit(x, [1]), [R(3, 2)]),
    ("dsplit", lambda L, x: x.dsplit(2), [R(1, 2, 4)]),
    ("split_with_sizes", lambda L, x: x.split_with_sizes([1, 0, 3], dim=1), [R(2, 4)]),
    ("meshgrid_ij", lambda L, x, y, z: L.meshgrid(x, y, z, indexing="ij"), [R(2), R(3), R()]),
    ("meshgrid_xy", lambda L, x, y, z: L.meshgrid([x, y, z], indexing="xy"), [R(2), R(3), R(4)]),
    ("cartesian_prod", lambda L, x, y: L.cartesian_prod(x, y), [R(2), R(3)]),
    ("cartesian_prod_one", lambda L, x: L.cartesian_prod(x), [R(3)]),
    ("combinations", lambda L, x: L.combinations(x), [R(4)]),
    ("combinations_r3_repl", lambda L, x: L.combinations(x, 3, with_replacement=True), [R(3)]),
    ("combinations_r_too_big", lambda L, x: L.combinations(x, 4), [R(3)]),
    ("block_diag", lambda L, x, y, z: L.block_diag(x, y, z), [R(2, 3), R(), R(2)]),
    ("block_diag_promotes", lambda L, x, y: L.block_diag(x, y), [I([[1, 2]]), R(1, 1, dtype="float32")]),
    ("kron", lambda L, x, y: L.kron(x, y), [R(2, 3), R(2, 2)]),
    ("kron_ranks", lambda L, x, y: x.kron(y), [R(3), R(2, 2, 1)]),
    ("kron_int", lambda L, x, y: L.kron(x, y), [I([1, 2]), I([[3], [4]])]),
    # -- gathering and scattering --
    ("take", lambda L, x: L.take(x, T(L, [[0, -1], [5, 2]])), [R(2, 3)]),
    ("take_along_dim", lambda L, x: L.take_along_dim(x, T(L, [[0, 2], [1, 1]]), 1), [R(2, 3)]),
    ("take_along_dim_broadcast", lambda L, x: x.take_along_dim(T(L, [[2], [0]]), dim=1), [R(2, 3)]),
    ("take_along_dim_flat", lambda L, x: L.take_along_dim(x, T(L, [5, 0, 0])), [R(2, 3)]),
    ("put", lambda L, x, s: L.put(x, T(L, [0, -1]), s), [R(2, 3), R(2)]),
    ("put_accumulate", lambda L, x, s: x.put(T(L, [[1, 1]]), s, accumulate=True), [R(2, 3), R(1, 2)]),
    ("index_add", lambda L, x, s: L.index_add(x, 0, T(L, [1, 1, 0]), s), [R(2, 3), R(3, 3)]),
    ("index_add_alpha", lambda L, x, s: x.index_add(1, T(L, [2, 0], "int32"), s, alpha=-1.5), [R(2, 3), R(2, 2)]),
    ("index_add_int", lambda L, x, s: x.index_add(0, T(L, [0, 0]), s, alpha=2), [I([1, 2, 3]), I([5, 7])]),
    ("index_copy", lambda L, x, s: L.index_copy(x, 1, T(L, [2, 0]), s), [R(2, 3), R(2, 2)]),
    ("index_put", lambda L, x, v: L.index_put(x, (T(L, [0, 1]), T(L, [2, 0])), v), [R(2, 3), R(2)]),
    ("index_put_broadcast", lambda L, x, v: x.index_put((T(L, [1]),), v), [R(2, 3), R()]),
    ("index_put_accumulate", lambda L, x, v: x.index_put((T(L, [0, 0]), T(L, [1, 1])), v, accumulate=True),
     [R(2, 3), R(2)]),
    ("index_put_mask", lambda L, x, v: L.index_put(x, (T(L, [True, False], "bool"),), v), [R(2, 3), R(3)]),
    ("index_reduce_amax", lambda L, x, s: L.index_reduce(x, 0, T(L, [0, 0, 2]), s, "amax"), [R(3, 2), R(3, 2)]),
    ("index_reduce_mean_noself", lambda L, x, s: x.index_reduce(1, T(L, [1, 1]), s, "mean", include_self=False),
     [R(2, 3), R(2, 2)]),
    ("index_reduce_amin", lambda L, x, s: x.index_reduce(0, T(L, [1, 1]), s, "amin"), [R(2, 2), R(2, 2)]),
    ("masked_scatter", lambda L, x, s: L.masked_scatter(x, T(L, [[True, False, True], [False, True, True]], "bool"),
                                                         s), [R(2, 3), R(5)]),
    ("masked_scatter_broadcast", lambda L, x, s: x.masked_scatter(T(L, [True, False, True], "bool"), s),
     [R(2, 3), R(2, 3)]),
    ("scatter_reduce_sum", lambda L, x, s: L.scatter_reduce(x, 0, T(L, [[0, 1], [0, 0]]), s, "sum"),
     [R(2, 2), R(2, 2)]),
    ("scatter_reduce_sum_noself", lambda L, x, s: x.scatter_reduce(1, T(L, [[0, 0]]), s, "sum", include_self=False),
     [R(2, 3), R(1, 2)]),
    ("scatter_reduce_mean", lambda L, x, s: L.scatter_reduce(x, 0, T(L, [0, 0, 2]), s, "mean"), [R(3), R(3)]),
    ("scatter_reduce_mean_noself", lambda L, x, s: L.scatter_reduce(x, 0, T(L, [0, 0, 2]), s, "mean",
                                                                    include_self=False), [R(3), R(3)]),
    ("scatter_reduce_amax", lambda L, x, s: L.scatter_reduce(x, 0, T(L, [0, 0, 2, 2]), s, "amax"), [R(3), R(4)]),
    ("scatter_reduce_amin_noself", lambda L, x, s: x.scatter_reduce(0, T(L, [1, 1]), s, "amin", include_self=False),
     [R(3), R(2)]),
    ("scatter_reduce_max_alias", lambda L, x, s: L.scatter_reduce(x, 0, T(L, [1]), s, "max"), [R(2), R(1)]),
    ("scatter_reduce_amax_ties", lambda L, x, s: L.scatter_reduce(x, 0, T(L, [0, 0, 1]), s, "amax"),
     [np.array([2.0, 1.0]), np.array([2.0, 2.0, 0.5])]),
    ("scatter_reduce_mean_int", lambda L, x, s: L.scatter_reduce(x, 0, T(L, [0, 0, 1]), s, "mean"),
     [I([-1, 2, 3]), I([-5, 4, 6])]),
    ("scatter_reduce_prod_int", lambda L, x, s: L.scatter_reduce(x, 0, T(L, [0, 0, 1]), s, "prod",
                                                                 include_self=False), [I([1, 2, 3]), I([2, 4, 6])]),
    ("scatter_reduce_amax_int", lambda L, x, s: L.scatter_reduce(x, 0, T(L, [0, 1]), s, "amax", include_self=False),
     [I([1, 2, 3]), I([-2, 4])]),
    ("select_scatter", lambda L, x, s: L.select_scatter(x, s, 1, -1), [R(2, 3), R(2)]),
    ("slice_scatter", lambda L, x, s: L.slice_scatter(x, s, 1, 1, None, 2), [R(2, 4), R(2, 2)]),
    ("slice_scatter_default", lambda L, x, s: x.slice_scatter(s), [R(2, 2), R(2, 2)]),
    ("diagonal_scatter", lambda L, x, s: L.diagonal_scatter(x, s, 1), [R(2, 3), R(2)]),
    ("diagonal_scatter_dims", lambda L, x, s: x.diagonal_scatter(s, 0, 2, 0), [R(2, 3, 2), R(3, 2)]),
    ("tensor_where", lambda L, x, y: x.where(x > 0, y), [R(2, 3), R(3)]),
    ("tensor_where_scalar", lambda L, x: x.where(x < 0, 2.0), [R(2, 3)]),
    # -- in place (on a non-leaf, so the gradient flows through the change) --
    ("index_add_", lambda L, x, s: (x * 1).index_add_(0, T(L, [1, 1]), s, alpha=2), [R(2, 3), R(2, 3)]),
    ("index_copy_", lambda L, x, s: (x * 1).index_copy_(1, T(L, [0]), s), [R(2, 3), R(2, 1)]),
    ("index_put_", lambda L, x, v: (x * 1).index_put_((T(L, [0, 0]),), v, accumulate=True), [R(2, 3), R(3)]),
    ("index_reduce_", lambda L, x, s: (x * 1).index_reduce_(0, T(L, [1, 0]), s, "amin"), [R(2, 2), R(2, 2)]),
    ("put_", lambda L, x, s: (x * 1).put_(T(L, [3, 0]), s), [R(2, 3), R(2)]),
    ("masked_scatter_", lambda L, x, s: (x * 1).masked_scatter_(T(L, [[True], [False]], "bool"), s),
     [R(2, 3), R(4)]),
    ("scatter_reduce_", lambda L, x, s: (x * 1).scatter_reduce_(0, T(L, [[1, 0, 1]]), s, "mean"),
     [R(2, 3), R(1, 3)]),
    ("tril_", lambda L, x: (x * 1).tril_(-1), [R(3, 4)]),
    ("triu_", lambda L, x: (x * 1).triu_(1), [R(2, 3, 3)]),
    ("transpose_", lambda L, x: (x * 1).transpose_(0, 2), [R(2, 3, 4)]),
    ("swapaxes_", lambda L, x: (x * 1).swapaxes_(1, 0), [R(2, 3)]),
    ("swapdims_", lambda L, x: (x * 1).swapdims_(-1, 0), [R(2, 3)]),
    ("t_", lambda L, x: (x * 1).t_(), [R(2, 3)]),
    ("t_1d", lambda L, x: (x * 1).t_(), [R(3)]),
    ("squeeze_", lambda L, x: (x * 1).squeeze_(), [R(1, 3, 1)]),
    ("squeeze_dim", lambda L, x: (x * 1).squeeze_(2), [R(1, 3, 1)]),
    ("unsqueeze_", lambda L, x: (x * 1).unsqueeze_(-1), [R(2, 3)]),
    ("unsqueeze_then_exp", lambda L, x: (x * 1).unsqueeze_(0).exp(), [R(3)]),
    ("fill_diagonal_", lambda L, x: (x * 1).fill_diagonal_(-1.0), [R(3, 4)]),
    ("fill_diagonal_wrap", lambda L, x: (x * 1).fill_diagonal_(2.0, wrap=True), [R(7, 3)]),
    ("fill_diagonal_cube", lambda L, x: (x * 1).fill_diagonal_(0.5), [R(2, 2, 2)]),
    ("fill_diagonal_int", lambda L, x: x.clone().fill_diagonal_(1.5), [I([[0, 0], [0, 0]])]),
    # -- counting, binning and searching --
    ("argwhere", lambda L, x: L.argwhere(x), [I([[0, 1], [2, 0]])]),
    ("argwhere_0d", lambda L, x: x.argwhere(), [I(3)]),
    ("unique", lambda L, x: L.unique(x), [I([3, 1, 3, 2, 1])]),
    ("unique_all", lambda L, x: x.unique(return_inverse=True, return_counts=True), [I([[3, 1], [3, 2]])]),
    ("unique_float", lambda L, x: L.unique(x, sorted=True, return_counts=True), [np.array([0.5, -1.0, 0.5])]),
    ("unique_dim", lambda L, x: L.unique(x, dim=0, return_inverse=True, return_counts=True),
     [I([[1, 2], [1, 2], [0, 5]])]),
    ("unique_0d", lambda L, x: L.unique(x, return_inverse=True), [I(4)]),
    ("unique_consecutive", lambda L, x: L.unique_consecutive(x, return_inverse=True, return_counts=True),
     [I([1, 1, 2, 2, 1])]),
    ("unique_consecutive_dim", lambda L, x: x.unique_consecutive(dim=1, return_counts=True),
     [I([[1, 1, 2], [3, 3, 4]])]),
    ("bincount", lambda L, x: L.bincount(x), [I([1, 1, 3])]),
    ("bincount_minlength", lambda L, x: x.bincount(minlength=6), [I([1, 1, 3], "int32")]),
    ("bincount_empty", lambda L, x: L.bincount(x, minlength=2), [I([])]),
    ("bincount_weights_f32", lambda L, x, w: L.bincount(x, w), [I([0, 2, 2]), R(3, dtype="float32")]),
    ("bincount_weights_int", lambda L, x, w: L.bincount(x, weights=w), [I([0, 2, 2]), I([1, 2, 3])]),
    ("histc", lambda L, x: L.histc(x, bins=4, min=-2, max=2), [R(10)]),
    ("histc_data_range", lambda L, x: x.histc(5), [R(3, 3, dtype="float32")]),
    ("histc_one_value", lambda L, x: L.histc(x, 4), [np.array([1.0, 1.0])]),
    ("histogram_bins", lambda L, x: L.histogram(x, 4), [R(10)]),
    ("histogram_range_weight", lambda L, x, w: L.histogram(x, 3, range=(-4.0, 4.0), weight=w), [R(6), R(6)]),
    ("histogram_edges_density", lambda L, x: x.histogram(T(L, [-3.0, 0.0, 1.0, 5.0], "float64"), density=True),
     [R(8)]),
    ("histogram_f32", lambda L, x: L.histogram(x, bins=3), [R(5, dtype="float32")]),
    ("bucketize", lambda L, x: L.bucketize(x, T(L, [1, 3, 5])), [I([[0, 1], [3, 6]])]),
    ("bucketize_right_int32", lambda L, x: L.bucketize(x, T(L, [1.0, 3.0], "float64"), right=True, out_int32=True),
     [np.array([1.0, 2.0, 3.0])]),
    ("bucketize_scalar", lambda L: L.bucketize(3, T(L, [1, 3, 5])), []),
    ("searchsorted", lambda L: L.searchsorted(T(L, [1, 3, 5]), T(L, [[3, 6], [0, 1]])), []),
    ("searchsorted_right", lambda L: L.searchsorted(T(L, [1, 3, 5]), T(L, [3, 1]), right=True), []),
    ("searchsorted_side_rows", lambda L: L.searchsorted(T(L, [[1, 3], [2, 4]]), T(L, [[2], [4]]), side="right"), []),
    ("searchsorted_sorter", lambda L: L.searchsorted(T(L, [3, 1, 2]), T(L, [2]), sorter=T(L, [1, 2, 0])), []),
    ("searchsorted_scalar_int32", lambda L: L.searchsorted(T(L, [1.0, 2.0], "float32"), 1.5, out_int32=True), []),
    ("tril_indices", lambda L: L.tril_indices(3, 4), []),
    ("tril_indices_offset", lambda L: L.tril_indices(4, 3, -1, dtype=L.int32), []),
    ("triu_indices", lambda L: L.triu_indices(3, 3), []),
    ("triu_indices_offset", lambda L: L.triu_indices(3, 2, 1), []),
    ("triu_indices_empty", lambda L: L.triu_indices(0, 2), []),
    ("unravel_index", lambda L, x: L.unravel_index(x, (2, 3)), [I([5, 0, 4])]),
    ("unravel_index_wraps", lambda L, x: L.unravel_index(x, (2, 3)), [I([[-1, 7]])]),
    ("unravel_index_int", lambda L, x: L.unravel_index(x, 4), [I(3, "int32")]),
]

# (id, fn(lib, *tensors), inputs): calls both libraries refuse, with the same exception type
ERRORS = [
    ("roll_mismatch", lambda L, x: L.roll(x, (1, 2), 0), [R(2, 3)]),
    ("roll_bad_dim", lambda L, x: L.roll(x, 1, 2), [R(2, 3)]),
    ("rot90_one_dim", lambda L, x: L.rot90(x, 1, [0]), [R(2, 3)]),
    ("rot90_same_dims", lambda L, x: L.rot90(x, 1, [1, 1]), [R(2, 3)]),
    ("rot90_1d", lambda L, x: L.rot90(x), [R(3)]),
    ("fliplr_1d", lambda L, x: L.fliplr(x), [R(3)]),
    ("flipud_0d", lambda L, x: L.flipud(x), [R()]),
    ("repeat_interleave_negative", lambda L, x: L.repeat_interleave(x, T(L, [1, -1])), [R(2)]),
    ("repeat_interleave_size", lambda L, x: L.repeat_interleave(x, T(L, [1, 2, 3]), dim=0), [R(2)]),
    ("repeat_interleave_output_size", lambda L, x: L.repeat_interleave(x, 2, dim=0, output_size=3), [R(2)]),
    ("select_range", lambda L, x: L.select(x, 0, 2), [R(2, 3)]),
    ("select_0d", lambda L, x: L.select(x, 0, 0), [R()]),
    ("diagonal_same_dims", lambda L, x: L.diagonal(x, 0, 1, 1), [R(2, 3)]),
    ("diag_3d", lambda L, x: L.diag(x), [R(2, 2, 2)]),
    ("diag_embed_same_dims", lambda L, x: L.diag_embed(x, 0, 0, 0), [R(2)]),
    ("unfold_too_big", lambda L, x: x.unfold(0, 4, 1), [R(3)]),
    ("unfold_step_0", lambda L, x: x.unfold(0, 2, 0), [R(3)]),
    ("as_strided_out_of_bounds", lambda L, x: L.as_strided(x, (2, 2), (2, 2)), [R(4)]),
    ("tensor_split_0d", lambda L, x: L.tensor_split(x, 2), [R()]),
    ("tensor_split_0_sections", lambda L, x: L.tensor_split(x, 0), [R(3)]),
    ("hsplit_uneven", lambda L, x: L.hsplit(x, 2), [R(2, 3)]),
    ("vsplit_1d", lambda L, x: L.vsplit(x, 1), [R(3)]),
    ("dsplit_2d", lambda L, x: L.dsplit(x, 1), [R(3, 2)]),
    ("split_with_sizes_sum", lambda L, x: L.split_with_sizes(x, [1, 1]), [R(3)]),
    ("hstack_empty", lambda L: L.hstack([]), []),
    ("vstack_mismatch", lambda L, x, y: L.vstack([x, y]), [R(2), R(3)]),
    ("meshgrid_2d", lambda L, x: L.meshgrid(x, indexing="ij"), [R(2, 2)]),
    ("meshgrid_bad_indexing", lambda L, x: L.meshgrid(x, indexing="ji"), [R(2)]),
    ("cartesian_prod_2d", lambda L, x: L.cartesian_prod(x), [R(2, 2)]),
    ("combinations_2d", lambda L, x: L.combinations(x), [R(2, 2)]),
    ("combinations_negative", lambda L, x: L.combinations(x, -1), [R(3)]),
    ("block_diag_3d", lambda L, x: L.block_diag(x), [R(1, 1, 1)]),
    ("take_range", lambda L, x: L.take(x, T(L, [6])), [R(2, 3)]),
    ("take_float_index", lambda L, x: L.take(x, T(L, [0.0], "float32")), [R(2, 3)]),
    ("take_along_dim_ndim", lambda L, x: L.take_along_dim(x, T(L, [0]), 1), [R(2, 3)]),
    ("take_along_dim_broadcast", lambda L, x: L.take_along_dim(x, T(L, [[0, 1]]), 0), [R(2, 3)]),
    ("put_range", lambda L, x, s: L.put(x, T(L, [7]), s), [R(2, 3), R(1)]),
    ("put_count", lambda L, x, s: L.put(x, T(L, [0, 1]), s), [R(2, 3), R(3)]),
    ("index_add_dtype", lambda L, x, s: L.index_add(x, 0, T(L, [0]), s), [R(2, 3), R(1, 3, dtype="float32")]),
    ("index_add_range", lambda L, x, s: L.index_add(x, 0, T(L, [2]), s), [R(2, 3), R(1, 3)]),
    ("index_add_negative", lambda L, x, s: L.index_add(x, 0, T(L, [-1]), s), [R(2, 3), R(1, 3)]),
    ("index_copy_shape", lambda L, x, s: L.index_copy(x, 0, T(L, [0]), s), [R(2, 3), R(1, 2)]),
    ("index_reduce_sum", lambda L, x, s: L.index_reduce(x, 0, T(L, [0]), s, "sum"), [R(2), R(1)]),
    ("index_put_shape", lambda L, x, v: L.index_put(x, (T(L, [0, 1]),), v), [R(2, 3), R(2)]),
    ("masked_scatter_short", lambda L, x, s: L.masked_scatter(x, T(L, [True, True], "bool"), s), [R(2), R(1)]),
    ("masked_scatter_not_bool", lambda L, x, s: L.masked_scatter(x, T(L, [1, 1]), s), [R(2), R(2)]),
    ("scatter_reduce_bad", lambda L, x, s: L.scatter_reduce(x, 0, T(L, [0]), s, "foo"), [R(2), R(1)]),
    ("scatter_reduce_range", lambda L, x, s: L.scatter_reduce(x, 0, T(L, [5]), s, "sum"), [R(2), R(1)]),
    ("select_scatter_shape", lambda L, x, s: L.select_scatter(x, s, 0, 0), [R(2, 3), R(2)]),
    ("slice_scatter_shape", lambda L, x, s: L.slice_scatter(x, s, 0, 0, 1), [R(2, 3), R(2, 3)]),
    ("diagonal_scatter_shape", lambda L, x, s: L.diagonal_scatter(x, s, 1), [R(2, 3), R(3)]),
    ("tensor_where_not_bool", lambda L, x: x.where(x, 1.0), [R(2)]),
    ("bincount_negative", lambda L, x: L.bincount(x), [I([0, -1])]),
    ("bincount_2d", lambda L, x: L.bincount(x), [I([[0, 1]])]),
    ("bincount_float", lambda L, x: L.bincount(x), [R(2)]),
    ("bincount_minlength", lambda L, x: L.bincount(x, minlength=-1), [I([1])]),
    ("histc_int", lambda L, x: L.histc(x), [I([1, 2])]),
    ("histc_bins_0", lambda L, x: L.histc(x, bins=0), [R(3)]),
    ("histc_min_max", lambda L, x: L.histc(x, 4, min=3, max=0), [R(3)]),
    ("histogram_int", lambda L, x: L.histogram(x, 2), [I([1, 2])]),
    ("histogram_bins_0", lambda L, x: L.histogram(x, 0), [R(3)]),
    ("searchsorted_side", lambda L: L.searchsorted(T(L, [1, 3]), T(L, [2]), side="left", right=True), []),
    ("searchsorted_bad_side", lambda L: L.searchsorted(T(L, [1, 3]), T(L, [2]), side="middle"), []),
    ("searchsorted_rows", lambda L: L.searchsorted(T(L, [[1, 3], [2, 4]]), T(L, [2])), []),
    ("bucketize_2d", lambda L: L.bucketize(T(L, [1]), T(L, [[1, 3]])), []),
    ("tril_indices_negative", lambda L: L.tril_indices(-1, 2), []),
    ("unravel_index_float", lambda L, x: L.unravel_index(x, (2, 3)), [R(2)]),
    ("unravel_index_negative_shape", lambda L, x: L.unravel_index(x, (2, -3)), [I([1])]),
    ("t_3d", lambda L, x: (x * 1).t_(), [R(2, 2, 2)]),
    ("squeeze_leaf", lambda L, x: x.squeeze_(), [R(1, 2)]),
    ("fill_diagonal_1d", lambda L, x: x.detach().fill_diagonal_(1.0), [R(3)]),
    ("fill_diagonal_uneven", lambda L, x: x.detach().fill_diagonal_(1.0), [R(2, 3, 2)]),
    ("index_add__shape", lambda L, x, s: x.detach().index_add_(0, T(L, [0]), s), [R(2, 3), R(2, 3)]),
    ("unique_dim_range", lambda L, x: L.unique(x, dim=2), [I([[1, 2]])]),
]


# counts, bins and indices carry no gradient (PyTorch marks some as requiring one, with no formula)
NO_GRAD = {"scatter_reduce_max_alias", "unique_float", "histc", "histc_data_range", "histc_one_value",
           "histogram_bins", "histogram_range_weight", "histogram_edges_density",
           "histogram_f32", "bucketize_right_int32", "bincount_weights_f32"}


def _tensors(lib, arrays, grad=True):
    out = []
    for a in arrays:
        t = lib.tensor(a.tolist() if a.ndim else a.item(), dtype=getattr(lib, str(a.dtype)))
        if a.dtype.kind == "f" and grad:
            t.requires_grad_(True)
        out.append(t)
    return out


def _outputs(out):
    if isinstance(out, (tuple, list)):
        return [o for item in out for o in _outputs(item)]
    return [out]


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy(force=True)


def _run(lib, fn, arrays, grad=True):
    xs = _tensors(lib, arrays, grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (index_reduce is "beta" in PyTorch, meshgrid without indexing=)
        return xs, _outputs(fn(lib, *xs))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_dtypes_and_gradients_match_torch(case):
    name, fn, arrays = case
    xt, outs_t = _run(torch, fn, arrays, name not in NO_GRAD)
    xm, outs_m = _run(mt, fn, arrays, name not in NO_GRAD)
    assert len(outs_t) == len(outs_m), f"{name}: {len(outs_m)} outputs, PyTorch gives {len(outs_t)}"
    for i, (a, b) in enumerate(zip(outs_t, outs_m)):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], f"{name}: output {i} {b.dtype} vs {a.dtype}"
        assert tuple(a.shape) == tuple(b.shape), f"{name}: output {i} shape {tuple(b.shape)} vs {tuple(a.shape)}"
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-6, atol=1e-6, err_msg=f"{name}: output {i}")
    graded = [i for i, o in enumerate(outs_t) if o.requires_grad]
    assert graded == [i for i, o in enumerate(outs_m) if o.requires_grad], f"{name}: which outputs carry a gradient"
    if not graded:
        return
    weights = [RNG.standard_normal(tuple(outs_t[i].shape)) for i in graded]
    torch.autograd.backward([outs_t[i] for i in graded], [torch.tensor(w, dtype=outs_t[i].dtype)
                                                         for i, w in zip(graded, weights)])
    mt.autograd.backward([outs_m[i] for i in graded], [mt.tensor(w, dtype=outs_m[i].dtype)
                                                      for i, w in zip(graded, weights)])
    for k, (a, b) in enumerate(zip(xt, xm)):
        if not a.requires_grad:
            continue
        if a.grad is None:
            assert b.grad is None or not np.any(_np(b.grad)), f"{name}: input {k} has a gradient, PyTorch's has none"
            continue
        assert b.grad is not None, f"{name}: input {k} has no gradient"
        np.testing.assert_allclose(_np(b.grad), _np(a.grad), rtol=1e-6, atol=1e-6, err_msg=f"{name}: grad of {k}")


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_bad_calls_raise_what_torch_raises(case):
    name, fn, arrays = case
    with pytest.raises(Exception) as expected:
        _run(torch, fn, arrays)
    with pytest.raises(Exception) as got:
        _run(mt, fn, arrays)
    assert isinstance(got.value, expected.type), f"{name}: {got.type.__name__} ({got.value}), PyTorch raises " \
                                                 f"{expected.type.__name__} ({expected.value})"


# ---- attributes, storage and the in-place fills ------------------------------------------------------

def _both(make):
    """The same tensor (and a view of it, as `make` takes it) in each library."""
    return make(torch), make(mt)


VIEWS = [
    ("contiguous", lambda L: L.arange(12.0).reshape(3, 4)),
    ("transposed", lambda L: L.arange(12.0).reshape(3, 4).t()),
    ("sliced", lambda L: L.arange(24.0).reshape(4, 6)[1:, ::2]),
    ("expanded", lambda L: L.arange(3.0).reshape(3, 1).expand(3, 4)),
    ("row", lambda L: L.arange(12.0).reshape(3, 4)[2]),
    ("zero_d", lambda L: L.tensor(2.5)),
    ("empty", lambda L: L.zeros(0, 3)),
    ("int32", lambda L: L.arange(6, dtype=L.int32).reshape(2, 3)[:, 1:]),
    ("uint8", lambda L: L.zeros(2, dtype=L.uint8)),
    ("bool", lambda L: L.ones(2, 2, dtype=L.bool)),
]


@pytest.mark.parametrize("make", [v[1] for v in VIEWS], ids=[v[0] for v in VIEWS])
def test_layout_attributes_match_torch(make):
    a, b = _both(make)
    assert b.stride() == a.stride()
    assert b.stride(-1) == a.stride(-1) if a.ndim else True
    assert b.storage_offset() == a.storage_offset()
    assert b.is_contiguous() == a.is_contiguous()
    assert (b.nbytes, b.itemsize) == (a.nbytes, a.itemsize)
    for name in ("is_cpu", "is_sparse", "is_quantized", "is_meta", "is_cuda"):
        assert getattr(b, name) == getattr(a, name), name
    for name in ("is_complex", "is_signed", "is_inference", "is_pinned", "is_shared", "get_device"):
        assert getattr(b, name)() == getattr(a, name)(), name
    assert b.is_same_size(b) and not b.is_same_size(mt.zeros(7))
    assert b.pin_memory() is b and b.share_memory_() is b
    assert (b.data_ptr() == 0) == (a.data_ptr() == 0)
    if a.numel() == 1:
        assert b.is_nonzero() == a.is_nonzero()
    else:
        with pytest.raises(RuntimeError):
            a.is_nonzero()
        with pytest.raises(RuntimeError):
            b.is_nonzero()


def test_data_ptr_moves_with_the_view_offset():
    x = mt.arange(12.0).reshape(3, 4)
    assert x[1].data_ptr() - x.data_ptr() == 4 * x.itemsize
    assert x[1:].storage_offset() == 4 and x.t().storage_offset() == 0


RESIZES = [((2, 2),), ((3, 3),), (6,), (0,), ((1, 2, 3),)]


@pytest.mark.parametrize("sizes", RESIZES, ids=str)
def test_resize_keeps_the_first_elements_and_grows_with_zeros(sizes):
    a, b = torch.arange(6.0), mt.arange(6.0)
    assert a.resize_(*sizes) is a and b.resize_(*sizes) is b
    assert tuple(b.shape) == tuple(a.shape)
    n = min(6, a.numel())
    np.testing.assert_array_equal(b.numpy().reshape(-1)[:n], a.numpy().reshape(-1)[:n])
    assert not b.numpy().reshape(-1)[n:].any()  # (PyTorch's are uninitialized; minitensor's are 0)


def test_resize_shrink_shares_memory_and_bumps_the_version():
    x = mt.arange(6.0)
    version = x._version
    y = x.view(2, 3)
    x.resize_(2, 2)
    assert x._version > version
    x[0, 0] = 9.0
    assert y[0, 0].item() == 9.0


def test_resize_errors_and_resize_as():
    for lib in (torch, mt):
        with pytest.raises(RuntimeError):
            lib.ones(2, requires_grad=True).resize_(3)
        with pytest.raises(RuntimeError):
            (lib.ones(2, requires_grad=True) * 1).resize_(2)
        assert tuple(lib.arange(6).resize_as_(lib.zeros(3, 2)).shape) == (3, 2)


def test_new_matches_torch():
    for args, kwargs in [((2, 3), {}), (([1, 2],), {}), (((2, 3),), {}), ((), {}), (("Size",), {}),
                         ((), {"size": (2, 3)}), ((), {"size": [4]})]:
        if args == ("Size",):
            a, b = torch.zeros(1, dtype=torch.float64).new(torch.Size([2, 3])), mt.zeros(1, dtype=mt.float64).new(
                mt.Size([2, 3]))
        else:
            a = torch.zeros(1, dtype=torch.float64).new(*args, **kwargs)
            b = mt.zeros(1, dtype=mt.float64).new(*args, **kwargs)
        assert tuple(b.shape) == tuple(a.shape) and str(b.dtype) == "minitensor.float64", (args, kwargs)
        if args and isinstance(args[0], (list, tuple)):
            np.testing.assert_array_equal(b.numpy(), a.numpy())
    for kwargs in ({}, {"other": True}):  # x.new(t): t's memory as a new tensor, of x's dtype only
        t = mt.ones(3)
        y = mt.zeros(1).new(other=t) if kwargs else mt.zeros(1).new(t)
        assert np.shares_memory(y.numpy(), t.numpy()) and y.tolist() == [1.0, 1.0, 1.0]
    for lib in (torch, mt):
        with pytest.raises(TypeError):
            lib.zeros(1).new(lib.zeros(2, dtype=lib.int64))
        with pytest.raises(TypeError):
            lib.zeros(1).new(2, size=(2, 3))


@pytest.mark.parametrize("dtype,args,lo,hi", [
    ("float32", (), 0, 2 ** 24), ("float64", (5,), 0, 4), ("int64", (-3, 3), -3, 2), ("uint8", (), 0, 255),
    ("bool", (), 0, 1), ("int32", (10, 12), 10, 11),
])
def test_random_draws_integers_in_torchs_range(dtype, args, lo, hi):
    mt.manual_seed(0)
    x = mt.zeros(400, dtype=getattr(mt, dtype))
    version = x._version
    assert x.random_(*args) is x and x._version > version
    v = x.numpy().astype(np.float64)
    assert v.min() >= lo and v.max() <= hi and np.all(v == np.round(v))
    if hi - lo < 20:
        assert len(np.unique(v)) == hi - lo + 1  # every value turns up in 400 draws
    mt.manual_seed(0)
    again = mt.zeros(400, dtype=getattr(mt, dtype)).random_(*args)
    np.testing.assert_array_equal(again.numpy(), x.numpy())  # minitensor's generator, seeded


def test_random_errors_as_torch():
    for lib in (torch, mt):
        with pytest.raises(RuntimeError):
            lib.zeros(2).random_(2, 1)
        with pytest.raises(RuntimeError):
            lib.zeros(2, dtype=lib.uint8).random_(0, 300)
        with pytest.raises(RuntimeError):
            lib.zeros(2, requires_grad=True).random_()


def test_shape_inplace_refuses_a_leaf_that_requires_grad_and_changes_nothing():
    for lib in (torch, mt):
        x = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf"):
            x.t_()
        assert tuple(x.shape) == (2, 3)
    x = mt.ones(2, 3)
    with pytest.raises(IndexError):
        x.unsqueeze_(5)
    assert tuple(x.shape) == (2, 3)


def test_inplace_index_ops_return_self_and_failed_calls_change_nothing():
    x = mt.zeros(2, 3)
    assert x.index_add_(0, mt.tensor([1]), mt.ones(1, 3)) is x
    assert x.t_() is x and tuple(x.shape) == (3, 2)
    before, version = x.numpy().copy(), x._version
    with pytest.raises(RuntimeError):
        x.index_add_(0, mt.tensor([7]), mt.ones(1, 2))
    with pytest.raises(RuntimeError):
        x.scatter_reduce_(0, mt.tensor([[0]]), mt.ones(1, 1), "bad")
    np.testing.assert_array_equal(x.numpy(), before)
    assert x._version == version


def test_scatter_reduce_prod_gradient_is_refused_not_wrong():
    x = mt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="prod"):
        mt.scatter_reduce(x, 0, mt.tensor([0, 0]), mt.ones(2), "prod")
    with mt.no_grad():
        out = mt.scatter_reduce(x, 0, mt.tensor([0, 0]), mt.tensor([2.0, 3.0]), "prod")
    np.testing.assert_array_equal(out.numpy(), [6.0, 1.0, 1.0])


def test_meshgrid_without_indexing_warns_like_torch():
    with pytest.warns(UserWarning):
        out = mt.meshgrid(mt.arange(2), mt.arange(3))
    assert tuple(out[0].shape) == (2, 3)

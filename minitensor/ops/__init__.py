"""Every op, grouped by kind. Importing this package attaches them to `Tensor` as methods."""
from . import elementwise, compare, reduce, shape, indexing, inplace, linalg, softmax, selection  # noqa: F401

"""Which k entries PyTorch's CPU `topk` picks when values tie at the cut: for `nn.utils.prune`.

Pruning the k smallest weights is well defined until several weights share the k-th magnitude (zeros
after a `remove`, weights built from `arange`, a constant init). Then PyTorch's choice comes from its
CPU kernel: the (value, index) pairs are ordered by `std::partial_sort` when k * 64 <= n and by
`std::nth_element` otherwise, with a comparator that puts NaN first (largest) or last (smallest), and
ties fall wherever those algorithms leave them: neither is stable. So a stable sort picks different
entries. `topk_indices` replays libstdc++'s two algorithms (the library of PyTorch's Linux wheels;
macOS' libc++ differs, so PyTorch itself differs there) step for step, but only when the cut falls
inside a run of equal values; otherwise the k entries are unique and a stable sort gives them.
Only the *set* of k indices is promised, not their order.
"""
from __future__ import annotations

from typing import Callable

import numpy as np


def topk_indices(values: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """The indices (int64) of the k largest (or smallest) entries of the flattened `values`, ties broken
    as PyTorch's CPU topk breaks them."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    n = flat.size
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k >= n:
        return np.arange(n, dtype=np.int64)
    if not np.isnan(flat).any():
        key = -flat if largest else flat
        order = np.argsort(key, kind="stable")
        if key[order[k - 1]] != key[order[k]]:  # no tie across the cut: the set is unique
            return order[:k].astype(np.int64)
    return np.asarray(_libstdcxx_select(flat.tolist(), k, largest), dtype=np.int64)


# ---- libstdc++'s selection algorithms, on a list of indices ordered by `before(i, j)` -------------------------

def _libstdcxx_select(v: list[float], k: int, largest: bool) -> list[int]:
    if largest:  # NaN counts as the largest
        def before(i: int, j: int) -> bool:
            a, b = v[i], v[j]
            return (a != a and b == b) or a > b
    else:
        def before(i: int, j: int) -> bool:
            a, b = v[i], v[j]
            return (a == a and b != b) or a < b
    q = list(range(len(v)))
    if k * 64 <= len(v):  # PyTorch's threshold for partial_sort (whose selection step is heap_select)
        _heap_select(q, 0, k, len(q), before)
    else:
        _nth_element(q, k - 1, before)
    return q[:k]


Before = Callable[[int, int], bool]


def _adjust_heap(q: list[int], first: int, hole: int, length: int, value: int, before: Before) -> None:
    """Sift the hole at `hole` down to a leaf, then push `value` up from there (std::__adjust_heap)."""
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if before(q[first + child], q[first + child - 1]):
            child -= 1
        q[first + hole] = q[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        q[first + hole] = q[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and before(q[first + parent], value):
        q[first + hole] = q[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    q[first + hole] = value


def _heap_select(q: list[int], first: int, middle: int, last: int, before: Before) -> None:
    """Leave in q[first:middle] the (middle - first) entries that come first (std::__heap_select)."""
    length = middle - first
    if length >= 2:  # std::make_heap
        for parent in range((length - 2) // 2, -1, -1):
            _adjust_heap(q, first, parent, length, q[first + parent], before)
    for i in range(middle, last):
        if before(q[i], q[first]):  # std::__pop_heap: the heap's top goes to i, q[i] into the heap
            value = q[i]
            q[i] = q[first]
            _adjust_heap(q, first, 0, length, value, before)


def _nth_element(q: list[int], nth: int, before: Before) -> None:
    """std::nth_element: introselect (median-of-three quickselect, heap_select past a depth limit), then an
    insertion sort of the last few entries."""
    first, last = 0, len(q)
    depth = 2 * (last.bit_length() - 1)  # 2 * floor(log2(n))
    while last - first > 3:
        if depth == 0:
            _heap_select(q, first, nth + 1, last, before)
            q[first], q[nth] = q[nth], q[first]
            return
        depth -= 1
        cut = _partition_pivot(q, first, last, before)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(q, first, last, before)


def _partition_pivot(q: list[int], first: int, last: int, before: Before) -> int:
    """Move the median of q[first + 1], the middle and q[last - 1] to q[first], then partition the rest
    around it, Hoare style (std::__unguarded_partition_pivot)."""
    a, b, c = first + 1, first + (last - first) // 2, last - 1
    if before(q[a], q[b]):
        m = b if before(q[b], q[c]) else (c if before(q[a], q[c]) else a)
    else:
        m = a if before(q[a], q[c]) else (c if before(q[b], q[c]) else b)
    q[first], q[m] = q[m], q[first]
    lo, hi, pivot = first + 1, last, q[first]
    while True:
        while before(q[lo], pivot):
            lo += 1
        hi -= 1
        while before(pivot, q[hi]):
            hi -= 1
        if lo >= hi:
            return lo
        q[lo], q[hi] = q[hi], q[lo]
        lo += 1


def _insertion_sort(q: list[int], first: int, last: int, before: Before) -> None:
    for i in range(first + 1, last):
        value = q[i]
        if before(value, q[first]):
            q[first + 1:i + 1] = q[first:i]
            q[first] = value
        else:
            j = i
            while before(value, q[j - 1]):
                q[j] = q[j - 1]
                j -= 1
            q[j] = value

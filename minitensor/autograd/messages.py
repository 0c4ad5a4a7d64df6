"""The two errors a node's backward can meet before it runs, worded once for `function` and `engine`."""


def freed_message(node):
    return (
        f"Trying to backward through the graph a second time (op '{node.name()}'): its saved "
        "tensors were freed after the first backward. Pass retain_graph=True to the first "
        ".backward() if you need to backward through it again."
    )


def modified_message(node, what, t, expected):
    return (
        f"one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {what}, a tensor of shape {list(t.shape)} read by the backward of '{node.name()}', is at "
        f"version {t._version}; expected version {expected} instead. Compute on a copy (`.clone()`) "
        "or do the in-place change after backward"
    )

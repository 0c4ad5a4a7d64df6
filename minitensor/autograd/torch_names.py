"""PyTorch's names for minitensor's graph nodes, as `repr(tensor.grad_fn)` and a tensor's repr show
them (`grad_fn=<MulBackward0>`), so a script prints what its tutorial shows. A node class not listed
is `<Name>Backward0`. Error messages, `explain()` and `detect_anomaly` keep minitensor's own names
(`node.name()`: 'MulBackward'), which say which Function ran.

One minitensor node may stand for several PyTorch nodes: the name given is that of the commonest
call (Reshape is `view`/`reshape`'s ViewBackward0, also for `flatten`, `unsqueeze` and `squeeze`;
Permute is PermuteBackward0, also for `t()` and `transpose`; Index is `x[0]`'s SelectBackward0;
Matmul is `mm`'s MmBackward0; Sum and Mean are the whole-tensor overloads, `...Backward0`).
"""

TORCH_NODE_NAMES = {
    "Add": "AddBackward0", "Sub": "SubBackward0", "Mul": "MulBackward0", "Div": "DivBackward0",
    "RoundedDiv": "DivBackward1", "Pow": "PowBackward0", "Neg": "NegBackward0", "Cast": "ToCopyBackward0",
    "Clamp": "ClampBackward1", "Matmul": "MmBackward0", "Linear": "AddmmBackward0", "Reshape": "ViewBackward0",
    "Permute": "PermuteBackward0", "Contiguous": "CloneBackward0", "Index": "SelectBackward0",
    "IndexPut": "IndexPutBackward0", "Dropout": "MulBackward0", "LayerNorm": "NativeLayerNormBackward0",
    "CrossEntropy": "NllLossBackward0", "Pad": "ConstantPadNdBackward0", "Norm": "LinalgVectorNormBackward0",
    "Logsumexp": "LogsumexpBackward0", "LogSoftmax": "LogSoftmaxBackward0",
}


def torch_node_name(class_name: str) -> str:
    return TORCH_NODE_NAMES.get(class_name, class_name + "Backward0")
